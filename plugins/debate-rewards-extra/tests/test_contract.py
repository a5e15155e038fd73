"""The core's reward contract suite on each reward of this distribution, through its entry point."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from debate_core.testing import RewardContract


class TestBradleyTerry(RewardContract):
    reward_name = "bradley_terry"


class TestBradleyTerryLeaveOneOut(RewardContract):
    reward_name = "bradley_terry"
    reward_options: ClassVar[Mapping[str, Any]] = {"leave_one_out": True}


class TestCopeland(RewardContract):
    reward_name = "copeland"


class TestElo(RewardContract):
    reward_name = "elo"
    reward_options: ClassVar[Mapping[str, Any]] = {"update": "vote"}


class TestLengthDebiasOverV2(RewardContract):
    reward_name = "length_debias"
    reward_options: ClassVar[Mapping[str, Any]] = {"inner": {"name": "v2"}, "measure": "chars", "text_field": "text"}
