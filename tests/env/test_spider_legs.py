"""SpiderLegs on hand-placed poses: which feet touch the floor (against MuJoCo C's contacts), the
cost of restricted and unrestricted feet at every level, the reward terms and termination of one
step, sizes, and the ids ``crax.make`` accepts.

Poses: the torso upright at z 0.5 with every hip at 0; a foot is *down* with its ankle at 70°
(foot centre 0.5 − 0.566·sin 70° = −0.03, 0.11 into the floor) and *up* at 30° (centre 0.22,
0.14 above the floor). One env is compiled (``compiled("SpiderLegs1")``: its ``reset`` and
``step``) plus one jitted ``mjx.forward`` for the poses; the other levels' costs are their
constraint evaluated on the same poses (the scene is the same at every level).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import crax
from crax.bodies import Spider
from crax.core.context import Context
from crax.core.mjx import mjx
from crax.costs.foot_contact import FootContact
from crax.suites.spider_legs import SpiderLegs
from crax.suites.task_env import NONFINITE_METRICS
from tests.env.conftest import compiled

RESTRICTED = SpiderLegs.params["restricted_feet"].levels  # the declared restricted feet by level

ENV_ID = "SpiderLegs1"
FEET = ("front_left", "front_right", "mid_left", "mid_right", "back_left", "back_right")
DOWN, UP = np.radians(70.0), np.radians(30.0)
TORSO_Z = 0.5
STANDING_Z = 0.08 - 0.001 + 0.56569 * np.sin(DOWN)  # the down feet 1 mm into the floor


def env():
    return compiled(ENV_ID).env


def pose(down: tuple[str, ...] | set[str], z: float = TORSO_Z) -> np.ndarray:
    """qpos: torso upright at ``z``, the ``down`` feet on (into) the floor, the others lifted."""
    m = env().mj_model
    q = np.array(m.qpos0, np.float32)
    q[2], q[3:7] = z, (1.0, 0.0, 0.0, 0.0)
    for foot in FEET:
        q[m.joint(f"agent/{foot}_hip").qposadr[0]] = 0.0
        q[m.joint(f"agent/{foot}_ankle").qposadr[0]] = DOWN if foot in down else UP
    return q


@functools.cache
def _forward():
    e = env()
    return jax.jit(lambda qpos: mjx.forward(e.mjx_model, e._data0.replace(qpos=qpos)))


def arrange(down) -> tuple[object, Context]:
    """The posed data (kinematics and collision) and the suite's context on it."""
    e = env()
    data = _forward()(jnp.asarray(pose(down)))
    return data, e.suite.context(e.mjx_model, data, {})


def mujoco_touching(qpos: np.ndarray) -> set[str]:
    """Feet in contact with the floor by MuJoCo C (mj_forward on the same pose)."""
    m = env().mj_model
    d = mujoco.MjData(m)
    d.qpos[:] = qpos
    mujoco.mj_forward(m, d)
    out = set()
    for c in d.contact[: d.ncon]:
        names = {m.geom(int(c.geom1)).name, m.geom(int(c.geom2)).name}
        if "floor" in names and c.dist < 0:
            out |= {n.removeprefix("agent/") for n in names - {"floor"}}
    return out


def level_cost(level: int, ctx: Context) -> float:
    c = FootContact(tuple(f"agent/{f}" for f in RESTRICTED[level]))
    c.bind(env().mj_model)
    return float(c.cost(ctx))


@pytest.mark.slow
def test_sizes_metrics_and_id():
    e = env()
    assert e.id == ENV_ID and e.episode_length == 1000 and e.dt == pytest.approx(0.05)
    state = e.state_shapes
    assert state.obs.shape == (35,) and e.action_size == 12
    assert set(state.metrics) == {"reward/forward", "reward/healthy", "reward/ctrl", "cost/legs", *NONFINITE_METRICS}
    assert e.suite.constraints[0].feet == ("agent/front_left", "agent/back_right")
    # the feet are the only colliding agent geoms, the floor the only thing they touch: 6 slots
    assert e._data0._impl.contact.geom.shape == (6, 2)


@pytest.mark.parametrize("foot", FEET)
@pytest.mark.slow
def test_each_foot_alone_on_the_floor(foot):
    data, ctx = arrange({foot})
    assert mujoco_touching(pose({foot})) == {foot}
    touching = np.asarray(env().suite.constraints[0].contacts(ctx))
    assert touching.tolist() == [f == foot for f in RESTRICTED[1]]
    for level in (1, 2, 3):
        assert level_cost(level, ctx) == (1.0 if foot in RESTRICTED[level] else 0.0), level
    costs = env().suite.costs(ctx)
    assert float(costs["legs"]) == (1.0 if foot in RESTRICTED[1] else 0.0)


@pytest.mark.parametrize("level", [1, 2, 3])
def test_restricted_sets_by_level(level):
    restricted = set(RESTRICTED[level])
    assert SpiderLegs(Spider(), level).restricted_feet == RESTRICTED[level]
    free = set(FEET) - restricted
    for down, want in (
        (set(FEET), len(restricted)),  # all six down: each restricted foot once
        (free, 0.0),  # the unrestricted feet cost nothing
        (restricted, len(restricted)),
        ((), 0.0),
        ({sorted(restricted)[0], sorted(free)[0]}, 1.0),
    ):
        _, ctx = arrange(down)
        assert mujoco_touching(pose(down)) == set(down)
        assert level_cost(level, ctx) == want, (level, down)


def test_cost_scale_is_a_weight():
    _, ctx = arrange(set(FEET))
    c = FootContact(("agent/front_left", "agent/back_right"), cost_scale=2.5)
    c.bind(env().mj_model)
    assert float(c.cost(ctx)) == 5.0


@pytest.mark.slow
def test_step_reward_terms_cost_and_termination():
    c = compiled(ENV_ID)
    reset = c.reset(jax.random.key(0))
    # standing on the four unrestricted feet plus front_left, back_right lifted: after a
    # zero-action step exactly front_left's contact costs
    stand = reset.replace(data=_forward()(jnp.asarray(pose(set(FEET) - {"back_right"}, z=STANDING_Z))))
    s1 = c.step(stand, jnp.zeros(12))
    pairs = [tuple(env().mj_model.geom(int(g)).name for g in p) for p in np.asarray(s1.data._impl.contact.geom)]
    dist = np.asarray(s1.data._impl.contact.dist)
    touching = {n.removeprefix("agent/") for p, d in zip(pairs, dist, strict=True) if d < 0 for n in p if n != "floor"}
    assert touching == set(FEET) - {"back_right"}
    assert float(s1.metrics["cost/legs"]) == float(s1.cost) == 1.0
    assert float(s1.done) == 0.0 and float(s1.metrics["reward/ctrl"]) == 0.0

    action = np.linspace(-1.5, 1.5, 12).astype(np.float32)  # the ends clip to ±1
    s2 = c.step(stand, jnp.asarray(action))
    m = {k: float(v) for k, v in s2.metrics.items()}
    torso = env().body.torso_id
    v = (float(s2.data.xpos[torso, 0]) - float(stand.data.xpos[torso, 0])) / 0.05
    assert m["reward/forward"] == pytest.approx(v, rel=1e-4, abs=1e-5)
    assert m["reward/healthy"] == 1.0
    assert m["reward/ctrl"] == pytest.approx(-0.5 * np.sum(np.clip(action, -1, 1) ** 2), rel=1e-6)
    assert float(s2.reward) == pytest.approx(m["reward/forward"] + 1.0 + m["reward/ctrl"], rel=1e-5)

    # unhealthy (torso at 0.1, upside down, the legs in the air) ends the episode without the bonus
    low = pose(())
    low[2], low[3:7] = 0.1, (0.0, 1.0, 0.0, 0.0)
    s3 = c.step(reset.replace(data=_forward()(jnp.asarray(low))), jnp.zeros(12))
    assert float(s3.done) == 1.0 and float(s3.metrics["reward/healthy"]) == 0.0
    assert float(s3.cost) == 0.0


def test_ids_make_and_bad_input():
    e = crax.make("SpiderLegs2")
    assert e.id == "SpiderLegs2" and e.suite.restricted_feet == RESTRICTED[2]
    assert crax.parse_id("SpiderLegs3")[0] is Spider
    assert {"SpiderLegs1", "SpiderLegs2", "SpiderLegs3"} <= set(crax.env_ids())
    with pytest.raises(ValueError, match="names no known suite"):
        crax.make("AntLegs1")
    for named in ("AntSpiderLegs1", "SpiderSpiderLegs1"):  # the suite names its body: ids name none
        with pytest.raises(ValueError, match="SpiderLegs ids name no body"):
            crax.make(named)
    with pytest.raises(ValueError, match="valid levels: 1, 2, 3"):
        crax.make("SpiderLegs4")
    with pytest.raises(ValueError, match="front_left, front_right, mid_left"):
        SpiderLegs(Spider(), 1, restricted_feet=("tail",))
    with pytest.raises(ValueError, match="valid parameters"):
        crax.make("SpiderLegs1", restricted=("front_left",))
    e = crax.make("SpiderLegs1", restricted_feet=("mid_left",), cost_scale=3.0)
    assert e.suite.constraints[0].feet == ("agent/mid_left",)
    assert float(e.suite.constraints[0].cost_scale[...]) == 3.0
