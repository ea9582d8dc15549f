"""Joint-limit proximity: a cost as the agent's joints near the ends of their ranges, for any body
with limited joints."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco

from crax.core.context import Context
from crax.core.params import NON_NEGATIVE, Range, TaskParam
from crax.costs.base import Constraint

_LINEAR = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))


class JointLimit(Constraint):
    """``weight · Σ_j max(0, |q_j − m_j| / h_j − (1 − margin)) / margin`` over the limited hinge
    and slide joints of the bodies under ``prefix`` (the agent), m_j the middle of joint j's range
    and h_j its half-width.

    A joint costs nothing while it stays in the inner ``1 − margin`` of its range (measured from
    the middle), 1 at a limit and more past it (limits are soft in MuJoCo). Joint addresses and
    ranges are resolved once in :meth:`bind`; a body without limited joints does not fit.

    Args:
      weight: w.
      margin: the outer fraction of each half-range that costs, in (0, 1].
      prefix: the agent's name prefix in the scene.
      term: metric name (``cost/<term>``).
    """

    name = "JointLimit"
    params = {"weight": NON_NEGATIVE, "margin": Range(0.0, 1.0, lo_open=True)}

    def __init__(self, *, weight: float = 1.0, margin: float = 0.1, prefix: str = "agent/", term: str = "joint_limit"):
        if not 0.0 < margin <= 1.0:
            raise ValueError(f"margin must be in (0, 1], got {margin!r}")
        self.weight = TaskParam(jnp.asarray(weight, jnp.float32))
        self.margin = TaskParam(jnp.asarray(margin, jnp.float32))
        self.prefix = prefix
        self.term = term

    def bind(self, m: mujoco.MjModel) -> None:
        joints = [
            j for j in range(m.njnt)
            if m.jnt_limited[j] and int(m.jnt_type[j]) in _LINEAR
            and m.body(int(m.jnt_bodyid[j])).name.startswith(self.prefix)
        ]
        if not joints:
            raise ValueError(f"no limited hinge or slide joint under {self.prefix!r} (nothing to cost); "
                             "JointLimit fits bodies with joint ranges")
        lo, hi = m.jnt_range[joints].T
        self.joints = tuple(m.joint(j).name for j in joints)
        self.qpos_adr = tuple(int(m.jnt_qposadr[j]) for j in joints)
        self.middle = tuple(((lo + hi) / 2).tolist())
        self.half_range = tuple(((hi - lo) / 2).tolist())

    def proximity(self, ctx: Context) -> jax.Array:
        """``|q_j − m_j| / h_j`` per joint: 0 in the middle of the range, 1 at a limit."""
        q = ctx.data.qpos[jnp.asarray(self.qpos_adr)]
        return jnp.abs(q - jnp.asarray(self.middle, q.dtype)) / jnp.asarray(self.half_range, q.dtype)

    def cost(self, ctx: Context) -> jax.Array:
        margin = self.margin[...]
        return self.weight[...] * jnp.sum(jnp.maximum(0.0, self.proximity(ctx) - (1.0 - margin)) / margin)
