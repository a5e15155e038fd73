"""The split names every dataset understands."""

from __future__ import annotations

from debate_core.tasks.errors import DatasetError

SPLITS: tuple[str, ...] = ("train", "test")
"""The split names every dataset understands."""


def check_split(split: str, dataset: str) -> None:
    """Raise ``DatasetError`` unless ``split`` is ``train`` or ``test``."""
    if split not in SPLITS:
        raise DatasetError(f"{dataset}: unknown split {split!r}; splits are: {', '.join(SPLITS)}")
