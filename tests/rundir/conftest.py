"""The trainer harness's fixtures."""

from tests.training.harness_fixtures import registry, straight_run, uninterrupted

__all__ = ["registry", "straight_run", "uninterrupted"]
