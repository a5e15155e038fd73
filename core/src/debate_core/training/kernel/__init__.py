"""The shared training kernel: running debates (``rollouts``), turning trajectories into Datums
(``datum``), the policy update (``policy_update`` over ``chunked_update``), the metrics of
debates and updates (``debate_metrics``) and the scripted reference debates
(``reference_debates``), used by RL, the warm-start and evaluation alike (docs/architecture.md).
"""
