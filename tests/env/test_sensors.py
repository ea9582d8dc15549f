"""Sensors on hand-built inputs: pseudo-lidar bins, compasses, and the proprioceptive readings
against MuJoCo's own sensors (CPU ``mj_forward`` with the sensor stage on).

The natural (ray-cast) lidar needs a whole scene; it is tested in ``test_point_goal3.py``.
"""

from __future__ import annotations

import importlib.resources
import math

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

from crax.bodies.point import Point
from crax.core.context import Context
from crax.core.mjx import mjx
from crax.objects.walls import wall_points
from crax.sensors import Accelerometer, Compass, Gyro, Lidar, Magnetometer, Velocimeter, pseudo_lidar
from crax.sensors.compass import Distance
from crax.sensors.lidar import RANKED, CircleLidar, atan2, nearest

B = 16
W = 2 * math.pi / B  # bin width
D = 3.0


def world_point(agent_xy, yaw, angle, dist):
    """The world position seen at ego-frame ``angle`` (counter-clockwise from the heading), ``dist``."""
    a = yaw + angle
    return (agent_xy[0] + dist * math.cos(a), agent_xy[1] + dist * math.sin(a))


def lidar(agent_xy, yaw, points, **kw):
    kw = {"num_bins": B, "max_dist": D, **kw}
    out = pseudo_lidar(jnp.asarray(agent_xy, jnp.float32), jnp.asarray(yaw, jnp.float32),
                       jnp.asarray(points, jnp.float32).reshape(-1, 2), **kw)
    return np.asarray(out)


def expected(entries, num_bins=B):
    out = np.zeros(num_bins)
    for b, v in entries.items():
        out[b % num_bins] = v
    return out


# ---------------------------------------------------------------------------------------------
# Pseudo-lidar (SPEC section 4).

AGENTS = [((0.0, 0.0), 0.0), ((1.0, -0.5), 0.7), ((-2.0, 1.5), -2.9), ((0.3, 0.3), math.pi / 2)]


@pytest.mark.parametrize(("agent", "yaw"), AGENTS)
def test_pseudo_lidar_single_object_with_aliasing(agent, yaw):
    # Ego angle 2.25 bins: bin 2 reads (D - d)/D, the next bin alpha = 0.25 of it, the previous 0.75.
    p = world_point(agent, yaw, 2.25 * W, 1.2)
    r = (D - 1.2) / D
    np.testing.assert_allclose(lidar(agent, yaw, [p]), expected({2: r, 3: 0.25 * r, 1: 0.75 * r}), atol=1e-5)
    np.testing.assert_allclose(lidar(agent, yaw, [p], alias=False), expected({2: r}), atol=1e-5)


@pytest.mark.parametrize(("agent", "yaw"), AGENTS)
def test_pseudo_lidar_wraps_around(agent, yaw):
    # Just clockwise of the heading (ego angle -0.4 bins = 15.6 bins): bin 15, aliasing into 0 and 14.
    p = world_point(agent, yaw, -0.4 * W, 0.6)
    r = (D - 0.6) / D
    np.testing.assert_allclose(lidar(agent, yaw, [p]), expected({15: r, 0: 0.6 * r, 14: 0.4 * r}), atol=1e-5)


def test_pseudo_lidar_bins_run_counter_clockwise_from_heading():
    yaw = 0.4
    for b in range(B):
        p = world_point((0.0, 0.0), yaw, (b + 0.5) * W, 1.5)  # centre of bin b
        out = lidar((0.0, 0.0), yaw, [p], alias=False)
        assert int(np.argmax(out)) == b
        assert out[b] == pytest.approx(0.5, abs=1e-5)
    # A world object straight along +y seen by an agent facing +y is at the start of bin 0.
    out = lidar((0.0, 0.0), math.pi / 2, [(0.05, 2.0)], alias=False)
    assert int(np.argmax(out)) == 15  # slightly to the right: clockwise of the heading
    out = lidar((0.0, 0.0), math.pi / 2, [(-0.05, 2.0)], alias=False)
    assert int(np.argmax(out)) == 0


def test_pseudo_lidar_max_combines_and_ignores_far_objects():
    agent, yaw = (0.5, -1.0), 1.1
    near = world_point(agent, yaw, 4.5 * W, 0.9)  # bin 4, alpha 0.5
    far = world_point(agent, yaw, 4.8 * W, 2.4)  # same bin, weaker
    side = world_point(agent, yaw, 5.1 * W, 1.5)  # bin 5 direct reading 0.5 vs alias 0.5 * 0.7
    out_of_range = world_point(agent, yaw, 10.5 * W, 3.5)
    r_near, r_far, r_side = (D - 0.9) / D, (D - 2.4) / D, (D - 1.5) / D
    bins = {
        4: max(r_near, r_far, 0.9 * r_side),
        5: max(0.5 * r_near, 0.8 * r_far, r_side),
        3: max(0.5 * r_near, 0.2 * r_far),
        6: 0.1 * r_side,
    }
    out = lidar(agent, yaw, [near, far, side, out_of_range])
    np.testing.assert_allclose(out, expected(bins), atol=1e-5)
    assert np.all(lidar(agent, yaw, [out_of_range]) == 0.0)


def reference_lidar(xy, yaw, points, num_bins, max_dist):
    """SPEC section 4, written plainly."""
    out = np.zeros(num_bins)
    width = 2 * np.pi / num_bins
    for p in points:
        rel = np.asarray(p) - np.asarray(xy)
        ego = np.array([np.cos(-yaw) * rel[0] - np.sin(-yaw) * rel[1], np.sin(-yaw) * rel[0] + np.cos(-yaw) * rel[1]])
        d = np.linalg.norm(ego)
        theta = np.arctan2(ego[1], ego[0]) % (2 * np.pi)
        pos = theta / width
        b = int(np.floor(pos)) % num_bins
        alpha = pos - np.floor(pos)
        reading = max(0.0, max_dist - d) / max_dist
        out[b] = max(out[b], reading)
        out[(b + 1) % num_bins] = max(out[(b + 1) % num_bins], alpha * reading)
        out[(b - 1) % num_bins] = max(out[(b - 1) % num_bins], (1 - alpha) * reading)
    return out


@pytest.mark.parametrize("num_bins", [8, 16])
def test_pseudo_lidar_matches_reference_on_random_scenes(num_bins):
    rng = np.random.default_rng(num_bins)
    for _ in range(20):
        xy = rng.uniform(-2, 2, 2)
        yaw = rng.uniform(-np.pi, np.pi)
        pts = rng.uniform(-3, 3, (7, 2))
        # keep clear of bin boundaries, where float32 may pick the neighbouring bin
        ang = (np.arctan2(*(pts - xy)[:, ::-1].T) - yaw) % (2 * np.pi) / (2 * np.pi / num_bins)
        pts = pts[np.abs(ang - np.round(ang)) > 1e-3]
        got = lidar(xy, yaw, pts, num_bins=num_bins, max_dist=2.5)
        np.testing.assert_allclose(got, reference_lidar(xy, yaw, pts, num_bins, 2.5), atol=2e-5)


def test_lidar_sensor_reads_its_task_class():
    ctx = Context(model=None, data=None, agent_xy=jnp.zeros(2), agent_yaw=jnp.zeros(()),
                  task={"goal": jnp.asarray([world_point((0, 0), 0, 4.5 * W, 1.5)]),
                        "hazards": jnp.asarray([world_point((0, 0), 0, 4.5 * math.pi / 4, 1.5)])})
    goal = np.asarray(Lidar("goal", alias=False).observe(ctx))
    hazards = np.asarray(Lidar("hazards", num_bins=8, max_dist=2.0, alias=False).observe(ctx))
    assert goal.shape == (16,) and np.argmax(goal) == 4 and goal[4] == pytest.approx(0.5)
    assert hazards.shape == (8,) and np.argmax(hazards) == 4 and hazards[4] == pytest.approx(0.25)


# ---------------------------------------------------------------------------------------------
# Compass.


def compass(agent_xy, yaw, points, count):
    ctx = Context(model=None, data=None, agent_xy=jnp.asarray(agent_xy, jnp.float32),
                  agent_yaw=jnp.asarray(yaw, jnp.float32), task={"things": jnp.asarray(points, jnp.float32)})
    return np.asarray(Compass("things", count=count).observe(ctx))


def test_compass_unit_vectors_sorted_by_distance_and_padded():
    agent, yaw = (0.5, 0.5), math.pi / 2  # facing +y: ego x = world +y, ego y = world -x
    points = [(0.5, 2.5), (3.5, -3.5), (-0.5, 0.5)]  # offsets (0, 2), (3, -4), (-1, 0)
    ordered = [(0.0, 1.0), (1.0, 0.0), (-0.8, -0.6)]  # nearest first: d = 1, 2, 5
    np.testing.assert_allclose(compass(agent, yaw, points, 5), np.r_[np.ravel(ordered), np.zeros(4)], atol=1e-6)
    np.testing.assert_allclose(compass(agent, yaw, points, 3), np.ravel(ordered), atol=1e-6)
    np.testing.assert_allclose(compass(agent, yaw, points, 2), np.ravel(ordered[:2]), atol=1e-6)  # top-k path
    np.testing.assert_allclose(compass(agent, yaw, points[1:2], 1), ordered[2], atol=1e-6)


def test_compass_many_objects_top_k_and_unit_norm():
    rng = np.random.default_rng(1)
    agent, yaw = rng.uniform(-1, 1, 2), 2.3
    points = rng.uniform(-2.5, 2.5, (20, 2))
    out = compass(agent, yaw, points, 8).reshape(8, 2)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    rel = points - agent
    order = np.argsort(np.linalg.norm(rel, axis=1))[:8]
    c, s = math.cos(yaw), math.sin(yaw)
    ego = np.stack([c * rel[:, 0] + s * rel[:, 1], -s * rel[:, 0] + c * rel[:, 1]], -1)[order]
    np.testing.assert_allclose(out, ego / np.linalg.norm(ego, axis=1, keepdims=True), atol=1e-5)


@pytest.mark.parametrize("m,k", [(1, 1), (5, 1), (8, 8), (16, 8), (RANKED, 10), (RANKED + 1, 10), (100, 10)])
def test_nearest_is_top_k_with_ties_in_index_order(m, k):
    # ranked by pairs up to RANKED entries, lax.top_k above; both must give top_k's indices, equal distances
    # (ties, zeros, every entry alike) in index order
    rng = np.random.default_rng(m)
    dist = rng.random((64, m)).astype(np.float32)
    dist[:8, m // 2] = dist[:8, 0]
    dist[8:16] = 0.0
    dist[16:24] = 0.5
    dist[24:32, ::2] = 0.25
    got = jax.vmap(lambda d: nearest(d, k))(dist)
    np.testing.assert_array_equal(got, jax.vmap(lambda d: jax.lax.top_k(-d, k)[1])(dist))
    np.testing.assert_array_equal(got, np.argsort(dist, axis=1, kind="stable")[:, :k])


def test_atan2_is_within_three_ulp_and_exact_on_the_axes_and_diagonals():
    rng = np.random.default_rng(0)
    scale = lambda n: (10.0 ** rng.uniform(-4, 4, n)).astype(np.float32)  # noqa: E731
    y = rng.normal(size=200_000).astype(np.float32) * scale(200_000)
    x = rng.normal(size=200_000).astype(np.float32) * scale(200_000)
    want = np.arctan2(y.astype(np.float64), x.astype(np.float64))
    got = np.asarray(jax.jit(atan2)(y, x), np.float64)
    ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    assert np.max(np.abs(got - want) / ulp) <= 3.0
    # the axes, the diagonals, both zeros and a zero vector: jnp.arctan2's values to the bit
    special = np.array([[0, 1], [1, 0], [0, -1], [-1, 0], [1, 1], [-1, 1], [1, -1], [-1, -1], [0, 0], [2.5, 2.5],
                        [-3, 3], [0, -2], [-0.0, 1], [-0.0, -1], [7, 0]], np.float32)
    got = np.asarray(jax.jit(atan2)(special[:, 0], special[:, 1]))
    want = np.array(jnp.arctan2(special[:, 0], special[:, 1]))
    # y = -0.0 with x < 0 is -pi in arctan2 and pi here: the same angle mod 2 pi, as the lidar takes it
    want[13] = np.float32(np.pi)
    np.testing.assert_array_equal(np.abs(got), np.abs(want))
    np.testing.assert_array_equal(got[:13], want[:13])


def test_compass_origin_and_mask():
    # Push's block->goal compass: from the block, in the agent's ego frame; a mask of 0 blanks it.
    ctx = Context(model=None, data=None, agent_xy=jnp.asarray([1.0, 2.0]), agent_yaw=jnp.asarray(math.pi / 2),
                  task={"goal": jnp.asarray([[1.0, 3.0]]), "block": jnp.asarray([[1.0, 1.0]]),
                        "on": jnp.asarray(1.0), "off": jnp.asarray(0.0)})
    # goal - block = (0, 2) world = straight ahead of an agent facing +y
    np.testing.assert_allclose(np.asarray(Compass("goal", origin="block").observe(ctx)), [1.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(np.asarray(Compass("goal", origin="block", mask="on").observe(ctx)), [1.0, 0.0], atol=1e-6)
    assert np.all(np.asarray(Compass("goal", origin="block", mask="off").observe(ctx)) == 0.0)
    assert np.all(np.asarray(Lidar("goal", mask="off").observe(ctx)) == 0.0)
    on = np.asarray(Lidar("goal", mask="on").observe(ctx))
    np.testing.assert_array_equal(on, np.asarray(Lidar("goal").observe(ctx)))  # a mask of 1 changes nothing
    assert on.max() > 0
    assert float(Distance("goal", origin="block").observe(ctx)[0]) == pytest.approx(2.0 / 3.0)
    assert float(Distance("block").observe(ctx)[0]) == pytest.approx(1.0 / 3.0)


# ---------------------------------------------------------------------------------------------
# Walls as sensed objects: the nearest point of each wall.


@pytest.mark.parametrize("xy", [(0.0, 0.0), (1.2, -0.7), (-2.9, 2.5), (2.99, -2.99)])
def test_wall_points_are_the_nearest_points_of_each_wall(xy):
    e = 3.0
    got = np.asarray(wall_points(jnp.asarray(xy, jnp.float32), e))
    np.testing.assert_allclose(got, [(e, xy[1]), (-e, xy[1]), (xy[0], e), (xy[0], -e)], atol=1e-6)
    # against a brute-force search along each wall (east, west, north, south)
    s = np.linspace(-e, e, 6001)
    walls = [np.stack([np.full_like(s, e), s], 1), np.stack([np.full_like(s, -e), s], 1),
             np.stack([s, np.full_like(s, e)], 1), np.stack([s, np.full_like(s, -e)], 1)]
    for w, p in zip(walls, got, strict=True):
        d = np.linalg.norm(w - np.asarray(xy), axis=1)
        assert np.linalg.norm(p - np.asarray(xy)) == pytest.approx(d.min(), abs=1e-3)


# ---------------------------------------------------------------------------------------------
# Circle lidar: ray-circle intersection, one ray per bin centre.


def circle_lidar(agent_xy, yaw, **kw):
    ctx = Context(model=None, data=None, agent_xy=jnp.asarray(agent_xy, jnp.float32),
                  agent_yaw=jnp.asarray(yaw, jnp.float32), task={})
    return np.asarray(CircleLidar(**kw).observe(ctx))


def test_circle_lidar_from_the_centre_sees_the_radius_everywhere():
    for yaw in (0.0, 1.1):
        np.testing.assert_allclose(circle_lidar((0.0, 0.0), yaw), np.full(16, (6 - 1.5) / 6), atol=1e-6)


def test_circle_lidar_inside_reads_the_far_root():
    # From (1, 0) every ray hits: t = -cos(theta) + sqrt(cos^2(theta) + 1.25) for R = 1.5.
    for yaw in (0.0, -0.7):
        theta = yaw + (np.arange(16) + 0.5) * W
        t = -np.cos(theta) + np.sqrt(np.cos(theta) ** 2 + 1.25)
        np.testing.assert_allclose(circle_lidar((1.0, 0.0), yaw), (6 - t) / 6, atol=1e-5)
    # straight ahead (between bins 15 and 0) the circle is 0.5 away, straight behind 2.5
    out = circle_lidar((1.0, 0.0), 0.0)
    assert out[0] == out[15] and out[0] > out[7] == out[8]


def test_circle_lidar_outside_sees_the_near_side_and_misses_read_zero():
    # From (3, 0) facing the centre, rays within asin(1.5 / 3) = 30 deg of the heading hit (bins 0
    # and 15, at +-11.25 deg), at t = 3 cos(a) - sqrt(2.25 - 9 sin^2(a)); the rest miss.
    a = W / 2
    t = 3 * math.cos(a) - math.sqrt(2.25 - 9 * math.sin(a) ** 2)
    want = np.zeros(16)
    want[0] = want[15] = (6 - t) / 6
    np.testing.assert_allclose(circle_lidar((3.0, 0.0), math.pi), want, atol=1e-5)
    # from (7, 0) the same rays hit beyond the range (t > 6): nothing; from (8, 0) they miss
    assert np.all(circle_lidar((7.0, 0.0), math.pi) == 0.0)
    assert np.all(circle_lidar((8.0, 0.0), math.pi) == 0.0)
    # another radius and range
    np.testing.assert_allclose(circle_lidar((0.0, 0.0), 0.3, radius=1.0, max_dist=2.0), np.full(16, 0.5), atol=1e-6)


# ---------------------------------------------------------------------------------------------
# Proprioception against MuJoCo's sensors.

SENSORS = ("accelerometer", "velocimeter", "gyro", "magnetometer")

POINT_STATES = [
    ((0.3, -0.2, 0.7), (0.4, -0.3, 1.1), (0.8, -0.5)),
    ((-1.0, 2.0, -2.5), (-0.2, 0.6, -0.4), (-1.0, 1.0)),
    ((0.0, 0.0, 3.0), (0.0, 0.0, 0.0), (0.0, 0.0)),
]


@pytest.mark.parametrize(("qpos", "qvel", "ctrl"), POINT_STATES)
def test_point_observation_matches_mujoco_sensors(qpos, qvel, ctrl):
    path = importlib.resources.files("crax.bodies").joinpath("assets", "point.xml")
    m = mujoco.MjModel.from_xml_path(str(path))
    assert not m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_SENSOR
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:], d.ctrl[:] = qpos, qvel, ctrl
    mujoco.mj_forward(m, d)
    body = Point()
    body.prefix = ""  # the bare MJCF, not attached under agent/
    body.bind(m)
    obs = np.asarray(body.observe(mjx.put_data(m, d)))
    want = np.concatenate([d.sensor(s).data for s in SENSORS])
    assert obs.shape == (12,)
    np.testing.assert_allclose(obs, want, rtol=1e-5, atol=1e-5)
    assert np.abs(want[:2]).max() > 0 or not any(ctrl)  # the accelerometer sees the actuators


def half_cheetah_with_sites():
    path = importlib.resources.files("crax.bodies").joinpath("assets", "half_cheetah.xml")
    spec = mujoco.MjSpec.from_string(path.read_text())
    spec.body("torso").add_site(name="imu", pos=[0.3, 0.0, 0.05])  # off the body origin
    spec.body("bshin").add_site(name="shin", pos=[-0.1, 0.0, -0.05], euler=[0.0, 0.4, 0.0])  # rotated
    for site in ("imu", "shin"):
        for s in SENSORS:
            spec.add_sensor(name=f"{site}_{s}", type=getattr(mujoco.mjtSensor, f"mjSENS_{s.upper()}"),
                            objtype=mujoco.mjtObj.mjOBJ_SITE, objname=site)
    return spec.compile()


@pytest.mark.parametrize("site", ["imu", "shin"])
@pytest.mark.slow
def test_proprio_sensors_match_mujoco_on_half_cheetah(site):
    m = half_cheetah_with_sites()
    mm = mjx.put_model(m, impl="jax")
    rng = np.random.default_rng(7)
    classes = (Accelerometer, Velocimeter, Gyro, Magnetometer)
    sensors = []
    for cls in classes:
        s = cls(site)
        s.bind(m)
        sensors.append(s)
    observe = jax.jit(lambda ctx: [s.observe(ctx) for s in sensors])  # one program, not one per operation
    for _ in range(2):
        d = mujoco.MjData(m)
        d.qpos[:] = m.qpos0 + rng.uniform(-0.3, 0.3, m.nq)
        d.qvel[:] = rng.uniform(-1.5, 1.5, m.nv)
        d.ctrl[:] = rng.uniform(-1, 1, m.nu)
        mujoco.mj_forward(m, d)
        ctx = Context(model=mm, data=mjx.put_data(m, d, impl="jax"), agent_xy=jnp.zeros(2),
                      agent_yaw=jnp.zeros(()), task={})
        for name, s, got in zip(SENSORS, sensors, observe(ctx), strict=True):
            want = d.sensor(f"{site}_{name}").data
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4, err_msg=name)
            assert s.size == 3
