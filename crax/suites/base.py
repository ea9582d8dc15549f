"""`Suite`: task logic as an NNX module (what :class:`crax.suites.task_env.TaskEnv` runs on MJX)."""

from __future__ import annotations

import dataclasses
import inspect
import types
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import jax
import jax.numpy as jnp
import mujoco
from flax import nnx

from crax.bodies.base import Body
from crax.core.context import Context
from crax.core.mjx import mjx
from crax.core.observation import STATE, Observation
from crax.core.params import Choice, Param, Range, check
from crax.objects.base import Placeable
from crax.sensors.base import ImageSensor


@dataclasses.dataclass
class Transition:
    """What a suite computes from one physics step."""

    task: dict[str, Any]
    rewards: dict[str, jax.Array]
    """Reward terms; their sum (after the suite's scaling) is the reward."""
    reward: jax.Array
    terminated: jax.Array
    extra_metrics: dict[str, jax.Array] = dataclasses.field(default_factory=dict)


class Suite(nnx.Module):
    """A task: one body composed with sensors, placeables and constraint terms, plus its rules.

    A suite is data plus composition. It accepts every body whose ``kinds`` include all of the
    suite's ``requires``, so a plugin body that declares itself a navigation (or planar
    locomotion) body works here without changes to the suite's code.

    Class attributes:
      name: registry name (``Goal`` in ``PointGoal1``).
      requires: body kinds the suite needs.
      levels: valid difficulty levels.
      default_body: body used when an id names only the suite (``SpiderLegs2``).
      params: the keyword parameters by name, each declared once as a
        :class:`~crax.core.params.Param` (default or default per level, valid values, meaning);
        the constructor takes them as ``**overrides`` and reads their values with
        :meth:`resolve`, and ``crax.make``, ``crax.parameters`` and ``docs/parameters.md`` read the
        same declaration. A suite may instead take keyword-only constructor parameters and list
        only their valid values here (a :class:`~crax.core.params.Range` or ``Choice``, defaults
        from the signature, level-dependent ones from :meth:`level_params`): :meth:`declared`
        reads both forms. ``crax.make`` checks overrides and the level's defaults against the
        valid values (:meth:`check_params`) before anything is built; parameters without valid
        values (tuples of names) are the suite's to check.

    Subclasses implement :meth:`build`, :meth:`init_task` and :meth:`transition`, and fill
    ``self.sensors`` (an ``nnx.List``) and ``self.constraints`` (an ``nnx.List``); objects driven
    by the clock between physics substeps override :meth:`substep`.
    """

    name: ClassVar[str]
    requires: ClassVar[frozenset[str]] = frozenset()
    levels: ClassVar[tuple[int, ...]] = (1, 2, 3)
    default_body: ClassVar[str | None] = None
    params: ClassVar[Mapping[str, Param | Range | Choice]] = {}
    episode_length: ClassVar[int] = 1000
    """Steps before an episode is truncated, where :class:`TaskEnv` is not given another
    (``crax.make``'s ``episode_length``); Safety-Gymnasium's Circle: 500."""
    forward_after_step: ClassVar[bool] = False
    """Whether :class:`TaskEnv` runs ``mjx.forward`` on the stepped data before :meth:`transition`,
    so positions, contacts and sensors are those of the final state (Safety-Gymnasium's tasks, as
    its ``mj_forward`` after each step's ``mj_step`` calls). Shape traces (``state_shapes``) skip it."""

    body: Body
    level: int
    sensors: nnx.List
    constraints: nnx.List

    def env_id(self) -> str:
        """The id ``crax.make`` serves this task under: ``{Body}{Suite}{Level}``, the body left out
        when it is the suite's :attr:`default_body`."""
        implied = self.default_body == self.body.name
        return f"{'' if implied else self.body.name}{self.name}{self.level}"

    if TYPE_CHECKING:  # how crax.make builds every suite: SuiteClass(body, level, **parameters)
        def __init__(self, body: Body, level: int, **params: Any) -> None: ...

    @classmethod
    def declared(cls) -> dict[str, Param]:
        """Every keyword parameter as a :class:`~crax.core.params.Param`, in declaration order.

        The :class:`Param` entries of :attr:`params`; before them, the constructor's keyword-only
        parameters (a suite that declares only valid values), each with its signature default,
        or the :meth:`level_params` values per level where that default is None.
        """
        out: dict[str, Param] = {}
        for p in inspect.signature(cls.__init__).parameters.values():
            if p.kind is not inspect.Parameter.KEYWORD_ONLY:
                continue
            spec = cls.params.get(p.name)
            if isinstance(spec, Param):
                out[p.name] = spec
                continue
            default = None if p.default is inspect.Parameter.empty else p.default
            per_level = {level: cls.level_params(level).get(p.name) for level in cls.levels}
            levels = per_level if default is None and any(v is not None for v in per_level.values()) else None
            out[p.name] = Param(default, spec, levels=levels)
        out.update({name: spec for name, spec in cls.params.items() if isinstance(spec, Param) and name not in out})
        return out

    @classmethod
    def level_params(cls, level: int) -> dict[str, Any]:
        """The defaults that depend on the level, by parameter name (the ``levels`` of the
        declared :class:`Param`s; a suite with signature defaults overrides this)."""
        return {name: spec.levels[level] for name, spec in cls.params.items()
                if isinstance(spec, Param) and spec.levels is not None}

    @classmethod
    def defaults(cls, level: int) -> dict[str, Any]:
        """Every parameter's default at ``level``."""
        return {name: spec.at(level) for name, spec in cls.declared().items()}

    @classmethod
    def resolve(cls, level: int, overrides: Mapping[str, Any]) -> types.SimpleNamespace:
        """The value of every declared parameter at ``level``: the override where one is given
        (and not None), the level's default otherwise; for a constructor that takes ``**overrides``.

        Raises ValueError for a level not in :attr:`levels` and TypeError for a name that is not
        a parameter (as Python does for an unknown keyword argument). Valid values are checked
        by :meth:`check_params` (``crax.make``), not here.
        """
        if level not in cls.levels:
            raise ValueError(f"level {level} is not a level of {cls.name}; valid levels: {', '.join(map(str, cls.levels))}")
        declared = cls.declared()
        unknown = sorted(set(overrides) - set(declared))
        if unknown:
            raise TypeError(f"{cls.__name__}() got unexpected keyword argument(s) {', '.join(unknown)}; "
                            f"its parameters: {', '.join(declared)}")
        return types.SimpleNamespace(**{
            name: spec.at(level) if overrides.get(name) is None else overrides[name] for name, spec in declared.items()
        })

    @classmethod
    def check_params(cls, level: int, overrides: Mapping[str, Any], *, where: str | None = None) -> None:
        """Raises ValueError naming the parameter, its value and its valid range for the first
        override (None: the level's default) or default of ``level`` outside its valid values."""
        given = {k: v for k, v in overrides.items() if v is not None}
        defaults = {k: v for k, v in cls.defaults(level).items() if v is not None}
        check(where or f"{cls.name}{level}", cls.declared(), {**defaults, **given})

    @property
    def placeables(self) -> dict[str, Placeable]:
        """Every placeable by label, in the order they are built (none by default)."""
        return {}

    def build(self, spec: mujoco.MjSpec) -> None:
        """Adds the suite's own MJCF to the scene: each of its :attr:`placeables` under its label (a
        suite with walls or other MJCF of its own adds them too)."""
        for label, p in self.placeables.items():
            p.build(spec, label)

    def bind(self, m: mujoco.MjModel) -> None:
        """Resolves names to static ids in the compiled model: the placeables', then the sensors' and
        constraint terms'."""
        for p in self.placeables.values():
            p.bind(m)
        for component in (*self.sensors, *self.constraints):
            component.bind(m)

    def init_task(self, model: mjx.Model, data: mjx.Data, key: jax.Array) -> tuple[mjx.Data, dict[str, Any]]:
        """Sets the start pose and layout in ``data`` (qpos, qvel, mocap_pos); returns the task state."""
        raise NotImplementedError

    def transition(
        self, model: mjx.Model, before: mjx.Data, data: mjx.Data, task: dict[str, Any], action: jax.Array
    ) -> tuple[mjx.Data, Transition]:
        """Reward, task update (may move mocaps, e.g. a respawned goal) and termination."""
        raise NotImplementedError

    def substep(self, model: mjx.Model, data: mjx.Data, task: dict[str, Any]) -> mjx.Data:
        """Readies ``data`` for one physics substep; returns it (the default: unchanged).

        :class:`TaskEnv` calls it inside its substep scan, right before every physics step (``mjx.step``): the
        body's ``frame_skip`` times per control step, each time with ``data.time`` the time that
        substep starts at and ``task`` the task state the control step began with (it is not
        updated between substeps). It is for objects driven by the clock rather than by the
        control step, as Safety-Gymnasium moves its mocap bodies before every ``mj_step``
        (:class:`crax.suites.safety_gym.button.SafetyButton`'s gremlins). It runs at every
        substep, so keep it cheap, and it must keep every array's shape.
        """
        del model, task
        return data

    def context(self, model: mjx.Model, data: mjx.Data, task: dict[str, Any]) -> Context:
        xy = self.body.position(data)[:2]
        return Context(
            model=model, data=data, agent_xy=xy, agent_yaw=self.body.yaw(data), task=task,
            agent_velocity=self.body.velocity(model, data),
        )

    def observe(self, ctx: Context, previous: Observation | None = None, steps: jax.Array | None = None) -> Observation:
        """The body's observation and the sensors' readings concatenated, float32; with image sensors a
        dict of that vector (:data:`~crax.core.observation.STATE`) and each image by its key. After a step
        (``previous``, the last observation, and ``steps``, the episode's steps so far) an image sensor
        may hold its last image (:meth:`~crax.sensors.base.ImageSensor.observe_every`)."""
        flat = [s for s in self.sensors if not isinstance(s, ImageSensor)]
        vector = jnp.concatenate([self.body.observe(ctx.data)] + [s.observe(ctx) for s in flat]).astype(jnp.float32)
        images = {s.key: s.observe(ctx) if previous is None or steps is None
                  else s.observe_every(ctx, previous[s.key], steps)  # pyright: ignore[reportIndexIssue]
                  for s in self.sensors if isinstance(s, ImageSensor)}
        return {STATE: vector, **images} if images else vector

    def costs(self, ctx: Context) -> dict[str, jax.Array]:
        out: dict[str, jax.Array] = {}
        for c in self.constraints:
            out[c.term] = out.get(c.term, 0.0) + c.cost(ctx).astype(jnp.float32)
        return out

    def step_cost(self, costs: dict[str, jax.Array]) -> jax.Array:
        """The step's cost from its terms: their sum (Safety-Gymnasium's tasks: whether it is > 0)."""
        return sum(costs.values(), jnp.zeros((), jnp.float32))

    def after_costs(self, task: dict[str, Any], costs: dict[str, jax.Array]) -> dict[str, Any]:
        """The task state once the step's cost terms are known, for task state that follows from
        them (Safety-Gymnasium's Fading: a hazard stepped in is drawn in full again). The default:
        unchanged. :class:`TaskEnv` calls it after :meth:`costs`, on the task :meth:`transition` returned."""
        del costs
        return task

    def visibility(self, task: dict[str, Any]) -> dict[str, Any]:
        """The fraction of its own alpha each placeable is drawn with, by label, in the state whose
        task is ``task`` (host arrays); labels left out are drawn as built. Read by renders only
        (:func:`crax.render.render`); the default: every object as built."""
        del task
        return {}
