"""The local backend's sampling: the sampling client (``client.py``), the batching engine, the
fast and generic decoders, weight snapshots, the prefix cache and stop sequences. The worker
threads, futures and prefix groups it shares with the training client are one level up.
"""
