"""Offline tools: run by hand or at build time, never imported by a run."""
