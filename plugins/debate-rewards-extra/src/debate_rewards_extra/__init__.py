"""More peer rewards for debate-core, registered through the ``debate`` entry-point group.

- ``bradley_terry``: regularised maximum-likelihood strengths from every pairwise vote.
- ``copeland``: pairwise-majority wins minus losses.
- ``elo``: Elo ratings updated round by round (order-dependent).
- ``length_debias``: wraps another reward and removes its linear dependence on answer length.
"""

from __future__ import annotations

from debate_rewards_extra.bradley_terry import BradleyTerryOptions, BradleyTerryReward, fit_strengths
from debate_rewards_extra.copeland import CopelandOptions, CopelandReward, copeland_scores
from debate_rewards_extra.elo import EloOptions, EloReward, elo_ratings
from debate_rewards_extra.length_debias import LengthDebiasOptions, LengthDebiasReward, remove_length_slope

__version__ = "0.1.0"

__all__ = [
    "BradleyTerryOptions",
    "BradleyTerryReward",
    "CopelandOptions",
    "CopelandReward",
    "EloOptions",
    "EloReward",
    "LengthDebiasOptions",
    "LengthDebiasReward",
    "copeland_scores",
    "elo_ratings",
    "fit_strengths",
    "remove_length_slope",
]
