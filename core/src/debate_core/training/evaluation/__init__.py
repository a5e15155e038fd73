"""Evaluation: the evaluator, the evaluation the loop schedules every ``eval_every``, and the
judge benchmark (docs/training.md).
"""
