"""The trust-region family on the PPO family's trainer: :class:`~crax.learners.trust_region.family.TrustRegionPPO`
(conjugate gradients, the line search, the critics' epochs) and ``trpo``, ``trpo-lag``, ``trpo-pid``,
``trpo-saute``, ``trpo-simmer-pid``, ``trpo-early-terminated``, ``cpo``, ``pcpo``, ``crpo``, ``rcpo``."""
