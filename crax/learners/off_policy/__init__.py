"""The off-policy family: :class:`~crax.learners.off_policy.family.OffPolicyLearner` (actor, twin reward critics,
cost critic, targets), its trainer (:mod:`~crax.learners.off_policy.trainer`: n-step transitions into the replay
buffer, gradient steps) and ``sac``, ``ddpg``, ``td3`` with their Lagrangian and PID twins, and ``wcsac`` (SAC-Lag on the CVaR of a
Gaussian cost return)."""
