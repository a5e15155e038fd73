"""One RL iteration and what is RL's own: the batch, the advantages' use, the KL penalty, the
iteration's metrics and the transcripts it logs (docs/training.md#one-iteration);
the rollouts, Datums and the update it runs are the shared kernel's (``training.kernel``),
its collapse figures and alarms ``training.collapse``'s (the run context holds the alarms).
"""
