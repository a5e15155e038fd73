"""The local backend's sampling: the batching engine, the fast and generic decoders, weight
snapshots, the prefix cache and groups, stop sequences, worker threads and futures.
"""
