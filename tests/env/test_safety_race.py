"""Safety-Gymnasium's Race served by crax, against Safety-Gymnasium 1.0.0's own numbers.

The references (tests/data/safety_gym_race_reference.json: the Point, the Car and the Ant;
tests/data/safety_gym_race_agents_reference.json: the Doggo and the Racecar) were recorded by
tools/safety_gymnasium/sg_reference_race.py in Safety-Gymnasium itself. crax collides with boxes where
Safety-Gymnasium collides with the convex hulls of its wall meshes (docs/safety_gymnasium.md,
"Race"): the walls' contact onsets are compared on crax's model in MuJoCo's C engine (nothing
compiled). The default tier builds envs and compares definitions and onsets; states, resets and
the one compiled step (the Point at level 1) are in the slow tier.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import crax
from crax.suites.safety_gym import SafetyRace
from crax.suites.safety_gym.race import AGENT_BOX, GOAL_XY, HAZARD_BOX_HALF, HAZARD_BOXES
from tests.env.safety_gym_agents import DOGGO, RACECAR, agent_of
from tests.env.safety_gym_reference import Replica, assert_spaces_and_keys, case, cost_terms, load

AGENTS = ("Point", "Car", "Ant", "Doggo", "Racecar")
IDS = [f"Safety{a}Race{level}-v0" for a in AGENTS for level in (0, 1, 2)]
REFERENCES = ("safety_gym_race_reference.json", "safety_gym_race_agents_reference.json")
"""The Point, Car and Ant; the Doggo and Racecar (``tools/safety_gymnasium/sg_reference_race.py --agents
point-car-ant``, ``--agents doggo-racecar``)."""
SENSOR_ATOL = {"Point": 1e-4, "Car": 1e-3, "Ant": 2e-3, "Doggo": DOGGO.atol["sensors"],
               "Racecar": RACECAR.atol["sensors"]}
"""Body readings on a set state: the Doggo's and the Racecar's as on their Goal (tests/env/safety_gym_agents.py)."""
LIDAR_ATOL = 1e-5
BOX_ATOL = 1e-3
"""crax's wall boxes against the rectangles fitted to Safety-Gymnasium's hull cuts (m, rad): crax
keeps them to 0.1 mm."""
ONSET_ATOL = {"walls": 0.02, "rocks": 0.03}
"""Where the Point first touches a wall along a recorded line, crax's box against Safety-Gymnasium's
hull (m). The bamboo walls and the door (``walls``): the hull's faces lean (the wall is wider at the
top), the box's stand upright at the cut's edge. The rocks (``race_wall3``, ``race_wall4``,
``small_stone*``): rounded cuts whose rectangles stand out at the corners and lean more."""
ROCKS = ("race_wall3", "race_wall4", "small_stone1", "small_stone2")
REWARD_ATOL = 1e-3
PUSHED = ("accelerometer", "touch_")
"""The readings of the forces on the agent (the accelerometer; the Doggo's touch sensors), not compared
at a wall: there they read the push of crax's box, not of Safety-Gymnasium's hull. The box stands
upright at the edge of the hull's cut at z = 0.1, the bamboo hull's face leans back below it, so what
touches lower stands deeper in the box (the Doggo's front knees, z 0.056: 4.0 cm into the box where
2.9 cm into the hull, ankle_1 pushed with 1.17 N against 0.55 N). Which touch sensors read a force
is compared."""


def record(env_id: str) -> dict:
    return next(load(f)["tasks"][env_id] for f in REFERENCES if env_id in load(f)["tasks"])


def readings(env, *keys: str) -> np.ndarray:
    """A mask over the body's readings: the entries of its ``obs_keys`` that start with one of ``keys``."""
    return np.concatenate([np.full(size, key.startswith(keys)) for key, size in env.body.obs_keys])


@pytest.mark.parametrize("env_id", IDS)
def test_spaces_timing_and_definitions_are_safety_gymnasiums(env_id):
    rec, env = record(env_id), crax.make(env_id)
    level = int(env_id.split("-")[0][-1])
    assert env_id in crax.env_ids() and crax.parse_id(env_id)[1] is SafetyRace
    assert_spaces_and_keys(env, rec)
    assert env.dt == pytest.approx(rec["dt"]) and env.episode_length == rec["num_steps"] == 500
    suite = env.suite
    assert isinstance(suite, SafetyRace)
    cx, cy, w, h = AGENT_BOX[level]
    np.testing.assert_allclose([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], rec["agent_placements"][0], atol=1e-12)
    assert suite.agent_keepout == rec["agent_keepout"] and suite.floor_size == rec["floor_size"][0]
    goal = rec["goal"]
    assert list(GOAL_XY) == pytest.approx(goal["locations"][0]) and goal["is_meshed"]
    assert (float(suite.goal_size[...]), suite.objects["goal"].keepout) == pytest.approx((goal["size"], goal["keepout"]))
    assert (float(suite.reward_goal[...]), float(suite.reward_distance[...])) == (goal["reward_goal"], goal["reward_distance"])
    assert suite.reward_clip == rec["reward_clip"] and suite.continue_goal == rec["continue_goal"] is False
    if rec["hazards"] is None:
        assert "hazards" not in suite.objects
    else:
        hz, zones = rec["hazards"], suite.objects["hazards"]
        assert (zones.count, zones.radius, zones.keepout) == pytest.approx((hz["num"], hz["size"], hz["keepout"]))
        boxes = [[x - HAZARD_BOX_HALF[0], y - HAZARD_BOX_HALF[1], x + HAZARD_BOX_HALF[0], y + HAZARD_BOX_HALF[1]]
                 for x, y in HAZARD_BOXES]
        np.testing.assert_allclose(boxes, hz["placements"], atol=1e-12)
    assert [b.name for b in suite.walls.boxes] == rec["static_geom_order"]
    assert sorted(b.name for b in suite.walls.boxes) == rec["static_geoms"]
    terms = {c.term for c in suite.constraints}
    assert ("static_geoms_contact" in terms) == (rec["static_geoms_contact_cost"] is not None)
    assert ("hazards" in terms) == (rec["hazards"] is not None)


@pytest.mark.parametrize("level", (0, 1, 2))
def test_wall_boxes_hold_safety_gymnasiums_hull_cuts(level):
    """Each wall's box is the smallest rectangle around its hull's cut at the agents' height, as
    high as the hull (Safety-Gymnasium collides with the hull: MuJoCo collides meshes as convex hulls)."""
    rec = record(f"SafetyPointRace{level}-v0")
    env = crax.make(f"SafetyPointRace{level}-v0")
    for box, wall in zip(env.suite.walls.boxes, rec["walls"], strict=True):
        ref = wall["box"]
        assert box.name == wall["name"]
        np.testing.assert_allclose([box.x, box.y, box.hx, box.hy, box.yaw], [ref[k] for k in ("x", "y", "hx", "hy", "yaw")],
                                   atol=BOX_ATOL, err_msg=box.name)
        assert box.top == pytest.approx(wall["top"], abs=BOX_ATOL)


def _onsets(env, rec) -> list[tuple[dict, float]]:
    """crax's onset along each recorded line: bisection on MuJoCo's C contacts of crax's model."""
    m = env.mj_model
    d = mujoco.MjData(m)
    adr = env.body.qpos_adr[0]
    agent = {int(g) for g in range(m.ngeom) if m.geom(g).name.startswith("agent/")}
    out = []
    for o in rec["onsets"]:
        wall = m.geom(o["wall"]).id

        def touching(t, o=o, wall=wall):
            xy = np.add(o["start"], t * np.asarray(o["direction"]))
            d.qpos[adr: adr + 3] = [*xy, o["yaw"]]
            mujoco.mj_forward(m, d)
            return any(c.dist < 0 and {c.geom1, c.geom2} & {wall} and {c.geom1, c.geom2} & agent
                       for c in d.contact[: d.ncon])

        lo, hi = 0.0, 0.6
        if touching(lo) or not touching(hi):
            out.append((o, np.nan))
            continue
        for _ in range(24):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if touching(mid) else (mid, hi)
        out.append((o, (lo + hi) / 2))
    return out


@pytest.mark.parametrize("level", (0, 2))
def test_the_point_touches_the_walls_where_safety_gymnasiums_does(level):
    """Along each recorded line towards a wall's face (the Point's front box or its sphere leading),
    crax's boxes are first touched within :data:`ONSET_ATOL` of where Safety-Gymnasium's hulls are."""
    env_id = f"SafetyPointRace{level}-v0"
    rec = record(env_id)
    errors = {"walls": [], "rocks": []}
    for o, t in _onsets(crax.make(env_id), rec):
        assert np.isfinite(t), o
        errors["rocks" if o["wall"] in ROCKS else "walls"].append(t - o["t"])
    for kind, e in errors.items():
        assert np.abs(e).max() < ONSET_ATOL[kind], (kind, np.abs(e).max())


@pytest.mark.slow
@pytest.mark.parametrize("env_id", IDS)
def test_observations_and_costs_on_recorded_states(env_id):
    replica = Replica(env_id, record(env_id))
    body = replica.env.suite.body_obs_size
    for c in replica.record["states"]:
        c = {**c, "layout": {"goal": c["layout"]["goal"], "hazards": c["layout"]["hazards"] or np.zeros((0, 2))}}
        state = replica.arrange(c)
        obs, want = np.asarray(state.obs), np.asarray(c["obs"])
        at_a_wall = c["name"].startswith(("touching", "apart"))
        pushed = readings(replica.env, *PUSHED) if at_a_wall else np.zeros(body, bool)
        np.testing.assert_allclose(obs[:body][~pushed], want[:body][~pushed],
                                   atol=SENSOR_ATOL[agent_of(env_id).name], err_msg=c["name"])
        touch = pushed & readings(replica.env, "touch_")
        np.testing.assert_array_equal(obs[:body][touch] > 0, want[:body][touch] > 0, err_msg=c["name"])
        np.testing.assert_allclose(obs[body:], want[body:], atol=LIDAR_ATOL, err_msg=c["name"])
        raw, terms = c["cost_raw"], cost_terms(state)
        assert set(terms) == {k.removeprefix("cost_") for k in raw if k != "cost_sum"}, c["name"]
        if "hazards" in terms:
            assert terms["hazards"] == pytest.approx(raw["cost_hazards"], abs=1e-5), c["name"]
        for k, v in terms.items():
            assert (v > 0) == (c["cost_info"][f"cost_{k}"] > 0), (c["name"], k)
        assert float(state.cost) == c["cost_info"]["cost_sum"], c["name"]


@pytest.fixture(scope="module")
def point1() -> Replica:
    return Replica("SafetyPointRace1-v0", record("SafetyPointRace1-v0"))


@pytest.mark.slow
@pytest.mark.parametrize("level", (0, 1, 2))
def test_resets_start_where_safety_gymnasium_places_everything(point1, level):
    """crax's reset draw and Safety-Gymnasium's recorded resets both fall in the declared regions:
    the agent in its rectangle, the goal at its location, each hazard in one of the 7 rectangles
    shrunk by its keepout and clear of the agent, the goal and each other."""
    rec = record(f"SafetyPointRace{level}-v0")
    replica = point1 if level == 1 else Replica(f"SafetyPointRace{level}-v0", rec)
    x0, y0, x1, y1 = rec["agent_placements"][0]
    states = replica.resets(jax.random.split(jax.random.key(level), 16))
    agent = np.asarray(jax.vmap(lambda d: replica.env.body.position(d)[:2])(states.data))
    task = states.info["task"]
    drawn = [{"agent": a, "goal": g[0], "hazards": h} for a, g, h in
             zip(agent, np.asarray(task["goal"]), np.asarray(task["hazards"]), strict=True)]
    recorded = [{k: np.asarray(r[k]) for k in ("agent", "goal", "hazards")} for r in rec["resets"]]
    for layout in drawn + recorded:
        a = layout["agent"]
        assert x0 - 1e-5 <= a[0] <= x1 + 1e-5 and y0 - 1e-5 <= a[1] <= y1 + 1e-5
        np.testing.assert_allclose(layout["goal"], GOAL_XY, atol=1e-6)
        h = np.asarray(layout["hazards"]).reshape(-1, 2)
        assert len(h) == (rec["hazards"] or {"num": 0})["num"]
        if len(h):
            keep = rec["hazards"]["keepout"]
            inside = [np.any([(abs(p[0] - x) <= 0.3 - keep + 1e-5) & (abs(p[1] - y) <= 0.35 - keep + 1e-5)
                              for x, y in HAZARD_BOXES]) for p in h]
            assert all(inside)
            gaps = np.linalg.norm(h[:, None] - h[None], axis=-1) + np.eye(len(h)) * 9
            assert gaps.min() >= 2 * keep - 1e-5
            assert np.linalg.norm(h - layout["goal"], axis=-1).min() >= keep + rec["goal"]["keepout"] - 1e-5
    assert np.all(np.asarray(states.cost) == 0)


def _rollout(replica: Replica, c: dict) -> dict:
    hazards = np.asarray(c["layout"]["hazards"] or [[20.0 + 1.5 * i, 23.0] for i in range(7)])
    return replica.rollout({**c, "layout": {"goal": c["layout"]["goal"], "hazards": hazards}})


@pytest.mark.slow
def test_reaching_the_goal_ends_the_episode(point1):
    """Level 0's drive into the goal, stepped in level 1's env (the same goal, walls and reward; its
    hazards parked out of reach): the reward per step, the goal bonus of 10 on the step the goal
    is reached, and the episode ends there, as Safety-Gymnasium's does."""
    c = case(record("SafetyPointRace0-v0"), "rollouts", "into_the_goal")
    out = _rollout(point1, c)
    steps = c["steps"]
    assert steps[-1]["goal_met"] and len(out["reward"]) == len(steps)
    np.testing.assert_allclose(out["reward"], [s["reward"] for s in steps], atol=REWARD_ATOL)
    assert out["reward"][-1] > 9 and out["done"][-1] == 1 and not out["done"][:-1].any()
    np.testing.assert_array_equal(out["metrics"]["goals_reached"], [s["goal_met"] for s in steps])
    np.testing.assert_array_equal(out["cost"], [s["cost"] for s in steps])


@pytest.mark.slow
def test_driving_into_a_wall_costs_as_safety_gymnasiums(point1):
    """Level 1's drive north into race_wall2_left and along it (the front box leading): it touches
    the wall twice in both engines; crax's box is first touched where the leaning hull is already
    touched (up to 1.6 cm later, :data:`ONSET_ATOL`), so each contact starts and ends at most
    :data:`ONSET_STEPS` steps apart (measured: each starts one step later and lasts as long)."""
    c = case(record("SafetyPointRace1-v0"), "rollouts", "into_a_wall")
    out = _rollout(point1, c)
    want, got = _contacts([s["cost"] for s in c["steps"]]), _contacts(out["cost"])
    assert len(want) == len(got) == 2
    for (w0, w1), (g0, g1) in zip(want, got, strict=True):
        assert abs(g0 - w0) <= ONSET_STEPS and abs(g1 - w1) <= ONSET_STEPS
    np.testing.assert_array_equal(out["metrics"]["cost/static_geoms_contact"] > 0, out["cost"] > 0)
    xy = np.linalg.norm(out["xy"] - np.asarray([s["xy"] for s in c["steps"]]), axis=-1)
    assert xy.max() < XY_ATOL
    assert float(jnp.sum(out["reward"])) == pytest.approx(sum(s["reward"] for s in c["steps"]), abs=RETURN_ATOL)


def _contacts(cost) -> list[tuple[int, int]]:
    """The (first, last) steps of each run of steps that cost."""
    on = np.concatenate([[0], np.asarray(cost) > 0, [0]]).astype(int)
    edges = np.flatnonzero(np.diff(on))
    return [(int(a), int(b) - 1) for a, b in zip(edges[::2], edges[1::2], strict=True)]


ONSET_STEPS = 1
XY_ATOL = 0.03
"""The Point's position along the wall drive (m)."""
RETURN_ATOL = 0.02
