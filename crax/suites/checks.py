"""The contracts a component can only show once it is built: checked when a task is assembled.

:class:`crax.suites.task_env.TaskEnv` (and ``crax.make``, and components added by name) run these on the
instances: a body's root body ``torso``, its actuators and asset file, every geom's collision
category, each constraint's ``term``, each sensor's ``size``, a navigation body's ``place``. Every
error names the plugin (:mod:`crax.core.origins`), the class and the fix; the class-level contracts
checked at registration are in :mod:`crax.plugins.validate`; docs/plugins.md describes both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import mujoco

from crax.core.origins import label

GUIDE = "docs/plugins.md"


def check_body_asset(body: Any) -> None:
    """FileNotFoundError naming the plugin, the class and the fix when a body's ``asset`` cannot be
    read from its ``asset_package`` (bodies that build their MJCF in code are not checked)."""
    from crax.bodies.base import Body

    if type(body).mjcf is not Body.mjcf:
        return
    where = f"package {body.asset_package!r}" if body.asset_package else "crax's own crax/bodies/assets"
    try:
        path = body.asset_file()
        missing = "" if path.is_file() else f"is not in {where} ({path})"
    except ModuleNotFoundError:
        missing = f"cannot be read: asset_package {body.asset_package!r} is no importable package"
    if missing:
        raise FileNotFoundError(f"{label('body', type(body))}: asset {body.asset!r} {missing} — set asset_package "
                                "to the package that holds the file (read with importlib.resources) and declare "
                                "the file as its package data")


def overrides(cls: type, base: type, method: str) -> bool:
    """Whether ``cls`` defines its own ``method`` instead of inheriting ``base``'s."""
    return getattr(cls, method, None) is not getattr(base, method)


ROOT = "torso"
"""The body every crax body's MJCF must name as its root: crax reads the agent's position and
heading from it."""


def category_of(contype: int, conaffinity: int) -> Any:
    """The :class:`crax.core.scene.Category` a geom's contype/conaffinity encode, ``0`` for a visual
    geom (both 0), None for a pair that is no category."""
    from crax.core.scene import TOUCHES

    if contype == 0 and conaffinity == 0:
        return 0
    for category, touches in TOUCHES.items():
        if contype == int(category) and conaffinity == int(touches):
            return category
    return None


def _geom_name(geom: mujoco.MjsGeom, index: int) -> str:
    if geom.name:
        return repr(geom.name)
    parent = getattr(geom, "parent", None)
    return f"#{index} (unnamed, on body {getattr(parent, 'name', '?')!r})"


_CATEGORY_FIX = ("give every collidable geom a category with crax.core.scene.collide_as(geom, Category.X) "
                 "(crax.core.scene.Category: FLOOR, AGENT, AGENT_FLOATING, HAZARD, WALL, PROP, PROP_FLOATING, "
                 "AGENT_WHEEL), "
                 "or make it visual only with crax.core.scene.no_collision(geom)")


def uncategorized(geoms: Iterable[mujoco.MjsGeom], allowed: Iterable[Any] | None = None) -> list[tuple[str, str]]:
    """(name, description) of each geom whose contype/conaffinity is no collision category (or
    not one of ``allowed``); visual geoms (both 0) always pass."""
    allowed = None if allowed is None else set(allowed)
    out = []
    for i, g in enumerate(geoms):
        category = category_of(int(g.contype), int(g.conaffinity))
        if category == 0:
            continue
        if category is None or (allowed is not None and category not in allowed):
            got = "no collision category" if category is None else f"category {category.name}"
            out.append((g.name, f"geom {_geom_name(g, i)} (contype={int(g.contype)}, "
                                f"conaffinity={int(g.conaffinity)}: {got})"))
    return out


def check_body_spec(body: Any, spec: mujoco.MjSpec) -> None:
    """Raises ValueError when a body's own MJCF (before it is attached under ``agent/``) lacks the
    root body ``torso`` or any actuator, or has a collidable geom outside the agent categories;
    TypeError for a navigation body without ``place``."""
    from crax.bodies.base import NAVIGATION, Body
    from crax.core.scene import Category

    cls = type(body)
    where = label("body", cls)
    if NAVIGATION in body.kinds and not overrides(cls, Body, "place"):
        raise TypeError(f"{where}: is a navigation body (its kinds include 'navigation') but defines no place() — "
                        "define place(self, qpos, xy, yaw), or drop 'navigation' from kinds (see docs/plugins.md)")
    if spec.body(ROOT) is None:
        names = [b.name for b in spec.bodies if b.name != "world"]
        raise ValueError(f"{where}: its MJCF has no body named {ROOT!r} (bodies: {', '.join(map(repr, names)) or 'none'}) "
                         f"— name the robot's root body {ROOT!r}: crax reads the agent's position and heading from it")
    if len(spec.actuators) == 0:
        raise ValueError(f"{where}: its MJCF has no actuator — add at least one (the action in [-1, 1]^n drives "
                         "the n actuators, scaled to their ctrlrange)")
    bad = uncategorized(spec.geoms, (Category.AGENT, Category.AGENT_FLOATING, Category.AGENT_WHEEL))
    if bad:
        raise ValueError(f"{where}: {'; '.join(text for _, text in bad)} — the body's collidable geoms must be Category.AGENT (they "
                         "touch the floor) or Category.AGENT_FLOATING (they never touch it: walls, hazards and props "
                         "only) or Category.AGENT_WHEEL (the floor only): call crax.core.scene.collide_as(geom, ...) in mjcf(), or set floor_contact and keep "
                         "the base mjcf(), or make the geom visual with crax.core.scene.no_collision(geom)")


def check_place(body: Any) -> None:
    """Raises ValueError when a navigation body's ``place`` does not return qpos of the body's own
    shape (traced with :func:`jax.eval_shape`, nothing compiled)."""
    import jax
    import jax.numpy as jnp

    from crax.bodies.base import NAVIGATION

    if NAVIGATION not in body.kinds:
        return
    nq = body.qpos_adr[1] - body.qpos_adr[0]
    qpos = jax.ShapeDtypeStruct((nq,), jnp.float32)
    try:
        got = jax.eval_shape(body.place, qpos, jax.ShapeDtypeStruct((2,), jnp.float32),
                             jax.ShapeDtypeStruct((), jnp.float32))
    except Exception as e:  # noqa: BLE001 - a plugin's code, named by class
        raise ValueError(f"{label('body', type(body))}: place(qpos, xy, yaw) fails on qpos of shape ({nq},): "
                         f"{type(e).__name__}: {e}") from None
    if tuple(getattr(got, "shape", ())) != (nq,):
        raise ValueError(f"{label('body', type(body))}: place(qpos, xy, yaw) returns shape {tuple(got.shape)}; "
                         f"expected ({nq},), the body's qpos — return qpos with the root joints set")


def check_scene_geoms(spec: mujoco.MjSpec, owner: str, parts: Mapping[str, str] | None = None) -> None:
    """Raises ValueError when a geom of the scene has no collision category, naming the component
    that just added MJCF: ``owner``, or the label in ``parts`` (geom-name prefix -> label, e.g. a
    suite's placeables) whose prefix the first such geom's name has."""
    bad = uncategorized(spec.geoms)
    if bad:
        owner = next((who for prefix, who in (parts or {}).items() if bad[0][0].startswith(prefix)), owner)
        raise ValueError(f"{owner}: {'; '.join(text for _, text in bad)} — {_CATEGORY_FIX}")


def check_components(constraints: Iterable[Any], sensors: Iterable[Any]) -> None:
    """Raises TypeError when a constraint has no usable ``term`` or a sensor no integer ``size``."""
    for c in constraints:
        term = getattr(c, "term", None)
        if not (isinstance(term, str) and term and "/" not in term):
            got = "no term" if term is None else f"term {term!r}"
            raise TypeError(f"{label('constraint', type(c))}: has {got} — set self.term (a non-empty name without "
                            "'/') in __init__: its cost is reported as metrics['cost/<term>']")
    for s in sensors:
        size = getattr(s, "size", None)
        if not (isinstance(size, int) and not isinstance(size, bool) and size >= 0):
            raise TypeError(f"{label('sensor', type(s))}: has size {size!r} — set size (an int >= 0, as a class "
                            "attribute or in __init__) to the number of floats observe() returns")
