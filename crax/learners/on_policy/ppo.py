"""PPO: the unconstrained baseline (clip surrogate on Â_r; the cost is only measured)."""

from __future__ import annotations

from crax.learners.on_policy.family import ConstrainedPPO, PPOConfig


class PPO(ConstrainedPPO, name="ppo", config=PPOConfig, reads_bound=False):
    """Proximal policy optimization on the reward alone; no hook overridden."""

