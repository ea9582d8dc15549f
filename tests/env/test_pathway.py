"""HalfCheetahPathway1 on hand-placed states: the zone cost of feet against hand-computed squared
falloffs (discs by Euclidean, squares by Chebyshev distance), feet in the air, the max over feet
and the sum over zones, the fall cost, the reward terms of one step, the lidar over the 10
nearest zones, the drawn-zone window, and the layout over many vmapped resets.

One env (``compiled("HalfCheetahPathway1")``) serves the file: its jitted ``step``, a vmapped
``reset`` and a hand-placement (MuJoCo's forward pass, :mod:`tests.env.c_forward`, then crax's
observation and costs, jitted). Other levels are checked through their
layout sampler alone.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import crax
from crax.bodies import HalfCheetah, Point
from crax.core.env import State
from crax.suites.pathway import Pathway
from crax.suites.task_env import NONFINITE_METRICS, TaskEnv
from tests.env import c_forward
from tests.env.conftest import compiled, observed

pytestmark = pytest.mark.slow  # the whole file: its fixtures compile its env (docs/contributing.md)

ENV_ID = "HalfCheetahPathway1"
BETA, R_DISC, HALF = 1.5, 0.25, 0.2
GROUNDED = (0.0, -0.08, 0.0)  # rootx, rootz, rooty: both foot sites below 0.1
BACK_FOOT_UP = (0.0, 0.0, 0.25)  # pitched forward: back foot in the air, front foot down
N_ZONES = 100


def env():
    return compiled(ENV_ID).env


def quiet_layout(x0: float = -50.0) -> np.ndarray:
    """100 zones sorted along +x, one metre apart, 0.3 m to the side: no foot at y = 0 reaches them."""
    return np.stack([x0 + np.arange(N_ZONES, dtype=np.float32), np.full(N_ZONES, 0.3, np.float32)], -1)


@functools.cache
def _arrange_fn():
    c = compiled(ENV_ID)
    e, suite, body = c.env, c.env.suite, c.env.body

    @jax.jit
    def observe(data, zones, site_xpos):
        data = suite.move(data, zones)
        # site_xpos with NaN rows keeps MuJoCo's foot positions; given rows replace them (hand feet)
        data = data.replace(site_xpos=jnp.where(jnp.isnan(site_xpos), data.site_xpos, site_xpos))
        task = {"zones": zones, "fell": ~body.healthy(data)}
        return observed(e, data, task, c.template.metrics, {"task": task, "steps": jnp.zeros((), jnp.int32)})

    def arrange(root, zones, site_xpos):
        qpos = np.zeros(body.qpos_adr[1] - body.qpos_adr[0], np.float32)
        qpos[:3] = root
        data = e._data0.replace(qpos=e._data0.qpos.at[slice(*body.qpos_adr)].set(qpos))
        return observe(c_forward.forward(e, data), zones, site_xpos)

    return arrange


def arrange(root=GROUNDED, zones=None, feet=None) -> State:
    """A hand-placed state: root (x, z, pitch), all other joints 0; ``feet`` (2, 3) overrides the sites."""
    e = env()
    zones = quiet_layout() if zones is None else zones
    site_xpos = np.full((e.mj_model.nsite, 3), np.nan, np.float32)
    if feet is not None:
        site_xpos[list(e.suite.constraints[0].site_ids)] = feet
    state = _arrange_fn()(jnp.asarray(root, jnp.float32), jnp.asarray(zones, jnp.float32), jnp.asarray(site_xpos))
    assert jax.tree.structure(state) == jax.tree.structure(compiled(ENV_ID).template)
    return state


def feet(state: State) -> np.ndarray:
    """World positions (2, 3) of the back and front foot sites."""
    return np.asarray(state.data.site_xpos)[list(env().suite.constraints[0].site_ids)]


def falloff(d: float, r: float) -> float:
    return max(0.0, 1.0 - d / r) ** 2


def test_observation_size_and_metric_names():
    template = compiled(ENV_ID).template
    assert template.obs.shape == (34,)  # 18 body + 16 lidar
    assert env().observation_size == 34
    assert set(template.metrics) == {"reward/forward", "reward/healthy", "cost/zones", "cost/fall", *NONFINITE_METRICS}
    assert env().suite.constraints[0].feet == ("agent/bfoot", "agent/ffoot")


def test_disc_zone_under_a_grounded_foot():
    back, front = feet(arrange())
    assert back[2] < 0.1 and front[2] < 0.1
    zones = quiet_layout()
    zones[50] = back[:2] + (0.1, 0.05)  # zone 50 is a disc; d = |(0.1, 0.05)|
    s = arrange(zones=zones)
    want = BETA * falloff(np.hypot(0.1, 0.05), R_DISC)
    np.testing.assert_allclose(s.metrics["cost/zones"], want, rtol=1e-4)
    np.testing.assert_allclose(s.cost, want, rtol=1e-4)
    assert s.metrics["cost/fall"] == 0.0


@pytest.mark.parametrize(
    ("offset", "chebyshev"),
    [((0.05, -0.12), 0.12), ((0.15, 0.15), 0.15), ((0.0, 0.0), 0.0), ((0.25, 0.0), 0.25)],
)
def test_square_zone_uses_the_chebyshev_distance(offset, chebyshev):
    _, front = feet(arrange())
    zones = quiet_layout()
    zones[51] = front[:2] - np.asarray(offset, np.float32)  # zone 51 is a square
    s = arrange(zones=zones)
    # (0.15, 0.15) lies in the square's corner, outside its inscribed disc: it still costs.
    np.testing.assert_allclose(s.metrics["cost/zones"], BETA * falloff(chebyshev, HALF), rtol=1e-4, atol=1e-6)


def test_foot_in_the_air_costs_nothing():
    up = arrange(root=BACK_FOOT_UP)
    back, front = feet(up)
    assert back[2] > 0.1 and front[2] < 0.1
    zones = quiet_layout()
    zones[50] = back[:2]  # right under the raised foot
    assert arrange(root=BACK_FOOT_UP, zones=zones).metrics["cost/zones"] == 0.0
    zones[50] = front[:2]  # the same zone under the grounded foot: full cost β
    np.testing.assert_allclose(arrange(root=BACK_FOOT_UP, zones=zones).metrics["cost/zones"], BETA, rtol=1e-5)


def test_two_feet_in_one_zone_take_the_max_and_zones_sum():
    zones = quiet_layout()
    zones[50] = (10.0, 0.0)  # disc
    zones[51] = (10.3, 0.0)  # square, overlapping the disc
    both_in_disc = np.array([[10.05, 0.0, 0.04], [9.9, 0.0, 0.04]], np.float32)  # d = 0.05 and 0.1
    s = arrange(zones=zones, feet=both_in_disc)
    # the square is 0.25 and 0.4 away (Chebyshev): nothing from it
    np.testing.assert_allclose(s.metrics["cost/zones"], BETA * falloff(0.05, R_DISC), rtol=1e-4)

    one_in_each = np.array([[9.9, 0.0, 0.04], [10.4, 0.05, 0.04]], np.float32)
    s = arrange(zones=zones, feet=one_in_each)
    # disc: back foot d = 0.1, front foot d = 0.403 (outside); square: front foot 0.1, back foot 0.4
    np.testing.assert_allclose(
        s.metrics["cost/zones"], BETA * (falloff(0.1, R_DISC) + falloff(0.1, HALF)), rtol=1e-4
    )

    one_foot_in_both = np.array([[10.15, 0.0, 0.04], [20.0, 0.0, 0.04]], np.float32)
    s = arrange(zones=zones, feet=one_foot_in_both)
    np.testing.assert_allclose(
        s.metrics["cost/zones"], BETA * (falloff(0.15, R_DISC) + falloff(0.15, HALF)), rtol=1e-4
    )


def test_lidar_sees_the_ten_nearest_zones_with_bin_zero_along_x():
    # Flipped over (pitch 2.5 rad): the torso's own yaw would read π; the lidar stays along +x.
    root = (3.0, 0.0, 2.5)
    width = 2 * np.pi / 16
    near_bins = [0, 1, 2, 3, 4, 11, 12, 13, 14, 15]
    dist = {b: 1.0 + 0.1 * i for i, b in enumerate(near_bins)}
    far = {7: 3.0, 8: 3.5}  # 11th and 12th nearest: within range, but not among the 10
    zones = quiet_layout(x0=200.0)
    for i, (b, d) in enumerate([*dist.items(), *far.items()]):
        a = (b + 0.5) * width
        zones[i] = (root[0] + d * np.cos(a), d * np.sin(a))
    lidar = np.asarray(arrange(root=root, zones=zones).obs[18:])
    want = np.zeros(16)
    for b, d in dist.items():
        want[b] = 1.0 - d / 5.0
    want[5] = 0.5 * want[4]  # aliasing at the bin centre: half the reading to each neighbour
    want[10] = 0.5 * want[11]
    np.testing.assert_allclose(lidar, want, atol=1e-5)
    assert np.all(lidar[6:10] == 0.0)  # the two far zones do not show


@pytest.mark.slow
def test_step_reward_cost_and_drawn_window():
    c = compiled(ENV_ID)
    x = 30.2
    back, front = feet(arrange(root=(x, -0.08, 0.0)))
    zones = quiet_layout(x0=0.0)  # zone i at (i, 0.3)
    zones[30] = back[:2] + (0.05, 0.0)  # disc
    zones[31] = front[:2] + (-0.05, 0.03)  # square
    assert np.all(np.diff(zones[:, 0]) > 0)
    s0 = arrange(root=(x, -0.08, 0.0), zones=zones)
    assert s0.cost > 0
    s1 = c.step(s0, jnp.zeros(6))
    m = {k: float(v) for k, v in s1.metrics.items()}

    torso = env().body.torso_id
    v = (float(s1.data.xpos[torso, 0]) - float(s0.data.xpos[torso, 0])) / env().dt
    np.testing.assert_allclose(m["reward/forward"], v, rtol=1e-4, atol=1e-5)
    assert m["reward/healthy"] == 0.0  # HalfCheetah has no healthy bonus and never falls
    np.testing.assert_allclose(float(s1.reward), m["reward/forward"], rtol=1e-6)

    f = feet(s1)
    want = 0.0
    for i, (zx, zy) in enumerate(zones):
        delta = f[:, :2] - (zx, zy)
        d = np.abs(delta).max(-1) if i % 2 else np.hypot(delta[:, 0], delta[:, 1])
        per_foot = np.where(f[:, 2] < 0.1, np.maximum(0.0, 1.0 - d / (HALF if i % 2 else R_DISC)) ** 2, 0.0)
        want += per_foot.max()
    assert want > 0
    np.testing.assert_allclose(m["cost/zones"], BETA * want, rtol=1e-4)
    assert m["cost/fall"] == 0.0 and float(s1.done) == 0.0
    np.testing.assert_allclose(float(s1.cost), m["cost/zones"], rtol=1e-6)

    # The 10 drawn zones: 31 zones lie behind the torso, window start even floor of 31 - 5 = 26.
    ids = list(env().suite.zones.mocap_ids)
    np.testing.assert_allclose(np.asarray(s1.data.mocap_pos)[ids, :2], zones[26:36], atol=1e-6)
    geoms = list(env().suite.zones.geom_ids)  # their geoms move at once too (no wait for the next step)
    np.testing.assert_allclose(np.asarray(s1.data.geom_xpos)[geoms, :2], zones[26:36], atol=1e-6)


class _FallingCheetah(HalfCheetah):
    """A HalfCheetah that falls below 0.5 m torso height and earns a healthy bonus of 1."""

    name = "FallingCheetah"
    healthy_z = (0.5, 2.0)
    healthy_reward = 1.0


def test_fall_cost_and_healthy_reward_on_a_body_that_falls():
    e = TaskEnv(Pathway(_FallingCheetah(), 1))  # same scene as HalfCheetahPathway1; nothing is compiled by jit here
    suite = e.suite  # the env's own (bound) copy of the suite
    before = arrange(root=(0.0, 0.0, 0.0))
    for root, healthy in (((0.1, -0.08, 0.0), True), ((0.1, -0.3, 0.0), False)):  # torso z 0.62, 0.40
        after = arrange(root=root)
        _, tr = suite.transition(e.mjx_model, before.data, after.data, before.info["task"], jnp.zeros(6))
        costs = suite.costs(suite.context(e.mjx_model, after.data, tr.task))
        assert bool(tr.terminated) is (not healthy)
        np.testing.assert_allclose(costs["fall"], 0.0 if healthy else 5.0)
        np.testing.assert_allclose(tr.rewards["healthy"], 1.0 if healthy else 0.0)
        np.testing.assert_allclose(tr.reward, 0.1 / e.dt + tr.rewards["healthy"], rtol=1e-4)


@pytest.mark.slow
def test_layout_over_vmapped_resets():
    e = env()
    states = jax.jit(jax.vmap(e.reset))(jax.random.split(jax.random.key(3), 256))
    zones = np.asarray(states.info["task"]["zones"])
    assert zones.shape == (256, N_ZONES, 2)
    x, y, gaps = zones[..., 0], zones[..., 1], np.diff(zones[..., 0], axis=-1)
    assert np.all((x[:, 0] >= 1.0) & (x[:, 0] <= 2.0))
    assert x[:, 0].min() < 1.05 and x[:, 0].max() > 1.95
    assert np.all((gaps >= 1.0 - 1e-4) & (gaps <= 6.0 + 1e-4))
    assert gaps.min() < 1.01 and gaps.max() > 5.99
    assert np.all(np.abs(y) <= 0.25) and y.min() < -0.249 and y.max() > 0.249
    assert len(np.unique(x[:, 0])) == 256  # a fresh layout per episode
    # the drawn window at the start: zones 0..9 (the torso is behind every zone)
    mocap = np.asarray(states.data.mocap_pos)[:, list(e.suite.zones.mocap_ids)]
    np.testing.assert_allclose(mocap[..., :2], zones[:, :10], atol=1e-6)
    np.testing.assert_allclose(mocap[..., 2], 0.005)
    assert np.all(np.asarray(states.obs)[:, 18:].max(-1) > 0)  # the first zones are in lidar range


@pytest.mark.parametrize(("level", "max_gap"), [(1, 6.0), (2, 4.0), (3, 2.0)])
def test_gaps_by_level(level, max_gap):
    zones = Pathway(HalfCheetah(), level).zones
    xy = np.asarray(jax.jit(jax.vmap(zones.sample))(jax.random.split(jax.random.key(level), 64)))
    gaps = np.diff(xy[..., 0], axis=-1)
    assert np.all((gaps >= 1.0 - 1e-4) & (gaps <= max_gap + 1e-4))
    assert gaps.max() > max_gap - 0.01


def test_zones_alternate_discs_and_squares():
    m = env().mj_model
    zones = env().suite.zones
    assert zones.count == N_ZONES and zones.rendered == 10
    for j in range(zones.rendered):
        g = m.geom(f"zones/{j}")
        assert g.contype == 0 and g.conaffinity == 0
        if j % 2 == 0:
            assert g.type == mujoco.mjtGeom.mjGEOM_CYLINDER
            np.testing.assert_allclose(g.size[0], R_DISC)
        else:
            assert g.type == mujoco.mjtGeom.mjGEOM_BOX
            np.testing.assert_allclose(g.size[:2], HALF)
    assert zones.square == tuple(i % 2 == 1 for i in range(N_ZONES))


@pytest.mark.parametrize(("env_id", "size", "feet"), [
    ("Walker2dPathway1", 17 + 16, ("agent/foot", "agent/foot_left")),
    ("HopperPathway1", 11 + 16, ("agent/foot",)),
])
@pytest.mark.slow
def test_other_planar_bodies(env_id, size, feet):
    e = crax.make(env_id)
    assert e.observation_size == size  # by eval_shape: nothing compiled
    assert e.suite.constraints[0].feet == feet


def test_bad_input_names_the_choices():
    with pytest.raises(ValueError, match="valid levels: 1, 2, 3"):
        Pathway(HalfCheetah(), 4)
    with pytest.raises(ValueError, match="names no foot sites"):
        Pathway(Point(), 1)
