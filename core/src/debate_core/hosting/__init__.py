"""A run file's debate hosted by another program: a verifiers environment (``debate-verifiers``),
a notebook, a harness of one's own (docs/verifiers.md). The host answers each agent turn (a
chat request: the prompt's messages and the turn's sampling); debate-core builds the debate from
the run file's plugins, scores it with the run's reward plugin and reads its answer under the
run's answer rule, as ``debate run`` and ``debate score`` do.

Modules: ``turns`` (a turn as a chat request and its reply), ``hosted`` (the debate of a run file).
"""

from __future__ import annotations

from debate_core.hosting.hosted import HostedDebate, HostedResult, load_problems
from debate_core.hosting.turns import AnswerTurn, ReplyPolicy, TurnReply, TurnRequest

__all__ = ["AnswerTurn", "HostedDebate", "HostedResult", "ReplyPolicy", "TurnReply", "TurnRequest", "load_problems"]
