"""The task side of a debate: problem sources (arithmetic, JSONL files, Hugging Face
datasets) and answer graders (``\\boxed{}`` answers, math-verify, none).

The built-in plugins in ``debate_core.builtin.datasets`` and ``debate_core.builtin.graders``
register these; nothing here imports ``datasets`` or ``math_verify`` at module level.
"""
