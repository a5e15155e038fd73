"""What each evaluation metric means for a reader: which way is better, whether it is a proportion
of trials, what it counts over, and whether it is itself a count (docs/training.md#reading-the-figures).

One home for these facts: the report, ``debate compare``, ``debate eval`` and the end-of-training
summary colour a change, draw a Wilson interval and withhold an SE-based verdict from them. A
metric with no entry has no direction (its change is not coloured) and no declared count; a
record may still give its count as ``<metric>_n``. Add an entry here with a new metric.
"""

from __future__ import annotations

import enum
import fnmatch
from collections.abc import Mapping

import attrs


class Direction(enum.Enum):
    """Which way a metric improves."""

    HIGHER = "higher"
    LOWER = "lower"


PROBLEMS = "problems"
"""``observations`` of a metric measured once per evaluation problem (``<dataset>/num_problems``)."""


@attrs.frozen
class MetricFacts:
    """What a metric is. ``pattern`` matches the name without its ``eval_<dataset>/`` prefix
    (``fnmatch``: ``*`` is any text, ``/`` included)."""

    pattern: str
    better: Direction | None = None
    """Which way is better; ``None``: neither (a diagnostic), so a change of it is not coloured."""
    proportion: bool = False
    """A share of 0/1 trials (its interval is Wilson's, over :attr:`observations` trials)."""
    observations: str | None = None
    """What it is measured over: :data:`PROBLEMS`, or the sibling metric (same mode, e.g.
    ``judge_decidable_votes`` beside ``debate/judge_accuracy``) holding the count."""
    count: bool = False
    """A count itself: shown as a whole number, its change never coloured."""


METRICS: tuple[MetricFacts, ...] = (
    MetricFacts("num_problems", count=True),
    MetricFacts("*/judge_decidable_votes", count=True),
    MetricFacts("*/judge_ties", count=True),
    MetricFacts("*/agents_answering_twice", count=True),
    MetricFacts("*/consensus_turns", count=True),
    MetricFacts("judge/num_pairs", count=True),
    MetricFacts("judge/own_right_judgements", count=True),
    MetricFacts("judge/own_wrong_judgements", count=True),
    MetricFacts("judge/*/num_pairs", count=True),
    MetricFacts("judge/*/own_right_judgements", count=True),
    MetricFacts("judge/*/own_wrong_judgements", count=True),
    MetricFacts("judge/own/all_right_problems", count=True),
    MetricFacts("judge/own/no_wrong_answer_problems", count=True),
    MetricFacts("debate_minus_direct", Direction.HIGHER, observations=PROBLEMS),
    MetricFacts("debate_minus_cons_matched", Direction.HIGHER, observations=PROBLEMS),
    MetricFacts("runoff_minus_cons_matched", Direction.HIGHER, observations=PROBLEMS),
    MetricFacts("runoff/candidates", count=True),
    MetricFacts("*/cons_matched", Direction.HIGHER, proportion=True, observations=PROBLEMS),
    MetricFacts("*/cons_matched_k", count=True),
    MetricFacts("*/cons_matched_k_needed", count=True),
    MetricFacts("*/opponent_correct"),
    MetricFacts("*/answer_correct", Direction.HIGHER, proportion=True, observations=PROBLEMS),
    MetricFacts("*/rule/*/correct", Direction.HIGHER, proportion=True, observations=PROBLEMS),
    MetricFacts("*/round1_cons@*", Direction.HIGHER, proportion=True, observations=PROBLEMS),
    MetricFacts(
        "*/round1_pass@*", Direction.HIGHER, proportion=True, observations=PROBLEMS
    ),  # the fixed opponent's accuracy: context, not a goal
    MetricFacts("*/correct", Direction.HIGHER, observations=PROBLEMS),
    MetricFacts("*/avg@*", Direction.HIGHER, observations=PROBLEMS),
    MetricFacts("*/cons@*", Direction.HIGHER, proportion=True, observations=PROBLEMS),
    MetricFacts("*/pass@*", Direction.HIGHER, proportion=True, observations=PROBLEMS),
    MetricFacts("*/response_correct", Direction.HIGHER),
    MetricFacts("*/judge_accuracy", Direction.HIGHER, proportion=True, observations="judge_decidable_votes"),
    MetricFacts("*/wrong_to_right", Direction.HIGHER, proportion=True, observations="agents_answering_twice"),
    MetricFacts("*/right_to_wrong", Direction.LOWER, proportion=True, observations="agents_answering_twice"),
    MetricFacts("*/consensus_accuracy", Direction.HIGHER, proportion=True, observations="consensus_turns"),
    # the judge benchmark (training/evaluation/judge_benchmark.py): a tie is a wrong verdict
    MetricFacts("judge/accuracy", Direction.HIGHER, observations="num_pairs"),
    MetricFacts("judge/consistency", Direction.HIGHER, proportion=True, observations="num_pairs"),
    MetricFacts("judge/flip_rate", Direction.LOWER, proportion=True, observations="num_pairs"),
    MetricFacts("judge/tie_rate", Direction.LOWER),
    MetricFacts("judge/no_verdict_rate", Direction.LOWER),
    MetricFacts("judge/own_correct", Direction.HIGHER),
    MetricFacts("judge/accuracy_own_right", Direction.HIGHER, proportion=True, observations="own_right_judgements"),
    MetricFacts("judge/accuracy_own_wrong", Direction.HIGHER, proportion=True, observations="own_wrong_judgements"),
    MetricFacts("judge/own_correct_round1", Direction.HIGHER),
    MetricFacts("judge/own_correct_shift", Direction.HIGHER),
    # the other families of the judge benchmark (training/evaluation/judge_families.py): judge/<family>/<metric>;
    # for two right answers a tie is the right verdict
    MetricFacts("judge/both_right/tie_rate", Direction.HIGHER),
    MetricFacts("judge/*/accuracy", Direction.HIGHER, observations="num_pairs"),
    MetricFacts("judge/*/consistency", Direction.HIGHER, proportion=True, observations="num_pairs"),
    MetricFacts("judge/*/flip_rate", Direction.LOWER, proportion=True, observations="num_pairs"),
    MetricFacts("judge/*/tie_rate", Direction.LOWER),
    MetricFacts("judge/*/no_verdict_rate", Direction.LOWER),
    MetricFacts("judge/*/own_correct", Direction.HIGHER),
    MetricFacts("judge/*/own_correct_round1", Direction.HIGHER),
    MetricFacts("judge/*/own_correct_shift", Direction.HIGHER),
    MetricFacts("judge/*/accuracy_own_right", Direction.HIGHER, proportion=True, observations="own_right_judgements"),
    MetricFacts("judge/*/accuracy_own_wrong", Direction.HIGHER, proportion=True, observations="own_wrong_judgements"),
    MetricFacts("*/format", Direction.HIGHER),
    MetricFacts("*parse_error", Direction.LOWER),
    MetricFacts("*/comparison_rate", Direction.HIGHER),
    MetricFacts("*_accuracy", Direction.HIGHER),
)
"""Every declared metric, the first match wins (so a specific pattern goes before a general one)."""


def metric_facts(name: str) -> MetricFacts | None:
    """The facts of ``name`` (with or without its ``eval_<dataset>/`` prefix), or ``None``."""
    short = name.split("/", 1)[1] if name.startswith("eval_") and "/" in name else name
    return next((facts for facts in METRICS if fnmatch.fnmatchcase(short, facts.pattern)), None)


def observation_count(metrics: Mapping[str, object], name: str) -> int | None:
    """How many observations ``name`` (a full ``eval_<dataset>/...`` name) in ``metrics`` was measured
    over: ``<name>_n`` when recorded, else what its :class:`MetricFacts` names; ``None``: unknown."""
    candidates = [f"{name}_n"]
    facts = metric_facts(name)
    if facts is not None and facts.observations is not None:
        dataset = name.split("/", 1)[0]
        if facts.observations == PROBLEMS:
            candidates.append(f"{dataset}/num_problems")
        else:
            candidates.append(f"{name.rsplit('/', 1)[0]}/{facts.observations}")
    for candidate in candidates:
        value = metrics.get(candidate)
        if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0 and value == value:
            return int(value)
    return None
