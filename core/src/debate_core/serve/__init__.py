"""``debate serve``: a checkpoint's policy behind an OpenAI-compatible HTTP API
(docs/training.md#serving-a-policy), so that OpenAI clients, ``curl`` and the ``openai`` judge
can use a trained policy: the model ``debate`` answers with a test-time debate's final answer,
the policy's own name with one sample.

Modules: ``wire`` (requests read and checked, answers and errors written), ``streaming`` (the
server-sent events of a streamed answer), ``policy`` (what answers: samples or debates, through
``debate run``'s code), ``http_server`` (the standard library's HTTP server in front of one
asyncio loop).
"""

from __future__ import annotations

from debate_core.serve.http_server import EventLoopThread, PolicyServer, serving
from debate_core.serve.policy import DEBATE_MODEL, ServedPolicy
from debate_core.serve.wire import ApiError, ChatRequest, Completion, parse_chat_request

__all__ = [
    "DEBATE_MODEL",
    "ApiError",
    "ChatRequest",
    "Completion",
    "EventLoopThread",
    "PolicyServer",
    "ServedPolicy",
    "parse_chat_request",
    "serving",
]
