"""The checkpoint manifest format (docs/training.md#checkpoint-format): manifests are written in
the current version, and each version has a reader that gives the same checkpoint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from debate_core.runtime.checkpoint_format import (
    CHECKSUM_FIELD,
    FORMAT_VERSION,
    VERSION_FIELD,
    Checkpoint,
    CheckpointError,
    DataPosition,
    manifest_checksum,
    readable_versions,
)
from debate_core.runtime.manifests import read_checkpoint, write_checkpoint


def _written(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    checkpoint = Checkpoint(
        step=5, warmstart_steps=2, iteration=3, backend_state="tinker://run/step_5", data=DataPosition(1, 2), seed=9
    )
    path = write_checkpoint(tmp_path, checkpoint)
    return path, json.loads(path.read_text(encoding="utf-8"))


def _rewrite(path: Path, raw: dict[str, Any]) -> Path:
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


def test_manifests_are_written_in_the_current_version(tmp_path: Path) -> None:
    path, raw = _written(tmp_path)
    assert raw[VERSION_FIELD] == FORMAT_VERSION and "format" not in raw
    assert raw[CHECKSUM_FIELD] == manifest_checksum(raw)
    assert read_checkpoint(path).format_version == FORMAT_VERSION


def test_every_version_ever_written_has_a_reader() -> None:
    assert readable_versions() == tuple(range(1, FORMAT_VERSION + 1))


def test_a_version_2_manifest_reads_as_the_same_checkpoint(tmp_path: Path) -> None:
    path, raw = _written(tmp_path)
    current = read_checkpoint(path)
    old = {k: v for k, v in raw.items() if k not in (VERSION_FIELD, CHECKSUM_FIELD)} | {"format": 2}
    old[CHECKSUM_FIELD] = manifest_checksum(old)
    read = read_checkpoint(_rewrite(path, old))
    assert read.format_version == 2
    assert read == attrs.evolve(current, format_version=2)


def test_a_version_4_manifest_carries_the_runs_costs_and_a_version_3_one_none(tmp_path: Path) -> None:
    costs = {"tokens": {"prompt_sampled": 1200, "sampled": 80, "trained": 900}, "usd": 0.25}
    checkpoint = Checkpoint(
        step=5, warmstart_steps=2, iteration=3, backend_state="tinker://r/5", data=DataPosition(), seed=9, costs=costs
    )
    path = write_checkpoint(tmp_path, checkpoint)
    assert read_checkpoint(path).costs == costs
    raw = json.loads(path.read_text(encoding="utf-8"))
    old = {k: v for k, v in raw.items() if k not in ("costs", CHECKSUM_FIELD)} | {VERSION_FIELD: 3}
    old[CHECKSUM_FIELD] = manifest_checksum(old)
    read = read_checkpoint(_rewrite(path, old))
    assert (read.format_version, read.costs) == (3, {})


def test_a_version_1_manifest_has_no_checksum_to_check(tmp_path: Path) -> None:
    path, raw = _written(tmp_path)
    old = {k: v for k, v in raw.items() if k not in (VERSION_FIELD, CHECKSUM_FIELD, "files")} | {"format": 1}
    old["reason"] = "edited"  # nothing can tell: version 1 carries no checksum
    read = read_checkpoint(_rewrite(path, old))
    assert (read.format_version, read.reason, read.step) == (1, "edited", 5)


@pytest.mark.parametrize("version", [2, 3, 4])
def test_from_version_2_on_an_edited_manifest_is_refused(tmp_path: Path, version: int) -> None:
    path, raw = _written(tmp_path)
    edited = {k: v for k, v in raw.items() if k != VERSION_FIELD}
    edited["format" if version == 2 else VERSION_FIELD] = version
    edited["reason"] = "edited"
    with pytest.raises(CheckpointError, match="checksum does not match"):
        read_checkpoint(_rewrite(path, edited))


@pytest.mark.parametrize("version", [0, 99, "3", None])
def test_an_unknown_version_is_refused_naming_the_readable_ones(tmp_path: Path, version: object) -> None:
    path, raw = _written(tmp_path)
    raw[VERSION_FIELD] = version
    with pytest.raises(CheckpointError, match=r"unsupported checkpoint format version .*\(readable: 1, 2, 3, 4\)"):
        read_checkpoint(_rewrite(path, raw))
