"""Built-in datasets: ``arithmetic`` (seeded, the embedded task), ``jsonl`` (local files),
``huggingface`` (through the ``datasets`` library, imported only when a split is loaded), and the
maths presets ``gsm8k`` and ``math`` (the hub, a local directory or an installed package) and
``aime2025`` (a local directory or an installed package)."""

from __future__ import annotations

from debate_core.plugin import DatasetSpec, hookimpl
from debate_core.tasks import (
    Aime2025Dataset,
    Aime2025Options,
    ArithmeticDataset,
    ArithmeticOptions,
    Gsm8kDataset,
    HuggingFaceDataset,
    HuggingFaceOptions,
    JsonlDataset,
    JsonlDatasetOptions,
    MathDataset,
    MathOptions,
    PresetOptions,
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
        DatasetSpec(
            name="gsm8k",
            description="GSM8K grade-school maths (7,473 train / 1,319 test), from the hub, a directory or a package",
            build=Gsm8kDataset,
            options=PresetOptions,
        ),
        DatasetSpec(
            name="math",
            description="MATH competition maths (7,500 train; MATH-500 or 5,000 test), hub, directory or package",
            build=MathDataset,
            options=MathOptions,
        ),
        DatasetSpec(
            name="aime2025",
            description="AIME 2025 I and II (30 problems, both splits), offline from a package or a directory",
            build=Aime2025Dataset,
            options=Aime2025Options,
        ),
    ]
