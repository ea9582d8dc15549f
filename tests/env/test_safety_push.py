"""Safety-Gymnasium's Push 0-2 on the Point, the Car and the Ant, against Safety-Gymnasium 1.0.0's own numbers.

The reference (tests/data/safety_gym_reference.json) was recorded by tools/safety_gymnasium/sg_reference.py in
Safety-Gymnasium itself; docs/safety_gymnasium.md lists the tolerances (here and in
:mod:`tests.env.safety_gym_agents`) and the measured errors. One env per id (module-scoped): every
level is placed in its recorded states; each agent's step is compiled at level 0 (rewards, the
goal, pushes, the long rollouts), the Point's at level 2 too, whose hazards and pillars it steps
(4 pillars against the box's five boxes multiply the contact pairs). The default tier checks the
Car's and the Ant's level-0 spaces and box and the ids on the Ant.
"""

from __future__ import annotations

import gymnasium
import jax
import numpy as np
import pytest

import crax
from crax.gymnasium.registration import register_envs
from crax.suites.safety_gym import SafetyPush
from tests import trees
from tests.env import safety_gym_fidelity as fidelity
from tests.env.safety_gym_agents import ANT, CAR, CAR_CONTACT_ATOL, POINT, agent_of, every_level, ids, navigators
from tests.env.safety_gym_reference import Replica, case
from tests.env.safety_gym_tracks import Track, assert_track

BOX = {"Point": (0.2, 1e-9), "Car": (0.125, 1e-8), "Ant": (0.2, 1e-9)}
"""The box each agent pushes: its half-size and keepout (m; Safety-Gymnasium gives the Car its own,
0.0156 g), and the precision of its recorded mass and inertia (five boxes of density 0.001, MuJoCo's
mass and inertia from them; the Car's records keep 9 significant digits)."""
PRESSED = {
    "Point": [fidelity.Pressed("^pillar_touch", {"accelerometer": fidelity.Norm(0.02)})],
    "Car": [fidelity.Pressed("against", {"accelerometer": CAR_CONTACT_ATOL}),
            fidelity.Pressed("^pillar_against_bumper$", {"accelerometer": fidelity.Norm(0.02)}),
            fidelity.Pressed("^(pillar_against_wheel|two_pillars_touched)$", {"accelerometer": fidelity.Norm(0.3)})],
    "Ant": [fidelity.Pressed("pillar", {"accelerometer": fidelity.Norm(0.05)})],
}
"""The accelerometer where a pillar (fixed, radius 0.2) presses into the agent, relative to its norm.
MuJoCo 2.3.3 collides a box or a capsule with a cylinder by MPR: one contact whose depth and normal
are approximate (and change between versions); crax's pillars collide as capsules, exact on the
side. The Point's front box 1-1.5 cm into a pillar: measured ≤ 9.7e-3 (MuJoCo 4.0 in C on
Safety-Gymnasium's own scene, cylinders and all, gives crax's accelerations to 1e-4). The Car's
front bumper 3 mm in (one contact point against two): 0.6 %; its right wheel's face, which MuJoCo
meets with the hinged wheel's cylinder (one point) and crax with the box fixed to the chassis around
it (two points): 7.7 %, and 22 % with both pillars pressing (docs/safety_gymnasium.md, The Car);
the free box pressed 3 mm into its bumper or a wheel: :data:`~tests.env.safety_gym_agents.CAR_CONTACT_ATOL`.
The Ant's front left foot and shin 3 mm in: 3.5e-2 (MuJoCo 4.0 in C on Safety-Gymnasium's own scene
departs from its MuJoCo 2.3.3 by 4.2e-2 on the same state; where two pillars press on opposite feet,
their forces cancelling, 2.7e-5)."""
DISTANCE_ATOL = 1e-5
"""Safety-Gymnasium's 3-D agent–box and box–goal distances on a set state (measured ≤ 2.0e-6; where a
pillar presses into the Car, 9.6e-7)."""
REWARD_ATOL = {"Point": 1e-4, "Car": 1e-4, "Ant": 2e-5}
"""Reward and each of its terms while the agent drives up to the box at rest or flies at (or past)
it (the terms from Safety-Gymnasium's recorded distances; measured ≤ 1.9e-7 on the Point, 2.2e-6 on
the Car, 2.6e-6 on the Ant), and on the step the box reaches the goal."""
DEATH_ATOL = 1e-4
"""Reward of the step in which the Ant, on its back, dies."""

PUSH = {"return": 0.1, "box": 0.08, "agent": 0.04}
"""While the Point pushes the box: the return so far (summed rewards, which telescope to distance
differences) at each step, box and agent positions (m). Per-step rewards spike where the box is
struck, a substep earlier or later in one engine, so the pushes compare returns. Measured:
push_to_goal ≤ 3.4e-3, 1.6e-2 m, 3.6e-3 m; push_through_hazard ≤ 5.8e-2, 4.0e-2 m, 1.6e-2 m;
box_against_pillar ≤ 1.8e-2, 9.8e-3 m, 8.2e-3 m. A 0.128 g box struck by a 5 g agent is sensitive
to everything: Safety-Gymnasium's own scene in MuJoCo 4.0 in C departs from its MuJoCo 2.3.3 on the
same pushes by as much (push_through_hazard: box 4.6e-2 m, agent 2.0e-2 m; box_against_pillar:
box 3.3e-2 m, agent 3.6e-2 m); the bounds are about twice those."""
POINT_DYNAMICS = Track({"xy": {29: 0.02, None: 0.06}, "yaw": {29: 0.05, None: 0.08}, "lidar": {29: 0.05},
                        "box": {40: 0.02}}, horizon=150)
"""The Point's long rollout (smooth actions; it strikes the box at step 29, glancingly, and leaves
it): until the strike the agent's position (m), yaw (rad) and lidar bins are bounded as Goal's
(measured 7.0e-4 m, 7.2e-3 rad, 4.9e-3); the box's position to step 40 (measured 1.0e-2 m); over
all 150 steps the agent's position and yaw (measured 3.3e-2 m, 3.1e-2 rad). After the strike the
box's path is not reproduced (0.1 m apart at step 50: the agent's sphere and front box wedge
between two corner posts, and float32 decides which touch; MJX in float64 stays within 1.1e-2 m,
and MuJoCo 4.0 in C on Safety-Gymnasium's scene within 6e-3 m), so later steps do not compare it."""
CAR_PUSH = Track({"xy": {6: 1e-4, None: 5e-2}, "box": {6: 1e-4, None: 0.05}, "reward": {6: 1e-4},
                  "return": {None: 0.1}}, horizon=30)
"""``push_box``: the Car drives straight into the box (struck on step 7) and pushes it for 23 steps
while the 0.0156 g box bounces on the floor ahead of the bumper: the chassis' position (m) before
the strike and over all 30 steps, the box's position (m) before and after the strike, the reward
per step before it and the return over all steps. Measured: 5e-6 m, 1.3e-3 m; 3e-8 m, 1.5e-2 m;
2.2e-6; 2.7e-2. The bounce makes the chassis' path after the strike depend on rounding: on session
19's host the chassis ends 2.6e-3 m from Safety-Gymnasium's with XLA's default CPU code and 2.9e-2 m
with the tests' cheapest code generation (tests/conftest.py), at every solver budget."""
ANT_PUSH = Track({"xy": {20: 0.03, None: 0.5}, "lidar": {20: 0.25}, "box": {30: 0.05, 50: 0.3},
                  "return": {50: 0.5, None: 1.0}}, horizon=100)
"""The walking gait of the Goal tests for 100 steps with the box in the Ant's path (it reaches the
box at step 25 and shoves it 0.7 m): the torso's position (m) and lidar bins over 20 steps, the
box's position up to steps 30 and 50, the return up to step 50, the torso's position and the
return over all 100. Measured, in two builds of the same program (XLA's default code generation;
the tests' cheaper one, which sums in another order): 1.1e-2 m; lidar 7.7e-2, 0.12 (the box 0.3 m
ahead by step 20, where 1 cm and 3e-2 rad move its aliased bins by 0.1); box 1.7e-2, 2.1e-2 m to
step 30 and 9.7e-2, 0.20 m to step 50; return 0.10, 0.31 to step 50; torso 7.1e-2, 0.13 m and
return 0.12, 0.43 over 100 (the return telescopes to the agent–box and box–goal distances, so it
carries about twice the box's error). Once struck, the 0.13 g box goes where float rounding sends
it: MuJoCo 4.0 in C (float64) on crax's scene from the recorded state moved by 1e-7 departs from
Safety-Gymnasium by as much (box up to 2.4e-2 m by step 30, 0.17 m by step 50, 0.30 m by step 100;
Ant up to 0.18 m)."""


@pytest.fixture(scope="module")
def replica(request) -> Replica:
    return Replica(request.param)


@pytest.mark.parametrize("replica", every_level("Push", CAR, ANT), indirect=True)
def test_spaces_timing_keys_physics_and_box_are_safety_gymnasiums(replica):
    fidelity.assert_navigation_arena(replica)
    size, rtol = BOX[agent_of(replica.env_id).name]
    box = replica.env.suite.push_box
    assert (box.size, box.keepout) == (size, size)
    body, recorded = replica.env.mj_model.body("push_box"), replica.record["box"]
    assert body.mass[0] == pytest.approx(recorded["mass"], rel=rtol)
    np.testing.assert_allclose(body.inertia, recorded["inertia"], rtol=rtol)


@pytest.mark.parametrize("replica", every_level("Push"), indirect=True)
def test_observations_costs_and_distances_on_recorded_states(replica):
    for c, state in fidelity.assert_states(replica, *PRESSED[agent_of(replica.env_id).name], counted=("pillars",)):
        d_box, d_goal = replica.env.suite._distances(state.data, state.info["task"]["goal"][0])
        assert float(d_box) == pytest.approx(c["dist_box"], abs=DISTANCE_ATOL), c["name"]
        assert float(d_goal) == pytest.approx(c["dist_box_goal"], abs=DISTANCE_ATOL), c["name"]


NEARING = {ANT.id("Push", 0): ("flight_at_box", "flight_past_box"), CAR.id("Push", 0): ("approach_box",)}
"""The Ant flying at the box and past it, the Car driving up to it: agent–box progress, the box at
rest (it settles by microns); the same at every level (level 2's pillars are stepped by the Point)."""


@pytest.mark.slow
@pytest.mark.parametrize("replica", list(NEARING), indirect=True)
def test_reward_terms_as_the_agent_nears_or_passes_the_box(replica):
    for name in NEARING[replica.env_id]:
        c = case(replica.record, "rollouts", name)
        out = replica.rollout(c)
        fidelity.assert_reward_terms(out, c, REWARD_ATOL[agent_of(replica.env_id).name])
        assert not out["cost"].any(), name


@pytest.mark.slow
@pytest.mark.parametrize("replica", [*ids("Push", CAR, 0), *ids("Push", ANT, 0)], indirect=True)
def test_the_box_reaching_the_goal_pays_as_recorded(replica):
    c = case(replica.record, "rollouts", "box_reaches_goal")  # the box set 0.25 m from the goal's centre
    out = replica.rollout(c)
    assert c["steps"][0]["goal_met"] and out["metrics"]["goals_reached"][0] == 1.0
    assert out["reward"][0] == pytest.approx(c["steps"][0]["reward"], abs=REWARD_ATOL[agent_of(replica.env_id).name])


@pytest.mark.slow
@pytest.mark.parametrize("replica", ids("Push", ANT, 0), indirect=True)
def test_the_ant_dies_on_its_back_as_recorded(replica):
    fidelity.assert_dies_on_its_back(replica, DEATH_ATOL)


def _box_moved(c, since: str = "layout") -> np.ndarray:
    """How far Safety-Gymnasium's box has moved in the plane (m) after each step of a recorded rollout:
    from where its layout put it, or from where it was after the first step (``since="first"``)."""
    path = np.asarray([s["box_pos"][:2] for s in c["steps"]])
    start = np.asarray(c["layout"]["push_box"][0][:2]) if since == "layout" else path[0]
    return np.linalg.norm(path - start, axis=-1)


@pytest.mark.slow
@pytest.mark.parametrize("replica", ids("Push", ANT, 0), indirect=True)
def test_walking_into_the_box_stays_as_close_as_the_ants_sensitivity_allows(replica):
    c = case(replica.record, "rollouts", "dynamics")
    moved = _box_moved(c, since="first")
    assert moved[:24].max() < 1e-3 and moved[-1] > 0.5  # first moved at step 25, shoved 0.5 m or more
    fidelity.assert_rollout(replica, "dynamics", ANT_PUSH)


@pytest.mark.slow
@pytest.mark.parametrize("replica", ids("Push", CAR, 0), indirect=True)
def test_the_car_pushing_the_box_stays_close(replica):
    c = case(replica.record, "rollouts", "push_box")
    moved = _box_moved(c, since="first")
    assert moved[:6].max() < 1e-6 and moved[6] > 0.01 and moved[-1] > 0.5  # struck on step 7, pushed 0.7 m
    fidelity.assert_rollout(replica, "push_box", CAR_PUSH)


def _check_push(replica, name, *, goal_step=None):
    """Reward and its terms per step until the box is first struck (1 mm), against Safety-Gymnasium's
    (its terms from its recorded distances), then the return so far; the goal reached at the same
    step; costs per step, agent and box paths (:data:`PUSH`)."""
    c = case(replica.record, "rollouts", name)
    out, steps = replica.rollout(c), c["steps"]
    met = [s["goal_met"] for s in steps]
    assert (met.index(True) if True in met else None) == goal_step
    last = goal_step + 1 if goal_step is not None else len(steps)  # after a respawn the goals differ (random)
    np.testing.assert_array_equal(out["metrics"]["goals_reached"][:last], np.asarray(met[:last], np.float32))
    moved = _box_moved(c) > 1e-3
    fidelity.assert_reward_terms(out, c, REWARD_ATOL["Point"], upto=int(np.argmax(moved)) if moved.any() else None)
    np.testing.assert_allclose(sum(out["metrics"][f"reward/{k}"] for k in ("box", "box_goal", "goal")), out["reward"],
                               atol=1e-6, err_msg=name)  # the reward is its terms' sum
    upto_goal = jax.tree.map(lambda x: x[:last], out)
    assert_track(upto_goal, steps[:last], Track({"return": {None: PUSH["return"]}}), POINT.body)
    assert_track(out, steps, Track({"box": {None: PUSH["box"]}, "xy": {None: PUSH["agent"]}}), POINT.body)
    return c, out


@pytest.mark.slow
@pytest.mark.parametrize("replica", ids("Push", POINT, 0), indirect=True)
def test_pushing_the_box_into_the_goal_pays_as_recorded(replica):
    c, out = _check_push(replica, "push_to_goal", goal_step=32)
    assert out["metrics"]["reward/box_goal"][:33].sum() > 0.2  # the box travelled 0.25 m towards the goal
    assert out["metrics"]["reward/goal"][32] == 1.0 and not out["cost"].any()


@pytest.mark.slow
@pytest.mark.parametrize("replica", ids("Push", POINT, 2), indirect=True)
def test_a_box_over_a_hazard_costs_nothing_the_agent_in_it_does(replica):
    c, out = _check_push(replica, "push_through_hazard")
    raw = np.asarray([s["cost_raw"]["cost_hazards"] for s in c["steps"]])
    assert raw[:30].max() == 0.0 and raw[-1] > 0  # the box sits in the hazard from the start; the agent enters later
    np.testing.assert_allclose(out["metrics"]["cost/hazards"], raw, atol=PUSH["agent"])


@pytest.mark.slow
@pytest.mark.parametrize("replica", ids("Push", POINT, 2), indirect=True)
def test_driving_into_a_pillar_costs_as_recorded(replica):
    # the pillar stops the agent alike
    out = fidelity.assert_rollout(replica, "pillar_bump", Track({"xy": {None: PUSH["agent"]}}))
    recorded = case(replica.record, "rollouts", "pillar_bump")["steps"]
    np.testing.assert_array_equal(out["metrics"]["cost/pillars"], [s["cost_raw"]["cost_pillars"] for s in recorded])
    assert out["cost"][-1] == 1.0


@pytest.mark.slow
@pytest.mark.parametrize("replica", ids("Push", POINT, 2), indirect=True)
def test_a_pillar_stops_the_box_as_recorded(replica):
    _, out = _check_push(replica, "box_against_pillar")
    # held by the pillar (its surface at x 0.85; the box's posts reach 0.3 from its centre)
    assert out["box"][-1, 0] < 0.6


@pytest.mark.slow
@pytest.mark.parametrize("replica", ids("Push", POINT, 0), indirect=True)
def test_dynamics_stay_close_to_safety_gymnasiums(replica):
    c = case(replica.record, "rollouts", "dynamics")
    assert int(np.argmax(_box_moved(c) > 1e-3)) == 30  # struck on step 29 (0-based), moved by step 30
    fidelity.assert_rollout(replica, "dynamics", POINT_DYNAMICS)


# Level 2 only: its 10 objects in ±2 are the tightest layout (levels 0 and 1 draw with the same code,
# fewer objects). The draw is reset's own (Replica.resets), its states forwarded in C.
@pytest.mark.slow
@pytest.mark.parametrize("replica", ids("Push", POINT, 2), indirect=True)
def test_resets_draw_fresh_layouts_within_safety_gymnasiums_constraints(replica):
    states = replica.resets(jax.random.split(jax.random.key(3), 32))
    points, keepout = fidelity.drawn_layouts(replica, states)
    fidelity.assert_layouts_fit(replica.env.suite, points, keepout)  # every draw fits
    assert len({tuple(np.round(p[1], 4)) for p in points}) == len(points)  # a fresh goal every episode
    box = replica.env.suite.push_box
    quat = np.asarray(states.data.qpos[:, box.qpos_adr + 3: box.qpos_adr + 7])
    np.testing.assert_allclose(np.asarray(states.data.qpos[:, box.qpos_adr + 2]), box.size)  # on the floor
    yaw = 2 * np.arctan2(quat[:, 3], quat[:, 0]) % (2 * np.pi)
    assert len(np.unique(np.round(yaw, 4))) == len(yaw)  # a random yaw each, as Safety-Gymnasium turns it
    assert np.all(np.asarray(states.cost) == 0)
    state = trees.take(states, 0)
    start = np.asarray(box.position(state.data))
    state = fidelity.assert_rests_without_cost(replica, state)  # at rest nothing costs
    np.testing.assert_allclose(np.asarray(box.position(state.data)), start, atol=1e-4)  # the box settles where it was put


@pytest.mark.parametrize("agent", navigators(ANT))
def test_ids_are_served_by_make_list_and_the_safety_gymnasium_face(agent):
    fidelity.assert_served("Push", agent, SafetyPush)
    assert crax.parameters(agent.id("Push", 2))["pillar_cost"].default == 1.0
    assert crax.parameters(agent.id("Push", 1))["pillar_cost"].default == 0.0


@pytest.mark.slow
def test_ids_are_registered_with_gymnasium(monkeypatch):
    served = [POINT.id("Push", level) for level in (0, 1, 2)]
    fresh: dict = {}
    monkeypatch.setattr(gymnasium.envs.registration, "registry", fresh)
    monkeypatch.setattr(gymnasium, "registry", fresh)
    assert register_envs(served) == [f"crax/{i}" for i in served] and set(fresh) == {f"crax/{i}" for i in served}
