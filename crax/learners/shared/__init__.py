"""The parts every learner family shares, one implementation each: :class:`~crax.learners.shared.learner.Learner`
(constraint, rule, normalizer, acting), the run and constraint fields (:mod:`~crax.learners.shared.config`), the
trainer base with the rollout, evaluation and run plumbing (:mod:`~crax.learners.shared.trainer`), networks
and their image encoders (:mod:`~crax.learners.shared.encoders`), frame stacking, optimizers and chunked gradients. The constraint rules are their own package, :mod:`crax.learners.rules`."""
