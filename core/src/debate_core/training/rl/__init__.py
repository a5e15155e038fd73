"""One RL iteration: the batch's debates (rollouts), their scores and Datums, the pipelined
update, the iteration's metrics and the transcripts it logs (docs/training.md#one-iteration).
"""
