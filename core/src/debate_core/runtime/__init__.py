"""The trainer's runtime: an open backend session, retries of backend calls, and the trainer's
checkpoint manifests (with the resolution of a checkpoint argument to a backend state).

``backends/`` holds only the client contract and its implementations; everything here uses a
backend through that contract.
"""
