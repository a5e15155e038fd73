"""The ``debate`` entry point of debate-rewards-extra: registers its four rewards."""

from __future__ import annotations

from debate_core import RewardSpec, hookimpl
from debate_rewards_extra.bradley_terry import BradleyTerryOptions, BradleyTerryReward
from debate_rewards_extra.copeland import CopelandOptions, CopelandReward
from debate_rewards_extra.elo import EloOptions, EloReward
from debate_rewards_extra.length_debias import LengthDebiasOptions, build_length_debias


@hookimpl
def debate_rewards() -> list[RewardSpec]:
    return [
        RewardSpec(
            name="bradley_terry",
            description="L2-regularised Bradley-Terry strengths from all pairwise votes (centred log-odds)",
            build=BradleyTerryReward,
            options=BradleyTerryOptions,
        ),
        RewardSpec(
            name="copeland",
            description="pairs won minus pairs lost on net vote margin, divided by N-1",
            build=CopelandReward,
            options=CopelandOptions,
        ),
        RewardSpec(
            name="elo",
            description="Elo ratings updated round by round from the votes (order-dependent), / scale",
            build=EloReward,
            options=EloOptions,
        ),
        RewardSpec(
            name="length_debias",
            description="wraps another reward and removes its within-debate linear slope on answer length",
            build=build_length_debias,
            options=LengthDebiasOptions,
        ),
    ]
