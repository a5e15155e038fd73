"""Collapse monitoring (docs/training.md#collapse-alarms): the label-free figures of a batch of
debates (``monitor.py``) and the alarms that compare them with ``[alarms]`` (``alarms.py``)."""
