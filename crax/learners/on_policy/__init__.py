"""The PPO family: :class:`~crax.learners.on_policy.family.ConstrainedPPO` (actor, reward and cost critics,
hooks) and its trainer (:mod:`~crax.learners.on_policy.trainer`: GAE, the violation, the epochs), and the
learners built on it: ``ppo``, ``ppo-lag``, ``ppo-pid``, ``cppo-pid``, ``ppo-cost``, ``ppo-saute``,
``ppo-simmer-pid``, ``ppo-early-terminated``, ``p3o``, ``focops``, ``cup``, ``ipo``, ``pdo``."""
