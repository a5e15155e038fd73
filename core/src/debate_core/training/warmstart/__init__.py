"""Supervised warm-start: reference debates that show the whole skill, and the cross-entropy
step on them (docs/training.md#warm-start).
"""
