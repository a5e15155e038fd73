"""Built-in datasets: ``arithmetic`` (seeded, the embedded task), ``jsonl`` (local files) and
``huggingface`` (through the ``datasets`` library, imported only when a split is loaded)."""

from __future__ import annotations

from debate_core.components import DatasetSpec
from debate_core.hookspecs import hookimpl
from debate_core.tasks import (
    ArithmeticDataset,
    ArithmeticOptions,
    HuggingFaceDataset,
    HuggingFaceOptions,
    JsonlDataset,
    JsonlDatasetOptions,
)


@hookimpl
def debate_datasets() -> list[DatasetSpec]:
    return [
        DatasetSpec(
            name="arithmetic",
            description="seeded arithmetic problems, difficulty 1 (one-digit +) to 6 (two-digit x one-digit)",
            build=ArithmeticDataset,
            options=ArithmeticOptions,
        ),
        DatasetSpec(
            name="jsonl",
            description="a local JSON Lines file with configurable question/answer fields",
            build=JsonlDataset,
            options=JsonlDatasetOptions,
        ),
        DatasetSpec(
            name="huggingface",
            description="a Hugging Face dataset (needs the 'datasets' package and access to it)",
            build=HuggingFaceDataset,
            options=HuggingFaceOptions,
        ),
    ]
