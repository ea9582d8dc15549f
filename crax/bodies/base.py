"""The `Body` component: a robot's MJCF, its action scaling, own observation and health rule."""

from __future__ import annotations

import importlib.resources
import importlib.resources.abc
from typing import ClassVar

import jax
import jax.numpy as jnp
import mujoco
from flax import nnx

from crax.core.mjx import mjx
from crax.core.scene import Category, collide_as

NAVIGATION = "navigation"
"""Kind of bodies that move on the plane and can be placed at any (x, y, yaw): Goal, Button, ..."""
LOCOMOTION = "locomotion"
"""Kind of bodies with a locomotion reward (forward velocity, healthy bonus): Velocity."""
PLANAR = "planar"
"""Kind of bodies constrained to the x-z plane (HalfCheetah, Walker2d, Hopper): forward is +x."""
ARM = "arm"
"""Kind of fixed-base arms that reach for targets on a table (Reacher): Reach."""
SAFETY_GYM = "safety_gym"
"""Kind of bodies built to Safety-Gymnasium 1.0.0's definitions, for its tasks (crax.suites.safety_gym)."""
KINDS = (NAVIGATION, LOCOMOTION, PLANAR, ARM, SAFETY_GYM)

SAFETY_GYM_SOLVER = (10, 10)
"""The MJX solver budget (``solver_iterations``, ``ls_iterations``) of the Safety-Gymnasium bodies.
Safety-Gymnasium keeps MuJoCo's default, 100 Newton iterations and 50 line-search steps to a
tolerance of 1e-8, which MuJoCo's solver meets after a few iterations; under ``vmap`` MJX's loop
runs every env of a batch as long as its slowest one, so the budget is most of a batched step's
cost. At 10/10 every recorded Safety-Gymnasium rollout steps as at 100/50, to the last digit
(docs/safety_gymnasium/speed.md, "The solver budget"), the Racecar's excepted;
``crax.make(id, solver_iterations=100, ls_iterations=50)`` runs Safety-Gymnasium's."""


class Body(nnx.Module):
    """A robot: its MJCF fragment plus what only the robot knows.

    Subclasses set the class attributes and implement :meth:`observe` (and :meth:`place` for a
    navigation body); the scene attaches the MJCF under the prefix ``agent/`` and calls
    :meth:`bind` with the compiled model. The contract is checked when the class is registered
    and when a task is built (:mod:`crax.plugins.validate`); docs/plugins.md walks through it.

    Class attributes:
      name: registry name, used in env ids (``Point`` in ``PointGoal1``).
      kinds: which suites accept it (:data:`NAVIGATION`, :data:`LOCOMOTION`, :data:`PLANAR`,
        :data:`ARM`); a suite accepts a body whose kinds include all of the suite's ``requires``.
      asset: MJCF file of the body, a path relative to ``asset_package`` (or override :meth:`mjcf`
        to build a ``mujoco.MjSpec`` in code). Its root body must be named ``torso``.
      asset_package: the package that holds ``asset``, read with ``importlib.resources`` (a plugin
        sets its own package, e.g. ``"my_robots"``); None: crax's own ``crax/bodies/assets``.
      timestep, frame_skip: physics step and substeps per control step.
      integrator: MuJoCo's integrator (``mujoco.mjtIntegrator``; default Euler, MuJoCo's own).
      solver_iterations, ls_iterations: constraint-solver budget; small bodies need little.
      reset_noise: half-width of the uniform noise on joint positions and velocities at reset.
      healthy_z: torso height range outside which the episode terminates (None: never).
      healthy_reward, ctrl_cost: locomotion reward terms (see docs/SPEC.md section 3, Velocity).
      velocity_threshold: base speed limit τ of the Velocity suite (None: not measured yet).
      floor_contact: whether its geoms collide with the floor.
      obs_keys: the parts of :meth:`observe`'s output as (name, size) pairs, in order (the
        Safety-Gymnasium bodies: its observation keys); empty where a body does not name them.
      feet: names of the foot sites (without the ``agent/`` prefix), for suites that cost foot
        placement or contact (Pathway, SpiderLegs); empty for bodies without feet.
      reads_post_constraint: whether :meth:`observe` reads the body accelerations and forces of
        MuJoCo's ``mj_rnePostConstraint`` (:func:`crax.core.physics.post_constraint`), as a
        :class:`crax.core.component.Component` declares it.
    """

    name: ClassVar[str]
    kinds: ClassVar[frozenset[str]] = frozenset()
    asset: ClassVar[str]
    asset_package: ClassVar[str | None] = None
    timestep: ClassVar[float] = 0.01
    frame_skip: ClassVar[int] = 5
    integrator: ClassVar[int] = int(mujoco.mjtIntegrator.mjINT_EULER)
    solver_iterations: ClassVar[int] = 4
    ls_iterations: ClassVar[int] = 8
    reset_noise: ClassVar[float] = 0.1
    healthy_z: ClassVar[tuple[float, float] | None] = None
    healthy_reward: ClassVar[float] = 0.0
    ctrl_cost: ClassVar[float] = 0.0
    velocity_threshold: ClassVar[float | None] = None
    floor_contact: ClassVar[bool] = True
    feet: ClassVar[tuple[str, ...]] = ()
    obs_keys: ClassVar[tuple[tuple[str, int], ...]] = ()
    reads_post_constraint: ClassVar[bool] = False

    prefix: str = "agent/"

    @classmethod
    def asset_file(cls) -> importlib.resources.abc.Traversable:
        """Where ``asset`` is read from: in ``asset_package``, or crax's ``crax/bodies/assets``."""
        root = importlib.resources.files(cls.asset_package or "crax.bodies")
        return (root if cls.asset_package else root / "assets").joinpath(*cls.asset.split("/"))

    def mjcf_assets(self) -> dict[str, bytes]:
        """The files ``asset`` refers to (meshes, textures), by the names it gives them: none by default."""
        return {}

    def mjcf(self) -> mujoco.MjSpec:
        """The body's MJCF (``asset`` in ``asset_package``, with :meth:`mjcf_assets`) as a fresh spec;
        its collidable geoms (contype or conaffinity nonzero) get the agent's collision category:
        ``AGENT`` if ``floor_contact`` else ``AGENT_FLOATING``."""
        spec = mujoco.MjSpec.from_string(self.asset_file().read_text(), assets=self.mjcf_assets())
        category = Category.AGENT if self.floor_contact else Category.AGENT_FLOATING
        for geom in spec.geoms:
            if geom.contype or geom.conaffinity:
                collide_as(geom, category)
        return spec

    def bind(self, m: mujoco.MjModel) -> None:
        """Resolves names to static ids in the compiled scene model."""
        torso = m.body(self.prefix + "torso")
        self.torso_id = int(torso.id)
        joints = [j for j in range(m.njnt) if m.body(int(m.jnt_bodyid[j])).name.startswith(self.prefix)]
        self.qpos_adr = (int(m.jnt_qposadr[joints[0]]), int(m.jnt_qposadr[joints[-1]]) + _qpos_width(m, joints[-1]))
        self.qvel_adr = (int(m.jnt_dofadr[joints[0]]), int(m.jnt_dofadr[joints[-1]]) + _dof_width(m, joints[-1]))
        self.ctrl_range = tuple(map(tuple, m.actuator_ctrlrange.tolist()))
        self.qpos0 = tuple(m.qpos0[slice(*self.qpos_adr)].tolist())

    @property
    def action_size(self) -> int:
        return len(self.ctrl_range)

    @property
    def dt(self) -> float:
        """Control step: physics timestep × frame skip."""
        return self.timestep * self.frame_skip

    def qpos(self, data: mjx.Data) -> jax.Array:
        return data.qpos[slice(*self.qpos_adr)]

    def qvel(self, data: mjx.Data) -> jax.Array:
        return data.qvel[slice(*self.qvel_adr)]

    def ctrl(self, action: jax.Array) -> jax.Array:
        """Maps an action in [-1, 1]^n to the actuators' control ranges (clipped to [-1, 1] first)."""
        return self.ctrl_units(jnp.clip(action, -1.0, 1.0))

    def ctrl_units(self, action: jax.Array) -> jax.Array:
        """The affine map of [-1, 1]^n onto the actuators' control ranges, unclipped."""
        lo, hi = jnp.asarray(self.ctrl_range, jnp.float32).T
        return lo + (action + 1.0) * 0.5 * (hi - lo)

    def initial_state(self, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Joint positions and velocities at reset: the model's default pose plus uniform noise."""
        kp, kv = jax.random.split(key)
        nq = self.qpos_adr[1] - self.qpos_adr[0]
        nv = self.qvel_adr[1] - self.qvel_adr[0]
        n = self.reset_noise
        qpos = jnp.asarray(self.qpos0, jnp.float32) + jax.random.uniform(kp, (nq,), minval=-n, maxval=n)
        return qpos, self.initial_qvel(kv, nv)

    def initial_qvel(self, key: jax.Array, nv: int) -> jax.Array:
        """The reset's joint velocities, drawn with ``key``: uniform in ±``reset_noise``."""
        return jax.random.uniform(key, (nv,), minval=-self.reset_noise, maxval=self.reset_noise)

    def write_state(self, data: mjx.Data, qpos: jax.Array, qvel: jax.Array) -> mjx.Data:
        """``data`` with the body's joint positions and velocities set (e.g. from :meth:`initial_state`)."""
        return data.replace(
            qpos=data.qpos.at[slice(*self.qpos_adr)].set(qpos),
            qvel=data.qvel.at[slice(*self.qvel_adr)].set(qvel),
        )

    def place(self, qpos: jax.Array, xy: jax.Array, yaw: jax.Array) -> jax.Array:
        """Puts a navigation body at ``xy`` facing ``yaw`` (navigation bodies implement this)."""
        raise NotImplementedError(f"body {self.name!r} is not a navigation body")

    def position(self, data: mjx.Data) -> jax.Array:
        """Torso position in the world frame, shape (3,)."""
        return data.xpos[self.torso_id]

    def yaw(self, data: mjx.Data) -> jax.Array:
        """Heading of the torso about the world z axis."""
        xmat = data.xmat[self.torso_id]
        return jnp.arctan2(xmat[1, 0], xmat[0, 0])

    def locomotion_position(self, data: mjx.Data) -> jax.Array:
        """The point whose displacement measures locomotion speed (world frame, (3,)): the torso.

        Bodies whose speed is that of their centre of mass (Humanoid) override this.
        """
        return self.position(data)

    def velocity(self, model: mjx.Model, data: mjx.Data) -> jax.Array:
        """World-frame linear velocity of the torso after the step, shape (3,), from ``data.qvel``.

        ``data.cvel`` (and ``data.xpos``) come from the last substep's start and lag ``qvel`` by one
        substep; this reads the velocity the step ends with. The default maps ``qvel`` through the
        torso's translational Jacobian; bodies whose root joints give it directly override it.
        """
        # mjx annotates body_id as an Array; it only compares and indexes with it, so an int serves
        jacp, _ = mjx.jac(model, data, data.xpos[self.torso_id], self.torso_id)  # pyright: ignore[reportArgumentType]
        return jacp.T @ data.qvel

    def planar_velocity(self, before: mjx.Data, data: mjx.Data) -> jax.Array:
        """(v_x, v_y) of :meth:`locomotion_position` over one control step from ``before`` to ``data``."""
        return (self.locomotion_position(data) - self.locomotion_position(before))[:2] / self.dt

    def observe(self, data: mjx.Data) -> jax.Array:
        """The body's own observation (docs/SPEC.md section 2)."""
        raise NotImplementedError

    def healthy(self, data: mjx.Data) -> jax.Array:
        """False when the episode must terminate."""
        if self.healthy_z is None:
            return jnp.array(True)
        z = self.position(data)[2]
        return (z >= self.healthy_z[0]) & (z <= self.healthy_z[1])


def _qpos_width(m: mujoco.MjModel, j: int) -> int:
    return {0: 7, 1: 4}.get(int(m.jnt_type[j]), 1)


def _dof_width(m: mujoco.MjModel, j: int) -> int:
    return {0: 6, 1: 3}.get(int(m.jnt_type[j]), 1)
