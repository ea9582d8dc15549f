"""Plain-MuJoCo checks of a Safety-Gymnasium agent's own model (nothing compiled): its readings
against MuJoCo's sensor stage, and the pairs of its geoms that Safety-Gymnasium's could collide."""

from __future__ import annotations

import copy
from collections.abc import Callable

import mujoco
import numpy as np

from crax.core.mjx import mjx

Draw = Callable[[np.random.Generator, mujoco.MjModel, int], tuple[list[float], np.ndarray, np.ndarray]]
"""The ``k``-th random state of the agent: its qpos, qvel and first controls."""


def sensing(env) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """A copy of the env's model with MuJoCo's sensor stage on (the body's MJCF carries
    Safety-Gymnasium's sensors), and its data."""
    m = copy.deepcopy(env.mj_model)
    m.opt.disableflags &= ~int(mujoco.mjtDisableBit.mjDSBL_SENSOR)
    return m, mujoco.MjData(m)


def observed(body, m: mujoco.MjModel, d: mujoco.MjData) -> np.ndarray:
    """The body's readings computed from MuJoCo's data, op by op (nothing compiled)."""
    return np.asarray(body.observe(mjx.put_data(m, d, impl="jax")))


def assert_readings_are_the_sensor_stage(env, draw: Draw, reading: Callable[[str, int, np.ndarray], np.ndarray],
                                         states: int = 6) -> None:
    """On ``states`` random states (``draw``, seeded), the body's readings equal MuJoCo's sensors
    (each key's, as ``reading(key, size, data)`` turns it into the body's entries)."""
    body = env.body
    m, d = sensing(env)
    rng = np.random.default_rng(0)
    for k in range(states):
        qpos, qvel, ctrl = draw(rng, m, k)
        d.qpos[slice(*body.qpos_adr)], d.qvel[slice(*body.qvel_adr)], d.ctrl[: len(ctrl)] = qpos, qvel, ctrl
        mujoco.mj_forward(m, d)
        expect = np.concatenate([reading(key, size, d.sensor(body.prefix + key).data) for key, size in body.obs_keys])
        np.testing.assert_allclose(observed(body, m, d), expect, rtol=1e-5, atol=1e-4, err_msg=f"state {k}")


def unrelated_pairs(m: mujoco.MjModel, geoms: list[int]) -> list[tuple[int, int]]:
    """The pairs of ``geoms`` whose bodies are neither welded together nor parent and child: those
    MuJoCo would collide with each other (Safety-Gymnasium's agents; crax's collide with neither)."""
    weld, parent = m.body_weldid, m.body_parentid

    def adjacent(a: int, b: int) -> bool:
        wa, wb = weld[m.geom_bodyid[a]], weld[m.geom_bodyid[b]]
        return wa == wb or wa == weld[parent[wb]] or wb == weld[parent[wa]]

    return [(a, b) for i, a in enumerate(geoms) for b in geoms[i + 1:] if not adjacent(a, b)]


def agent_geoms(m: mujoco.MjModel, *, leave_out: tuple[str, ...] = ()) -> list[int]:
    """The agent's geoms (its bodies are named ``agent/...``), but those named in ``leave_out``."""
    return [g for g in range(m.ngeom) if m.body(int(m.geom_bodyid[g])).name.startswith("agent/")
            and m.geom(g).name.removeprefix("agent/") not in leave_out]
