"""A sweep's grid: learners × env ids × safety bounds, each cell training ``num_seeds`` seeds
together, with config overrides and added env components shared by every cell. Everything is
validated before anything trains."""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Mapping
from typing import Any

from crax import runs
from crax.learners.shared.learner import Learner
from crax.runs.envs import check_components_target

GRID_FIELDS = ("safety_bound", "num_seeds")


@dataclasses.dataclass(frozen=True)
class Cell:
    """One grid cell: a learner on an env under one safety bound (its seeds train together).
    ``safety_bound`` is None for a learner whose training ignores the bound (``reads_bound``
    False, e.g. PPO): one cell per env serves every bound of the grid."""

    learner: str
    env: str
    safety_bound: float | None

    @property
    def name(self) -> str:
        """The cell's run folder name inside the sweep folder: ``<env>-<learner>-d<bound>``, or
        ``<env>-<learner>`` for a bound-free cell."""
        bound = "" if self.safety_bound is None else f"-d{self.safety_bound:g}"
        return f"{self.env.rpartition(':')[2]}-{self.learner}{bound}"


def check_env(env_id: str, env_kwargs: Mapping[str, Any] | None = None) -> None:
    """ValueError naming the valid choices when ``env_id`` is neither a registered id nor an import
    path of an :class:`crax.core.env.Env` subclass, or when ``env_kwargs``' constraints and sensors do
    not fit it (checked without building the env)."""
    if ":" in env_id:
        runs.env_class(env_id)
        check_components_target(env_id, dict(env_kwargs or {}))
        return
    from crax.tasks import compose
    from crax.tasks.catalog import parse_id

    body, _, _ = parse_id(env_id)
    unknown = sorted(set(env_kwargs or {}) - {"constraints", "sensors"})
    if unknown:
        raise ValueError(f"env_kwargs take 'constraints' and 'sensors', not {unknown}")
    for kind in ("constraints", "sensors"):
        compose.components(kind, (env_kwargs or {}).get(kind), body, env_id)


def _json(value: Any) -> Any:
    """JSON form of a config value (tuples as lists), so stored and new arguments compare equal."""
    return json.loads(json.dumps(value))


@dataclasses.dataclass(frozen=True)
class Grid:
    """learners × envs × safety_bounds, ``num_seeds`` vmapped seeds per cell, config overrides, and
    ``env_kwargs``: the constraints and sensors added to every env (``crax.make``'s keywords).

    Raises ValueError (naming the valid choices) for an unknown learner, env, override field or
    component, an empty or repeated list entry, or an override that makes some learner's config invalid.
    """

    learners: tuple[str, ...]
    envs: tuple[str, ...]
    safety_bounds: tuple[float, ...]
    num_seeds: int = 3
    overrides: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    env_kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "learners", tuple(self.learners))
        object.__setattr__(self, "envs", tuple(self.envs))
        object.__setattr__(self, "safety_bounds", tuple(float(b) for b in self.safety_bounds))
        object.__setattr__(self, "overrides", dict(_json(dict(self.overrides))))
        object.__setattr__(self, "env_kwargs", dict(_json(dict(self.env_kwargs))))
        for name in ("learners", "envs", "safety_bounds"):
            values = getattr(self, name)
            if not values:
                raise ValueError(f"{name} needs at least one value")
            repeated = sorted({str(v) for v in values if values.count(v) > 1})
            if repeated:
                raise ValueError(f"{name} lists {', '.join(repeated)} more than once")
        if isinstance(self.num_seeds, bool) or not isinstance(self.num_seeds, int) or self.num_seeds < 1:
            raise ValueError(f"num_seeds must be a positive integer, got {self.num_seeds!r}")
        if any(b < 0 for b in self.safety_bounds):
            raise ValueError(f"safety_bounds must be >= 0, got {list(self.safety_bounds)}")
        grid_keys = sorted(set(self.overrides) & set(GRID_FIELDS))
        if grid_keys:
            raise ValueError(f"override(s) {grid_keys} are grid dimensions: use safety_bounds / num_seeds")
        for learner in self.learners:
            cls = runs.get_learner(learner)
            fields = {f.name for f in dataclasses.fields(cls.Config)}
            unknown = sorted(set(self.overrides) - fields)
            if unknown:
                raise ValueError(f"unknown config field(s) {unknown} for learner {learner!r}; valid fields: "
                                 f"{', '.join(sorted(fields - set(GRID_FIELDS)))}")
        if self.overrides.get("budgets"):
            refuse = [name for name in self.learners if not runs.get_learner(name).supports_budgets]
            if refuse:
                raise ValueError(f"learner(s) {', '.join(refuse)} take no per-term budgets; learners that do: "
                                 f"{', '.join(Learner.taking_budgets())}")
        for env in self.envs:
            check_env(env, self.env_kwargs)
        names = [c.name for c in self.cells()]
        clash = sorted({n for n in names if names.count(n) > 1})
        if clash:
            raise ValueError(f"envs {list(self.envs)} give the same run folder name(s) {clash}; use distinct env ids")
        for cell in self.cells():  # every config is checked now, not when its turn comes
            self.config(cell)

    def cells(self) -> list[Cell]:
        """Every cell, env-major then learner then bound; a learner that ignores the bound gets one
        bound-free cell per env."""
        cells = []
        for env, learner in itertools.product(self.envs, self.learners):
            bounds = self.safety_bounds if runs.get_learner(learner).reads_bound else (None,)
            cells += [Cell(learner, env, bound) for bound in bounds]
        return cells

    def config(self, cell: Cell) -> Any:
        """The learner config a cell trains with: defaults, then the overrides, its bound (a bound-free
        cell records the grid's first) and num_seeds."""
        cls = runs.get_learner(cell.learner)
        values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in self.overrides.items()}
        bound = self.safety_bounds[0] if cell.safety_bound is None else cell.safety_bound
        try:
            return cls.Config(**values, safety_bound=bound, num_seeds=self.num_seeds)
        except (TypeError, ValueError) as e:
            raise ValueError(f"cell {cell.name}: {e}") from None

    def to_json(self) -> dict[str, Any]:
        return {"learners": list(self.learners), "envs": list(self.envs), "safety_bounds": list(self.safety_bounds),
                "num_seeds": self.num_seeds, "overrides": dict(self.overrides), "env_kwargs": dict(self.env_kwargs)}

    def differences(self, stored: Mapping[str, Any]) -> list[str]:
        """What differs from a stored :meth:`to_json`, as ``"name: <stored> in the folder, <new> now"``."""
        mine = self.to_json()
        pairs = [(k, stored.get(k), mine[k]) for k in ("learners", "envs", "safety_bounds", "num_seeds")]
        old, new = stored.get("overrides", {}), mine["overrides"]
        pairs += [(k, old.get(k), new.get(k)) for k in sorted(set(old) | set(new))]
        for kind in ("constraints", "sensors"):
            pairs.append((kind, stored.get("env_kwargs", {}).get(kind), mine["env_kwargs"].get(kind)))

        def show(v: Any) -> str:
            return "the default" if v is None else json.dumps(v)

        return [f"{k}: {show(a)} in the folder, {show(b)} now" for k, a, b in pairs if a != b]

    def describe(self, actions: Mapping[str, str] | None = None) -> str:
        """The grid as a text table: per cell seeds, steps per seed (whole iterations) and env steps."""
        cells = self.cells()
        rows = []
        total = 0
        for cell in cells:
            config = self.config(cell)
            per_seed = config.num_iterations * config.steps_per_iteration
            total += per_seed * config.num_seeds
            bound = "all" if cell.safety_bound is None else f"{cell.safety_bound:g}"
            rows.append((cell.name, cell.learner, cell.env, bound, str(config.num_seeds),
                         f"{per_seed:,}", f"{per_seed * config.num_seeds:,}", (actions or {}).get(cell.name, "train")))
        header = ("cell", "learner", "env", "d", "seeds", "steps/seed", "env steps", "action")
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        lines = [f"{len(self.learners)} learner(s) × {len(self.envs)} env(s) × {len(self.safety_bounds)} bound(s): "
                 f"{len(cells)} cell(s), {self.num_seeds} seed(s) each (trained together)"]
        free = [name for name in self.learners if not runs.get_learner(name).reads_bound]
        if free and len(self.safety_bounds) > 1:
            lines.append(f"{', '.join(free)} ignore(s) the bound: one cell per env, judged against every bound")
        lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in [header, *rows]]
        lines.append(f"total: {total:,} env steps")
        if self.overrides:
            lines.append("overrides: " + ", ".join(f"{k}={v}" for k, v in sorted(self.overrides.items())))
        for kind, table in sorted(self.env_kwargs.items()):
            lines.append(f"added {kind}: " + ", ".join(
                name + ("" if not params else ":" + ",".join(f"{k}={v}" for k, v in params.items()))
                for name, params in table.items()))
        return "\n".join(lines)

