"""Datasets as plugins: the built-ins and a third-party dataset, reached through the
``debate_datasets`` hook and the registry (kind ``"dataset"``), as a run file reaches them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import attrs
import pytest

from debate_core.config import load_run_config, validate_components
from debate_core.errors import ConfigError, ConflictingPluginsError, UnknownComponentError
from debate_core.plugin import DatasetSpec, get_registry, hookimpl
from debate_core.records import Dataset, Problem
from debate_core.tasks.arithmetic import ArithmeticDataset, ArithmeticOptions

BUILTIN_DATASETS = {"arithmetic", "jsonl", "huggingface"}


@attrs.frozen(kw_only=True)
class CapitalsOptions:
    """Options of the third-party dataset below."""

    countries: tuple[str, ...] = ("France", "Japan")
    limit: int = attrs.field(default=10, validator=attrs.validators.ge(1))


_CAPITALS = {"France": "Paris", "Japan": "Tokyo", "Peru": "Lima"}


class Capitals:
    """A third-party dataset: what a plugin author would ship in their own package."""

    def __init__(self, options: CapitalsOptions) -> None:
        self.options = options

    def problems(self, split: str) -> Sequence[Problem]:
        chosen = self.options.countries[: self.options.limit]
        if split == "test":
            return []
        return [Problem(id=f"cap-{c}", question=f"What is the capital of {c}?", answer=_CAPITALS[c]) for c in chosen]


class CapitalsPlugin:
    """A plugin object implementing ``debate_datasets``, as an entry-point module would."""

    @hookimpl
    def debate_datasets(self) -> list[DatasetSpec]:
        return [DatasetSpec(name="capitals", description="capital cities", build=Capitals, options=CapitalsOptions)]


def test_builtin_datasets_are_registered_by_debate_core() -> None:
    registry = get_registry()
    assert BUILTIN_DATASETS.issubset(registry.names("dataset"))
    owners = {row.name: row.distribution for row in registry.listing("dataset")}
    assert all(owners[name] == "debate-core" for name in BUILTIN_DATASETS)
    for name in BUILTIN_DATASETS:
        spec = registry.resolve("dataset", name)
        assert isinstance(spec, DatasetSpec) and spec.kind == "dataset" and spec.options is not None


def test_arithmetic_built_through_the_registry_matches_the_class() -> None:
    options = {"difficulty": 1, "num_train": 5, "num_test": 2, "seed": 3}
    dataset = get_registry().build("dataset", "arithmetic", options, "dataset.options")
    assert isinstance(dataset, Dataset)
    direct = ArithmeticDataset(ArithmeticOptions(difficulty=1, num_train=5, num_test=2, seed=3))
    assert dataset.problems("train") == direct.problems("train")
    assert len(dataset.problems("train")) == 5 and len(dataset.problems("test")) == 2


def test_jsonl_built_through_the_registry_reads_the_file(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    path.write_text("\n".join(json.dumps({"q": f"{i} + 1?", "a": str(i + 1)}) for i in range(3)) + "\n")
    options = {"path": str(path), "question_field": "q", "answer_field": "a"}
    dataset = get_registry().build("dataset", "jsonl", options, "dataset.options")
    problems = dataset.problems("train")
    assert [(p.question, p.answer) for p in problems] == [("0 + 1?", "1"), ("1 + 1?", "2"), ("2 + 1?", "3")]


def test_builtin_dataset_options_are_checked_at_their_key_path() -> None:
    with pytest.raises(ConfigError, match=r"dataset\.options\.difficulty"):
        get_registry().build("dataset", "arithmetic", {"difficulty": 0}, "dataset.options")
    with pytest.raises(ConfigError, match=r"dataset\.options\.path: missing required key"):
        get_registry().build("dataset", "jsonl", {}, "dataset.options")


def test_third_party_dataset_is_found_built_and_removed() -> None:
    registry = get_registry()
    with registry.temporary_plugin(CapitalsPlugin(), name="capitals-plugin", distribution="debate-capitals"):
        assert "capitals" in registry.names("dataset") and BUILTIN_DATASETS.issubset(registry.names("dataset"))
        row = next(r for r in registry.listing("dataset") if r.name == "capitals")
        assert (row.distribution, row.status) == ("debate-capitals", "active")
        dataset = registry.build("dataset", "capitals", {"countries": ["Peru", "Japan"]}, "dataset.options")
        assert isinstance(dataset, Dataset)
        assert [(p.question, p.answer) for p in dataset.problems("train")] == [
            ("What is the capital of Peru?", "Lima"),
            ("What is the capital of Japan?", "Tokyo"),
        ]
        assert registry.resolve("dataset", "capitals").make().problems("train")[0].answer == "Paris"
    assert "capitals" not in registry.names("dataset")
    with pytest.raises(UnknownComponentError, match="unknown dataset 'capitals'"):
        registry.resolve("dataset", "capitals")


def test_run_file_picks_a_third_party_dataset_and_checks_its_options(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text(
        '[dataset]\nname = "capitals"\n[dataset.options]\ncountries = ["Peru"]\n\n'
        '[[curriculum]]\niterations = 1\ndataset = "arithmetic"\n'
    )
    registry = get_registry()
    with registry.temporary_plugin(CapitalsPlugin(), name="capitals-plugin"):
        config = load_run_config(path, registry=get_registry())
        resolved = validate_components(config, get_registry())
        assert resolved["dataset"] == CapitalsOptions(countries=("Peru",))
        assert resolved["curriculum[0].dataset"] == ArithmeticOptions()
        path.write_text('[dataset]\nname = "capitals"\n[dataset.options]\ncountry = ["Peru"]\n')
        with pytest.raises(ConfigError, match=r"dataset\.options\.country: unknown key \(did you mean 'countries'\?\)"):
            load_run_config(path, registry=get_registry())
        path.write_text('[dataset]\nname = "capitals"\n[dataset.options]\nlimit = 0\n')
        with pytest.raises(ConfigError, match=r"dataset\.options\.limit: must be >= 1: 0"):
            load_run_config(path, registry=get_registry())


def test_a_third_party_dataset_cannot_shadow_a_builtin_silently() -> None:
    class Impostor:
        @staticmethod
        @hookimpl
        def debate_datasets() -> list[DatasetSpec]:
            return [DatasetSpec(name="arithmetic", description="impostor", build=lambda _: None)]

    impostor = Impostor()
    registry = get_registry()
    with registry.temporary_plugin(impostor, name="impostor", distribution="debate-impostor"):
        with pytest.raises(ConflictingPluginsError) as info:
            registry.resolve("dataset", "arithmetic")
        assert "debate-core" in str(info.value) and "debate-impostor" in str(info.value)
        assert "arithmetic" not in {spec.name for spec in registry.specs("dataset")}
    assert registry.resolve("dataset", "arithmetic").description.startswith("seeded arithmetic")
