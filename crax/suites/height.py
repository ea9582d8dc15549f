"""Height: walk forward under a low ceiling (docs/SPEC.md section 3)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import mujoco
from flax import nnx

from crax.bodies.base import LOCOMOTION, Body
from crax.core.mjx import mjx
from crax.core.params import NON_NEGATIVE, POSITIVE, POSITIVE_COUNT, REAL, Param, TaskParam
from crax.core.scene import GROUP_WALL, Category, add_mocap, collide_as
from crax.costs.height_limit import HeightLimit
from crax.suites.base import Suite, Transition

FLOOR_GEOMS = ("torso", "butt", "right_shin", "left_shin", "right_hand", "left_hand")
"""Humanoid geoms that Height lets touch the floor, besides the feet."""

_CEILING_HALF = (60.0, 5.0, 0.005)  # a strip from x = −10 to 110 m (episodes run ~15 m at 1 m/s)


class Height(Suite):
    """The Humanoid walks forward with its torso below a ceiling height ``h_max``.

    ``r = v_x + healthy_reward − ctrl_cost·‖a‖²`` (terms ``reward/forward``, ``reward/healthy``,
    ``reward/ctrl``), v_x the forward velocity of the centre of mass over the step
    (``Body.locomotion_position``). ``c = w · max(0, h − h_max)/δ`` (``cost/height``), h the
    torso's height, w = ``cost_weight``, δ = ``hinge_margin``. ``metrics["height"]`` is h and
    ``metrics["progress"]`` the centre of mass's advance along x over the last
    ``progress_window`` steps (since the reset while fewer steps have run).

    The episode does not end for being low (the Humanoid's healthy rule, torso 1.0 to 2.0 m, is
    not used: level 3's ceiling is 1.0 m). It ends when the centre of mass advanced less than
    ``min_progress`` along +x over the last ``progress_window`` steps. The window's x positions are
    a ring buffer in the task state (``task["x_history"]``, static shape (progress_window,),
    and the suite's own step counter ``task["elapsed"]``); during the first ``progress_window``
    steps the window is not full and the rule does not apply, so every episode runs at least
    that long (or to its time limit).

    Decisions (SPEC is silent):

    - Body: only the Humanoid. The suite is written for its geometry (the heights, the geoms that
      may touch the floor), so its registry name carries the body as SpiderLegs does:
      ``name = "HumanoidHeight"`` with ``default_body = "Humanoid"``, which gives the ids
      ``HumanoidHeight1..3`` and makes ``crax.make`` refuse every other body.
    - Floor contact: the Humanoid collides only through its feet, which suffices while a fall
      ends the episode. Here nothing ends a crouch, a crawl or a fall, so ``build`` gives the
      torso, the pelvis (``butt``), both shins (the knees) and both hands floor collision too
      (``floor_geoms``): 12 contact slots instead of 2 (capsules take two each) and 65 constraint
      rows instead of 25, which leaves about 0.7× the bare physics steps/s of the feet alone
      (random actions, 64 envs, CPU, best of 3). Fewer would do for upright gaits, but a fall
      without the torso and pelvis sinks them through the floor, and knees and hands are what a
      kneeling or crawling gait stands on. The agent's geoms still never touch each other.
      ``floor_geoms=()`` keeps the feet only. The Humanoid's solver budget (2 iterations, 4 line
      search) stays: on random-action rollouts that fall and lie on these geoms, penetration
      (worst −2.8 cm, 1st percentile −1.5 cm) and resting heights match a 16-iteration solve.
    - Ceiling: cost only, nothing collides with it. A translucent, visual-only strip is drawn at
      ``h_max`` (a mocap body put at ``h_max`` by every reset, so it follows a changed
      ``h_max`` TaskParam); ``ceiling=False`` leaves it out. It marks the torso's centre line:
      the head pokes through it while the cost is 0.
    - Observation: the Humanoid's 376, no suite sensor. The torso height is in it (qpos[2]) and
      ``h_max`` is fixed per level, so nothing is hidden from the policy.
    - The healthy bonus (1.0) is paid on every step, as nothing here is unhealthy.

    Args:
      body: the Humanoid.
      level: 1, 2 or 3.
      **overrides: values of the parameters declared in :attr:`params` (docs/parameters.md).
    """

    name = "HumanoidHeight"
    requires = frozenset({LOCOMOTION})
    default_body = "Humanoid"
    params = {
        "h_max": Param(valid=POSITIVE, doc="ceiling: the largest cost-free torso height (m)",
                       levels={1: 1.30, 2: 1.15, 3: 1.00}),
        "cost_weight": Param(0.1, NON_NEGATIVE, "w"),
        "hinge_margin": Param(0.08, POSITIVE, "δ (m)"),
        "healthy_reward": Param(1.0, REAL, "reward per step"),
        "ctrl_cost": Param(0.01, NON_NEGATIVE, "weight of ‖a‖²"),
        "progress_window": Param(200, POSITIVE_COUNT, "steps over which min_progress is measured"),
        "min_progress": Param(0.5, REAL, "the episode ends with less advance along +x over the window (m)"),
        "floor_geoms": Param(FLOOR_GEOMS, None, "body geoms (without agent/) that collide with the floor besides the feet"),
        "ceiling": Param(True, None, "draw the ceiling"),
    }

    def __init__(self, body: Body, level: int, **overrides: Any):
        v = self.resolve(level, overrides)
        if not isinstance(v.progress_window, int) or v.progress_window < 1:
            raise ValueError(f"progress_window must be an integer >= 1 (steps), got {v.progress_window!r}")
        self.body = body
        self.level = level
        self.healthy_reward = TaskParam(jnp.asarray(v.healthy_reward, jnp.float32))
        self.ctrl_cost = TaskParam(jnp.asarray(v.ctrl_cost, jnp.float32))
        self.min_progress = TaskParam(jnp.asarray(v.min_progress, jnp.float32))
        self.progress_window = v.progress_window
        self.floor_geoms = tuple(v.floor_geoms)
        self.ceiling = v.ceiling
        self.limit = HeightLimit(body.prefix + "torso", v.h_max, weight=v.cost_weight, margin=v.hinge_margin)
        self.sensors = nnx.List([])
        self.constraints = nnx.List([self.limit])

    def build(self, spec: mujoco.MjSpec) -> None:
        for name in self.floor_geoms:
            geom = spec.geom(self.body.prefix + name)
            if geom is None:
                own = sorted(
                    g.name.removeprefix(self.body.prefix) for g in spec.geoms if g.name.startswith(self.body.prefix)
                )
                raise ValueError(f"floor_geoms: {self.body.name} has no geom {name!r}; its geoms: {', '.join(own)}")
            collide_as(geom, Category.AGENT)
        if self.ceiling:
            geom = {
                "type": mujoco.mjtGeom.mjGEOM_BOX,
                "size": list(_CEILING_HALF),
                "group": GROUP_WALL,
                "rgba": [0.55, 0.7, 0.95, 0.25],
            }
            add_mocap(spec, "ceiling", geom, None)

    def bind(self, m: mujoco.MjModel) -> None:
        self.ceiling_id = int(m.body_mocapid[m.body("ceiling").id]) if self.ceiling else None
        super().bind(m)

    def init_task(self, model: mjx.Model, data: mjx.Data, key: jax.Array) -> tuple[mjx.Data, dict[str, Any]]:
        qpos, qvel = self.body.initial_state(key)
        data = self.body.write_state(data, qpos, qvel)
        if self.ceiling:
            pos = jnp.stack([jnp.asarray(_CEILING_HALF[0] - 10.0), jnp.asarray(0.0), self.limit.h_max[...]])
            data = data.replace(mocap_pos=data.mocap_pos.at[self.ceiling_id].set(pos))
        task = {"x_history": jnp.zeros(self.progress_window, jnp.float32), "elapsed": jnp.zeros((), jnp.int32)}
        return data, task

    def transition(self, model, before, data, task, action):
        x_before = self.body.locomotion_position(before)[0]
        x = self.body.locomotion_position(data)[0]
        # history[k % W] holds the x of step k (0: the reset). Write this step's start, then read
        # the x of W steps before its end (the reset's while the window is not yet full).
        w, elapsed = self.progress_window, task["elapsed"]
        history = task["x_history"].at[elapsed % w].set(x_before)
        done_steps = elapsed + 1
        full = done_steps >= w
        progress = x - history[jnp.where(full, done_steps % w, 0)]
        rewards = {
            "forward": (x - x_before) / self.body.dt,
            "healthy": self.healthy_reward[...],
            "ctrl": -self.ctrl_cost[...] * jnp.sum(jnp.square(jnp.clip(action, -1.0, 1.0))),
        }
        return data, Transition(
            task={"x_history": history, "elapsed": done_steps},
            rewards=rewards,
            reward=rewards["forward"] + rewards["healthy"] + rewards["ctrl"],
            terminated=full & (progress < self.min_progress[...]),
            extra_metrics={"height": self.body.position(data)[2], "progress": progress},
        )
