"""Safety-Gymnasium's gremlins: light free boxes welded to mocap bodies that circle on the clock."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

from crax.core import palette
from crax.core.mjx import mjx
from crax.core.scene import GROUP_HAZARD, no_collision
from crax.objects.free_boxes import FreeBoxes, yaw_quat

WELD_SOLREF = (0.02, 1.5)
"""Safety-Gymnasium's weld between each gremlin and its mocap body (``world.py``: ``solref=".02 1.5"``)."""


class SafetyGymGremlins(FreeBoxes):
    """``count`` gremlins as Safety-Gymnasium 1.0.0 builds them (``assets/mocaps/gremlins.py``, ``world.py``).

    Each gremlin is a free box ``<label>/<i>`` (:class:`~crax.objects.free_boxes.FreeBoxes`;
    half-size ``size``, ``density``: 8 mg; it touches the floor and the agent) welded (solref
    0.02 1.5) to a mocap body ``<label>/<i>/mocap``. Before every physics substep (:meth:`follow`, from the suite's
    :meth:`~crax.suites.base.Suite.substep`) the mocap body goes to ``anchor + travel·(sin t,
    cos t)`` at height ``size``, t being ``data.time``, and the weld pulls the box towards the
    pose ``size`` above it: each gremlin circles its layout position (its anchor) at 1 rad/s, all
    in phase, lifted ``size`` off the floor, starting with a jump of ``travel`` in +y at t = 0.

    Safety-Gymnasium compiles its model anew each episode, its mocap bodies at the origin and
    each weld's relative pose the box's layout pose; crax compiles once, so the weld holds the
    box ``size`` above its mocap body and each episode's anchor and yaw go into the mocap
    body's position and orientation instead: the same target pose, the same constraint.

    Args:
      count: number of gremlins.
      travel: radius of the circles (m).
      size: half-size of the boxes (m).
      density: kg/m³ of the boxes.
      keepout: placement clearance radius.
    """

    name = "SafetyGymGremlins"
    collidable = True
    group = GROUP_HAZARD
    rgba = palette.SAFETY_GYM["gremlin"]

    def __init__(self, count: int, *, travel: float = 0.35, size: float = 0.1, density: float = 0.001,
                 keepout: float = 0.4):
        super().__init__(count, size=size, density=density, keepout=keepout, z=size)
        self.travel = travel

    def add_box(self, spec: mujoco.MjSpec, name: str) -> None:
        """The box, then its mocap body ``<name>/mocap`` (a faint copy of the box, ``size`` above
        it, visual only) and the weld between them."""
        super().add_box(spec, name)
        rgba = list(self.rgba)
        mocap = spec.worldbody.add_body(name=f"{name}/mocap", mocap=True, pos=[0.0, 0.0, 0.0])
        target = mocap.add_geom(name=f"{name}/mocap", type=mujoco.mjtGeom.mjGEOM_BOX, size=[self.size] * 3,
                                pos=[0.0, 0.0, self.size], group=self.group, rgba=[*rgba[:3], 0.1 * rgba[3]])
        no_collision(target)
        # Anchor at the box's centre, torque scale 1, no relative pose (a zero quaternion): the compiler
        # takes the model's (the box ``size`` above the mocap body), as Safety-Gymnasium's welds take
        # theirs from its per-episode model. (MjSpec's default data is not the XML's defaults.)
        weld = spec.add_equality(type=mujoco.mjtEq.mjEQ_WELD, objtype=mujoco.mjtObj.mjOBJ_BODY,
                                 name1=f"{name}/mocap", name2=name, solref=list(WELD_SOLREF))
        data = np.zeros_like(weld.data)
        data[10] = 1.0
        weld.data = data

    def bind(self, m: mujoco.MjModel) -> None:
        super().bind(m)
        self.mocap_ids = tuple(int(m.body_mocapid[m.body(f"{self.label}/{i}/mocap").id]) for i in range(self.count))

    def write(self, data: mjx.Data, xy: jax.Array, *, kinematics: bool = True, yaw: jax.Array | None = None) -> mjx.Data:
        """Puts the boxes at rest on the floor at ``xy`` (count, 2), turned by ``yaw`` (count,)
        about z (None: 0), and their mocap bodies where the welds hold them there (``size`` below)."""
        data = super().write(data, xy, kinematics=kinematics, yaw=yaw)
        quat = yaw_quat(jnp.zeros(xy.shape[0], xy.dtype) if yaw is None else yaw)
        mocap = jnp.asarray(self.mocap_ids)
        return data.replace(
            mocap_pos=data.mocap_pos.at[mocap].set(jnp.concatenate([xy, jnp.zeros((xy.shape[0], 1), xy.dtype)], -1)),
            mocap_quat=data.mocap_quat.at[mocap].set(quat),
        )

    def follow(self, data: mjx.Data, anchors: jax.Array) -> mjx.Data:
        """Moves the mocap bodies to ``anchors + travel·(sin t, cos t)`` at height ``size``, t =
        ``data.time``: where Safety-Gymnasium's ``Gremlins.move`` puts them before a substep."""
        t = data.time
        offset = self.travel * jnp.stack([jnp.sin(t), jnp.cos(t)])
        pos = jnp.concatenate([anchors + offset, jnp.full((anchors.shape[0], 1), self.size, anchors.dtype)], axis=-1)
        return data.replace(mocap_pos=data.mocap_pos.at[jnp.asarray(self.mocap_ids)].set(pos))
