"""`TaskEnv`: the `Env` that runs a :class:`~crax.suites.base.Suite` on MJX."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
from flax import nnx

from crax.core import origins, scene, stepping
from crax.core import physics as physics_impl
from crax.core.batch import check_batch
from crax.core.context import Context
from crax.core.env import Env, State
from crax.core.mjx import mjx
from crax.core.observation import STATE
from crax.core.params import TaskParam
from crax.core.physics_model import STATE_FIELDS, PackedData, PhysicsModel, field_name
from crax.core.reads import read_leaves
from crax.devices import lapack
from crax.sensors.base import ImageSensor
from crax.suites import checks
from crax.suites.base import Suite


def unsupported_pairs(m: mujoco.MjModel, message: str) -> str:
    """Names the geoms behind MJX's "(mjGEOM_X, mjGEOM_Y) collisions not implemented" error."""
    kinds = re.findall(r"mjGEOM_(\w+)", message)
    if len(kinds) != 2:
        return f"MJX cannot build this model: {message}"
    want = {int(getattr(mujoco.mjtGeom, f"mjGEOM_{k}")) for k in kinds}
    pairs = []
    for i in range(m.ngeom):
        for j in range(i + 1, m.ngeom):
            touch = (m.geom_contype[i] & m.geom_conaffinity[j]) or (m.geom_contype[j] & m.geom_conaffinity[i])
            if touch and m.geom_bodyid[i] != m.geom_bodyid[j] and {int(m.geom_type[i]), int(m.geom_type[j])} == want:
                pairs.append(f"{m.geom(i).name or i} / {m.geom(j).name or j}")
    shown = ", ".join(pairs[:4]) + (f" and {len(pairs) - 4} more" if len(pairs) > 4 else "")
    return (f"MJX has no {kinds[0].lower()}–{kinds[1].lower()} collision, and these geoms can collide: {shown}. "
            "Use a sphere or capsule for one side, or collision categories that do not touch (docs/plugins.md).")


NONFINITE_METRICS = ("env/nonfinite_action", "env/nonfinite_state")
"""Per-step flags (1.0 on the step) of a non-finite action entry and of a non-finite physics state."""


class TaskEnv(Env):
    """Runs a :class:`Suite` on MJX: scene assembly, physics substeps, time limit, metrics.

    The MjSpec scene is the arena (floor, one material), the body's MJCF attached under
    ``agent/``, and the suite's walls and placeables. It is compiled once; each episode only
    moves mocap bodies and sets joint state. The env works on its own copy of ``suite`` (and of
    each added component), bound to its model: use ``env.suite``; the suite passed in stays as it
    was and may build further envs.

    ``constraints`` and ``sensors`` are components added to the suite's own (``crax.make``'s
    ``constraints=``/``sensors=``, :mod:`crax.tasks.compose`): each may add MJCF (``build(spec)``) before
    the scene is compiled, is bound to the compiled model, and is then appended to the env's copy
    of the suite's ``constraints``/``sensors``. Their outputs are checked by tracing (no compile): a component
    that reads a task entry the suite lacks, or returns the wrong shape, is a ValueError here.
    Every :class:`Context` the env builds carries the step's action (``Context.action``).
    Episodes are truncated after ``episode_length`` steps (None: the suite's :attr:`Suite.episode_length`).
    ``solver_iterations`` and ``ls_iterations`` set the constraint solver's budget per physics step
    (None: the body's own, :attr:`~crax.bodies.base.Body.solver_iterations`): MJX runs a batch's
    solver to its slowest env, so the budget is much of a step's cost (docs/safety_gymnasium.md).

    Non-finite numbers never reach a learner: NaN or infinite action entries are replaced by 0
    (``metrics["env/nonfinite_action"]`` is 1 on that step), and a step that leaves NaN or inf
    in ``qpos`` or ``qvel`` terminates the episode (done 1, truncation 0, so an auto-reset
    replaces the state) with ``metrics["env/nonfinite_state"]`` 1 and its observation, reward,
    cost and metrics zeroed.

    ``physics`` picks the MJX implementation that steps the model (:mod:`crax.core.physics`, which
    names the choices, what each needs, and refuses a model or component an implementation cannot
    run with a ValueError naming the env).
    """

    def __init__(self, suite: Suite, *, episode_length: int | None = None, constraints: Sequence = (),
                 sensors: Sequence = (), physics: str = "jax", solver_iterations: int | None = None,
                 ls_iterations: int | None = None):
        self.physics = physics_impl.check(physics)
        physics_impl.require(physics)  # before the model is built: a missing package is found at once
        if episode_length is None:
            episode_length = suite.episode_length
        if episode_length < 1:
            raise ValueError(f"episode_length must be >= 1, got {episode_length}")
        lapack.install()  # batched MJX steps with contacts deadlock XLA:CPU without it (crax.devices.lapack)
        # The env owns copies: added components and bound ids never reach the caller's suite or
        # components, which may build further envs.
        suite = nnx.clone(suite)
        constraints, sensors = [nnx.clone(c) for c in constraints], [nnx.clone(s) for s in sensors]
        self.suite = suite
        self.body = suite.body
        self._episode_length = int(episode_length)
        self._recorded: tuple[tuple, tuple[Callable, Callable]] | None = None
        self.id = suite.env_id()
        spec = scene.new_arena(timestep=self.body.timestep)
        spec.modelname = self.id
        spec.option.integrator = self.body.integrator
        spec.option.iterations = self.body.solver_iterations if solver_iterations is None else solver_iterations
        spec.option.ls_iterations = self.body.ls_iterations if ls_iterations is None else ls_iterations
        # Observations are computed by the components; MuJoCo's sensor stage would only cost time.
        spec.option.disableflags |= mujoco.mjtDisableBit.mjDSBL_SENSOR
        checks.check_components([*suite.constraints, *constraints], [*suite.sensors, *sensors])
        checks.check_body_asset(self.body)
        body_spec = self.body.mjcf()
        checks.check_body_spec(self.body, body_spec)
        scene.attach_body(spec, body_spec, prefix=self.body.prefix)
        suite.build(spec)
        placeables = suite.placeables
        checks.check_scene_geoms(spec, origins.label("suite", type(suite)),
                                   {f"{k}/": origins.label("hazard", type(p)) for k, p in dict(placeables).items()})
        added = [("constraint", c) for c in constraints] + [("sensor", c) for c in sensors]
        for kind, component in added:
            component.build(spec)
            checks.check_scene_geoms(spec, origins.label(kind, type(component)))
        self.spec = spec
        self.mj_model = scene.compile_spec(spec)
        self.body.bind(self.mj_model)
        checks.check_place(self.body)
        suite.bind(self.mj_model)
        for kind, component in added:
            try:
                component.bind(self.mj_model)
            except (KeyError, ValueError) as e:
                raise ValueError(f"{kind} {component.name} does not fit {self.id} (body {self.body.name}): {e}") from None
        post = any(c.reads_post_constraint for c in (self.body, *suite.constraints, *suite.sensors, *constraints, *sensors))
        try:
            self.mjx_model = physics_impl.put_model(self.mj_model, self.physics, self.id, post_constraint=post)
        except NotImplementedError as e:
            raise ValueError(f"{self.id}: {unsupported_pairs(self.mj_model, str(e))}") from None
        self.physics_model = PhysicsModel(spec, self.mj_model, self.mjx_model)
        self._data: dict[int, mjx.Data] = {}
        self._data0 = self._initial_data(1)
        own = [("constraint", c) for c in suite.constraints] + [("sensor", c) for c in suite.sensors]
        self._check_outputs(own + added)
        if added:
            suite.constraints.extend(constraints)
            suite.sensors.extend(sensors)
        physics_impl.check_env(self.physics, self.id, lambda: jax.eval_shape(
            self._step, jax.eval_shape(self._reset, jax.random.key(0)), jnp.zeros(self.action_size)))

    def _initial_data(self, worlds: int) -> mjx.Data:
        """The data every reset starts from, for a batch of ``worlds`` envs stepped together
        (:func:`crax.core.physics.worlds`: one data per batch size on a physics whose batch shares
        buffers, :func:`crax.core.physics.make_data`)."""
        if worlds not in self._data:
            self._data[worlds] = physics_impl.make_data(self.mj_model, self.mjx_model, self.physics, worlds)
        return self._data[worlds]

    def _check_outputs(self, components: list[tuple[str, Any]]) -> None:
        """Traces every constraint and sensor, the suite's own and the added ones, on a reset-like
        context (:func:`jax.eval_shape`, no compile) and turns what would be an error deep in a trace
        or in the wrappers (a task entry the suite lacks, a cost that is not a scalar, an
        observation of the wrong size) into a ValueError naming the component's plugin and class."""
        failures: list[str] = []

        def probe(key):
            data, task = self.suite.init_task(self.mjx_model, self._data0, key)
            ctx = self._context(data, task, jnp.zeros(self.action_size))
            out = []
            for kind, c in components:
                name = f"{origins.origin(type(c))}{kind} {getattr(c, 'name', type(c).__name__)}"
                try:
                    out.append(c.cost(ctx) if kind == "constraint" else c.observe(ctx))
                except KeyError as e:
                    if not (e.args and isinstance(e.args[0], str) and e.args[0] not in ctx.task):
                        raise
                    failures.append(f"{name} reads task[{e.args[0]!r}], which {self.id} does not have "
                                    f"(task entries: {', '.join(map(str, sorted(ctx.task)))})")
                    out.append(None)
                except Exception as e:  # noqa: BLE001 - any failure of a plugin's code, named by component
                    failures.append(f"{name} fails on {self.id}: {type(e).__name__}: {e}")
                    out.append(None)
            return out

        shapes = jax.eval_shape(probe, jax.random.key(0))
        for (kind, c), got in zip(components, shapes, strict=True):
            if got is None:
                continue
            shape = tuple(getattr(got, "shape", ()))
            if kind == "constraint" and shape != ():
                failures.append(f"{origins.label('constraint', type(c))}: cost returns shape {shape} on {self.id}; "
                                "expected () — return one number per step: reduce it to a scalar (jnp.sum, jnp.max)")
            elif isinstance(c, ImageSensor):
                if shape != tuple(c.shape) or got.dtype != jnp.uint8:
                    failures.append(f"{origins.origin(type(c))}sensor {c.name} returns {shape} {got.dtype} on {self.id}; "
                                    f"expected {tuple(c.shape)} uint8 — an image sensor's observe() returns its `shape`")
            elif kind == "sensor" and shape != (c.size,):
                failures.append(f"{origins.origin(type(c))}sensor {c.name} returns shape {shape} on {self.id}; "
                                f"expected ({c.size},) — observe() must return `size` floats: fix size or the output")
        keys = [c.key for _, c in components if isinstance(c, ImageSensor)]
        clashes = sorted({k for k in keys if keys.count(k) > 1 or k == STATE})
        if clashes:
            failures.append(f"image sensors need distinct keys other than {STATE!r}; {', '.join(map(repr, clashes))} "
                            "is taken: give each camera its own key")
        if failures:
            raise ValueError("; ".join(failures))

    def _context(self, data: mjx.Data, task: dict[str, Any], action: jax.Array) -> Context:
        """The suite's context with the step's action (clipped to [-1, 1], as the actuators get it)."""
        ctx = self.suite.context(self.mjx_model, data, task)
        return ctx.replace(action=jnp.clip(action, -1.0, 1.0).astype(jnp.float32))

    @property
    def action_size(self) -> int:
        return self.body.action_size

    @property
    def episode_length(self) -> int:
        return self._episode_length

    @property
    def dt(self) -> float:
        return self.body.dt

    def _programs(self) -> tuple[Callable, Callable]:
        """reset and step as inline jits, rebuilt when a TaskParam of the suite has changed.

        Tracing an MJX reset or step takes seconds of Python. An inline jit traces once per input
        shape and env, then replays the recorded program into every caller's trace (eval_shape,
        vmap, scans, the learners' jits): the same program, a fraction of the time. Called outside
        any trace it compiles, which is faster too: op by op, PointGoal1's first reset measured 45 s
        and every step 9 s, against 11 s and 10 s to compile each once. The recording holds the
        TaskParam values as constants, so a new value (``nnx.update(env.suite, ...)``) makes a new one;
        so does a reset for another batch size on a physics whose batch shares buffers (:meth:`_initial_data`).
        """
        values = jax.tree.leaves(nnx.state(self.suite, TaskParam))
        try:
            fingerprint = (physics_impl.worlds(self.physics),
                           *(np.asarray(v).tobytes() for v in values))
        except jax.errors.TracerArrayConversionError:  # values set inside a trace: no recording
            return self._reset, self._step
        if self._recorded is None or self._recorded[0] != fingerprint:
            self._recorded = (fingerprint, (jax.jit(self._reset, inline=True), jax.jit(self._step, inline=True)))
        return self._recorded[1]

    def reset(self, key: jax.Array) -> State:
        return self._programs()[0](key)

    def step(self, state: State, action: jax.Array) -> State:
        if tuple(jnp.shape(action)) != (self.action_size,):
            raise ValueError(
                f"action has shape {tuple(jnp.shape(action))}; {self.id} expects ({self.action_size},)"
                " (batched envs: wrap with crax.core.env.Vmap)"
            )
        if isinstance(state.data, PackedData):
            raise TypeError(f"{self.id}.step takes the scene's mjx.Data; this state's data is a training stack's "
                            "PackedData: step it through crax.core.env.PackedState, or unpack it with "
                            "env.physics_model.unpack")
        return self._programs()[1](state, action)

    @functools.cached_property
    def _term_shapes(self) -> tuple[dict, dict, dict]:
        def terms(key):
            data, task = self.suite.init_task(self.mjx_model, self._data0, key)
            return self._terms(data, task)

        return jax.eval_shape(terms, jax.random.key(0))

    @functools.cached_property
    def state_shapes(self) -> State:
        """Shapes and dtypes of a reset state, traced without the physics: ``mjx.forward`` keeps the
        shape and dtype of every ``Data`` field (the step carries ``Data`` through it in a scan), so
        the initial data stands in for the forwarded one. Tracing the forward pass took 1.3-5 s per
        env on this CPU, the rest of the reset 0.06-0.4 s (tests/env/test_make.py checks the two agree)."""
        return jax.eval_shape(functools.partial(self._reset, forward_pass=False), jax.random.key(0))

    @functools.cached_property
    def step_reads(self) -> frozenset[str]:
        """The ``Data`` fields beyond MuJoCo's state (:data:`crax.core.physics_model.STATE_FIELDS`) that a step
        reads of the state it is given: what the suite's ``transition`` reads of ``before`` and its
        ``substep`` of the data it readies (the physics step itself reads MuJoCo's state only), by name
        (:func:`crax.core.physics_model.field_name`). Found by tracing the two without the physics
        (:func:`crax.core.reads.read_leaves`: certain where it says a field is not read). A training
        stack carries these and MuJoCo's state of each env, and no other field
        (:class:`crax.core.env.PackedState`)."""
        shapes = self.state_shapes
        paths = jax.tree_util.tree_flatten_with_path(shapes.data)[0]
        names = [field_name(p) for p, _ in paths]

        def pre_step(before, data, task, action):
            after, transition = self.suite.transition(self.mjx_model, before, data, task, action)
            readied = jax.tree.leaves(self.suite.substep(self.mjx_model, before, task))
            return after, dataclasses.astuple(transition), [x for x, name in zip(readied, names, strict=True) if name in STATE_FIELDS]

        action = jax.ShapeDtypeStruct((self.action_size,), jnp.float32)
        read = read_leaves(pre_step, shapes.data, shapes.data, shapes.info["task"], action)[:len(names)]
        return frozenset(name for name, r in zip(names, read, strict=True) if r) - STATE_FIELDS

    def _reset(self, key: jax.Array, forward_pass: bool = True) -> State:
        key, task_key = jax.random.split(key)
        data0 = self._initial_data(physics_impl.worlds(self.physics))
        data, task = self.suite.init_task(self.mjx_model, data0, task_key)
        if forward_pass:  # False only in state_shapes' trace
            data = mjx.forward(self.mjx_model, data)
        ctx = self._context(data, task, jnp.zeros(self.action_size))
        zero = jnp.zeros((), jnp.float32)
        rewards, costs, extra = self._term_shapes
        metrics = {f"reward/{k}": jnp.zeros(v.shape, v.dtype) for k, v in rewards.items()}
        metrics.update({f"cost/{k}": jnp.zeros(v.shape, v.dtype) for k, v in costs.items()})
        metrics.update({k: jnp.zeros(v.shape, v.dtype) for k, v in extra.items()})
        metrics.update({k: zero for k in NONFINITE_METRICS})
        info = {"task": task, "steps": jnp.zeros((), jnp.int32)}
        return State(
            data=data, obs=self.suite.observe(ctx), reward=zero, cost=zero, done=zero, truncation=zero,
            info=info, metrics=metrics,
        )

    def _terms(self, data: mjx.Data, task: dict[str, Any]) -> tuple[dict, dict, dict]:
        """Reward terms, cost terms and extra metrics of a step (for their names and shapes; traced
        without the physics, as :attr:`state_shapes`: 1.4-3 s less per Safety-Gymnasium env)."""
        data, tr = self.suite.transition(self.mjx_model, data, data, task, jnp.zeros(self.action_size))
        costs = self.suite.costs(self._context(data, tr.task, jnp.zeros(self.action_size)))
        return tr.rewards, costs, tr.extra_metrics

    def _physics(self, data: mjx.Data, task: dict[str, Any]) -> mjx.Data:
        """The body's ``frame_skip`` physics steps of ``data``, on :attr:`physics_model` (the scene without
        its inert bodies), each after the suite's :meth:`~crax.suites.base.Suite.substep`."""
        physics = self.physics_model

        def hook(p: mjx.Data) -> mjx.Data:  # the suite's hook sees the scene's data
            scene_data = physics.from_physics(data, p, kinematics=False)
            return physics.to_physics(self.suite.substep(self.mjx_model, scene_data, task))

        before = hook if type(self.suite).substep is not Suite.substep else None
        stepped = stepping.substeps(physics.mjx_model, physics.to_physics(data), self.body.frame_skip,
                                        before=before, forward_after=self.suite.forward_after_step)
        return physics.from_physics(data, stepped)

    def _step(self, state: State, action: jax.Array) -> State:
        finite_action = jnp.isfinite(action)
        action = jnp.where(finite_action, action, jnp.zeros_like(action))
        before = state.data
        assert isinstance(before, mjx.Data)  # step() refused a PackedData
        check_batch(before, self._data0, self.id)
        data = before.replace(ctrl=self.body.ctrl(action))
        task = state.info["task"]

        data = self._physics(data, task)
        data, tr = self.suite.transition(self.mjx_model, before, data, state.info["task"], action)
        ctx = self._context(data, tr.task, action)
        costs = self.suite.costs(ctx)
        task = self.suite.after_costs(tr.task, costs)
        cost = self.suite.step_cost(costs)
        steps = state.info["steps"] + 1
        truncated = steps >= self._episode_length
        broken = ~(jnp.all(jnp.isfinite(data.qpos)) & jnp.all(jnp.isfinite(data.qvel)))
        terminated = tr.terminated | broken
        metrics = {f"reward/{k}": v for k, v in tr.rewards.items()}
        metrics.update({f"cost/{k}": v for k, v in costs.items()})
        metrics.update(tr.extra_metrics)
        obs, reward, cost, metrics = jax.tree.map(
            lambda x: jnp.where(broken, jnp.zeros_like(x), x),
            (self.suite.observe(ctx, state.obs, steps), tr.reward.astype(jnp.float32), cost, metrics),
        )
        metrics["env/nonfinite_action"] = (~jnp.all(finite_action)).astype(jnp.float32)
        metrics["env/nonfinite_state"] = broken.astype(jnp.float32)
        return State(
            data=data,
            obs=obs,
            reward=reward,
            cost=cost,
            done=(terminated | truncated).astype(jnp.float32),
            truncation=(truncated & ~terminated).astype(jnp.float32),
            info={**state.info, "task": task, "steps": steps},
            metrics=metrics,
        )
