"""Scene assembly with `mujoco.MjSpec`: arena + body + hazards and props -> `MjModel`.

Collision filtering uses MuJoCo's contype/conaffinity bitmasks: every geom gets the bit of its
*category* as ``contype`` and the bits of the categories it may touch as ``conaffinity``. The table
:data:`TOUCHES` is symmetric, so two geoms collide exactly when their categories touch. Keeping the
candidate pairs minimal is what keeps MJX fast: MJX evaluates every candidate pair at every
substep whether or not the geoms are near each other.
"""

from __future__ import annotations

import enum

import mujoco
import numpy as np


class Category(enum.IntFlag):
    """Collision categories (one bit each)."""

    FLOOR = 1
    AGENT = 2  # agent geoms that stand on the floor (legs, feet, torsos)
    AGENT_FLOATING = 4  # agent geoms that never touch the floor (the Point's sphere)
    HAZARD = 8  # collidable hazards (pillars, gremlins)
    WALL = 16
    PROP = 32  # movable props: touch floor, walls and agent, pass through hazards
    PROP_FLOATING = 64  # props on planar joints (Push's block): touch the agent only; joint limits keep them in
    AGENT_WHEEL = 128  # agent geoms that touch the floor only (the Car's wheels, the Doggo's torso: MJX has no box–cylinder contact)


_AGENTS = Category.AGENT | Category.AGENT_FLOATING
_PROPS = Category.PROP | Category.PROP_FLOATING
TOUCHES: dict[Category, Category] = {
    Category.FLOOR: Category.AGENT | Category.PROP | Category.AGENT_WHEEL,
    Category.AGENT: Category.FLOOR | Category.HAZARD | Category.WALL | _PROPS,
    Category.AGENT_FLOATING: Category.HAZARD | Category.WALL | _PROPS,
    Category.HAZARD: _AGENTS,
    Category.WALL: _AGENTS | Category.PROP,
    Category.PROP: Category.FLOOR | _AGENTS | Category.WALL,
    Category.PROP_FLOATING: _AGENTS,
    Category.AGENT_WHEEL: Category.FLOOR,
}

# Geom groups (for rendering toggles and ray-cast filters).
GROUP_AGENT, GROUP_HAZARD, GROUP_GOAL, GROUP_WALL = 1, 2, 3, 4


def collide_as(geom: mujoco.MjsGeom, category: Category) -> None:
    """Gives ``geom`` the contype/conaffinity of ``category``."""
    geom.contype = int(category)
    geom.conaffinity = int(TOUCHES[category])


def floor_only(spec: mujoco.MjSpec, geoms: tuple[str, ...], proxies: tuple[str, ...]) -> None:
    """Makes the named ``geoms`` touch the floor only (:data:`Category.AGENT_WHEEL`) and their
    ``proxies``, massless shapes that MJX can collide, take their contacts with objects
    (:data:`Category.AGENT_FLOATING`): MJX has no box–cylinder collision (the Car's, the Doggo's and
    the Racecar's cylinders)."""
    for name in geoms:
        collide_as(spec.geom(name), Category.AGENT_WHEEL)
    for name in proxies:
        collide_as(spec.geom(name), Category.AGENT_FLOATING)


def no_collision(geom: mujoco.MjsGeom) -> None:
    """Makes ``geom`` visual only."""
    geom.contype = 0
    geom.conaffinity = 0


def new_arena(*, timestep: float, floor_size: float = 10.0) -> mujoco.MjSpec:
    """An empty world with a floor, a default material, lights and the given physics timestep."""
    spec = mujoco.MjSpec()
    spec.modelname = "crax"
    spec.option.timestep = timestep
    # mjx.ray reads material alphas and fails on a model without any material.
    spec.add_material(name="_default")
    spec.add_texture(
        name="grid", type=mujoco.mjtTexture.mjTEXTURE_2D, builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER,
        width=256, height=256, rgb1=[0.82, 0.84, 0.86], rgb2=[0.74, 0.76, 0.78],
    )
    floor_mat = spec.add_material(name="floor", texrepeat=[8, 8])
    floor_mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "grid"
    floor = spec.worldbody.add_geom(
        name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[floor_size, floor_size, 0.1], material="floor"
    )
    collide_as(floor, Category.FLOOR)
    spec.worldbody.add_light(name="top", pos=[0, 0, 6], dir=[0, 0, -1], diffuse=[0.8, 0.8, 0.8])
    return spec


def add_walls(spec: mujoco.MjSpec, half_extent: float, height: float = 0.5) -> list[str]:
    """Four collidable walls, inner faces at ``±half_extent``. Returns their geom names.

    Each wall is a plane facing the arena's centre: the cheapest collision in MJX, and as solid
    as a box for anything inside the arena, and frictionless: ``condim=1`` with a priority that
    makes it the pair's condim (MuJoCo otherwise takes the larger of the two geoms'), one solver
    row per contact instead of four. The plane's local x axis runs along the wall and its
    local y axis up, so its size (the rendered rectangle, and the extent ``mjx.ray`` hits) is the
    wall's length by its height.
    """
    names = []
    faces = {"east": (1, 0), "west": (-1, 0), "north": (0, 1), "south": (0, -1)}
    up = np.array([0.0, 0.0, 1.0])
    for side, (sx, sy) in faces.items():
        normal = np.array([-sx, -sy, 0.0])
        frame = np.stack([np.cross(up, normal), up, normal], axis=1)  # columns: local x, y, z
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, frame.reshape(-1))
        pos = [sx * half_extent, sy * half_extent, height / 2]
        plane = spec.worldbody.add_geom(
            name=f"wall_{side}", type=mujoco.mjtGeom.mjGEOM_PLANE, pos=pos, quat=quat,
            size=[half_extent, height / 2, 0.1], group=GROUP_WALL, rgba=[0.5, 0.5, 0.55, 1.0], condim=1, priority=1,
        )
        collide_as(plane, Category.WALL)
        names.append(plane.name)
    return names


def attach_body(spec: mujoco.MjSpec, body_spec: mujoco.MjSpec, prefix: str = "agent/") -> None:
    """Attaches a body's own MJCF under ``prefix`` at the world origin."""
    frame = spec.worldbody.add_frame()
    spec.attach(body_spec, prefix=prefix, frame=frame)


def add_mocap(spec: mujoco.MjSpec, name: str, geom: dict, category: Category | None) -> mujoco.MjsBody:
    """A mocap body (moved at reset by writing ``mocap_pos``) carrying one geom.

    ``category`` None makes the geom visual only (zones, goals).
    """
    body = spec.worldbody.add_body(name=name, mocap=True, pos=[0.0, 0.0, -10.0])
    g = body.add_geom(name=name, **geom)
    if category is None:
        no_collision(g)
    else:
        collide_as(g, category)
    return body


def compile_spec(spec: mujoco.MjSpec) -> mujoco.MjModel:
    """Compiles ``spec``, turning MuJoCo's compile errors into ``ValueError`` with the model name."""
    try:
        return spec.compile()
    except Exception as e:  # mujoco raises a bare ValueError/RuntimeError without context
        raise ValueError(f"MuJoCo could not compile scene {spec.modelname!r}: {e}") from e


def geom_ids(m: mujoco.MjModel, names: list[str] | tuple[str, ...]) -> tuple[int, ...]:
    """Ids of the named geoms (static Python ints)."""
    return tuple(int(m.geom(n).id) for n in names)


def body_geom_ids(m: mujoco.MjModel, body_prefix: str) -> tuple[int, ...]:
    """Ids of every collidable geom on bodies whose name starts with ``body_prefix``."""
    out = []
    for gid in range(m.ngeom):
        bname = m.body(int(m.geom_bodyid[gid])).name
        if bname.startswith(body_prefix) and (m.geom_contype[gid] or m.geom_conaffinity[gid]):
            out.append(gid)
    return tuple(out)
