"""The run directory and what a run leaves in it: its layout and lock, resuming, the metrics
file, lost history, reward sidecars, evaluation records and figures, and which way each metric
is better (docs/architecture.md). The trainer writes it; the report and the CLI read it.
"""
