"""The task side of a debate: problem sources (arithmetic, JSONL files, Hugging Face
datasets) and answer graders (``\\boxed{}`` answers, math-verify, none).

The built-in plugins in ``debate_core.builtin.datasets`` and ``debate_core.builtin.graders``
register these; nothing here imports ``datasets`` or ``math_verify`` at module level. The
interfaces (``Dataset``, ``Grader``) and records (``Problem``, ``Grade``) are in
``debate_core.records``.
"""

from __future__ import annotations

from debate_core.tasks.aime import Aime2025Dataset, Aime2025Options
from debate_core.tasks.answers import answers_match, extract_last_boxed, normalise_answer
from debate_core.tasks.arithmetic import LEVELS, ArithmeticDataset, ArithmeticOptions
from debate_core.tasks.errors import DatasetError
from debate_core.tasks.fields import FieldMapping, RecordSourceOptions
from debate_core.tasks.graders import (
    BoxedGrader,
    MathVerifyGrader,
    NoGrader,
    build_boxed,
    build_math_verify,
    build_none,
)
from debate_core.tasks.huggingface import HuggingFaceDataset, HuggingFaceOptions
from debate_core.tasks.jsonl import JsonlDataset, JsonlDatasetOptions
from debate_core.tasks.math_presets import Gsm8kDataset, MathDataset, MathOptions, PresetOptions
from debate_core.tasks.splits import SPLITS, check_split
from debate_core.tasks.worked_solutions import worked_solution

__all__ = [
    "LEVELS",
    "SPLITS",
    "Aime2025Dataset",
    "Aime2025Options",
    "ArithmeticDataset",
    "ArithmeticOptions",
    "BoxedGrader",
    "DatasetError",
    "FieldMapping",
    "Gsm8kDataset",
    "HuggingFaceDataset",
    "HuggingFaceOptions",
    "JsonlDataset",
    "JsonlDatasetOptions",
    "MathDataset",
    "MathOptions",
    "MathVerifyGrader",
    "NoGrader",
    "PresetOptions",
    "RecordSourceOptions",
    "answers_match",
    "build_boxed",
    "build_math_verify",
    "build_none",
    "check_split",
    "extract_last_boxed",
    "normalise_answer",
    "worked_solution",
]
