"""The trainer harness's fixtures, for the guard's tests that train."""

from tests.training.harness_fixtures import registry

__all__ = ["registry"]
