"""The plugin guide, docs/plugins.md: its examples (tests/plugin_examples) installed through the
entry point the guide declares, each run and checked against hand computation, and every code
block of the guide checked to be the examples' code (or code this file runs)."""

import dataclasses
import json
import pathlib
import re
import tomllib
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

import crax
from crax.core.scene import Category
from crax.costs import TaskParam
from crax.learners import ConstrainedPPO, PPOConfig
from crax.learners.rules import PenaltyRule
from crax.plugins import manager
from crax.sensors import Context
from tests.fake_install import installed, write_distribution

ROOT = pathlib.Path(__file__).resolve().parent.parent
GUIDE = (ROOT / "docs" / "plugins.md").read_text()
EXAMPLES = ROOT / "tests" / "plugin_examples"
BLOCKS = re.findall(r"^```(\w+)\n(.*?)^```", GUIDE, re.M | re.S)
PLUGIN = "crax_plugin_examples"


def _lines(text: str) -> list[str]:
    """Non-blank lines without their indentation (a snippet may be quoted from inside a function)."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def _contains(haystack: list[str], needle: list[str]) -> bool:
    return any(haystack[i : i + len(needle)] == needle for i in range(len(haystack) - len(needle) + 1))


@pytest.fixture(scope="module", autouse=True)
def plugin(tmp_path_factory):
    """The examples installed as the distribution ``crax-plugin-examples`` with the guide's entry point."""
    (toml,) = [text for lang, text in BLOCKS if lang == "toml"]
    entry_points = tomllib.loads(toml)["project"]["entry-points"]["crax.plugins"]
    assert entry_points == {PLUGIN: "tests.plugin_examples.plugin"}
    site = tmp_path_factory.mktemp("site")
    write_distribution(site, "crax-plugin-examples", entry_points)
    with installed(site):
        yield crax.registry()


def test_the_guide_quotes_the_examples_whole_and_nothing_else():
    files = sorted(p for p in EXAMPLES.iterdir() if p.suffix in (".py", ".xml") and p.name != "__init__.py")
    sources = {p.name: _lines(p.read_text()) for p in files}
    sources[pathlib.Path(__file__).name] = _lines(pathlib.Path(__file__).read_text())
    code = [(lang, _lines(text)) for lang, text in BLOCKS if lang in ("python", "xml")]
    for lang, block in code:
        assert any(_contains(src, block) for src in sources.values()), f"a {lang} block of the guide is in no example:\n" + "\n".join(block)
    quoted = [block for _, block in code]
    for p in files:
        assert sources[p.name] in quoted, f"docs/plugins.md does not quote {p.name} whole"


def test_one_component_of_each_kind_is_registered_by_the_installed_plugin(plugin):
    from tests.plugin_examples import beacon, disk, drift, learner, puddles, thrust_limit

    assert plugin.pm.get_plugin(PLUGIN) is not None and manager.DISTRIBUTIONS[PLUGIN] == "crax-plugin-examples"
    expected = {"bodies": disk.Disk, "sensors": beacon.Beacon, "hazards": puddles.Puddles,
                "constraints": thrust_limit.ThrustLimit, "suites": drift.Drift, "learners": learner.SquaredCostPPO}
    for kind, cls in expected.items():
        assert plugin.get(kind, cls.name) is cls and manager.OWNERS[cls] == PLUGIN
        assert plugin.rejected(kind) == {}
    assert {"DiskGoal1", "DiskButton3", "DiskDrift2", "PointDrift1"} <= set(crax.env_ids())
    assert "DiskVelocity1" not in crax.env_ids()  # the Disk is no locomotion body


def test_disk_works_in_a_builtin_suite_with_its_mjcf_from_package_data():
    env = crax.make("DiskGoal1")
    assert env.action_size == 2
    assert env.observation_size == 3 + 16 + 16 + 2 + 16  # Disk's own 3, then Goal's lidars and compasses
    m = env.mj_model
    puck, rim = m.geom("agent/puck"), m.geom("agent/rim")
    assert (int(puck.contype[0]), int(puck.conaffinity[0])) == (Category.AGENT_FLOATING, Category.HAZARD | Category.WALL | Category.PROP | Category.PROP_FLOATING)
    assert (int(rim.contype[0]), int(rim.conaffinity[0])) == (0, 0)  # visual in disk.xml, left visual
    assert m.body("agent/torso").id == env.body.torso_id


def test_disk_place_and_observe_by_hand():
    env = crax.make("DiskDrift1")
    body = env.body
    np.testing.assert_allclose(body.place(jnp.asarray([5.0, 5.0, 0.1]), jnp.asarray([1.0, 2.0]), jnp.asarray(0.5)),
                               [1.0, 2.0, 0.6])  # position set, heading turned by yaw
    data = env._data0.replace(qpos=jnp.asarray([0.0, 0.0, np.pi / 2]), qvel=jnp.asarray([1.0, 0.0, 0.5]))
    # heading +y, moving +x: 0 along the heading, 1 m/s to its right (-left), yaw rate 0.5
    np.testing.assert_allclose(body.observe(data), [0.0, -1.0, 0.5], atol=1e-6)


@pytest.mark.slow
def test_drift_episode_with_the_disk():
    """DiskDrift1 compiled: full thrust moves the disk along its heading, the reward is its x
    progress, and ``cost/puddles`` is 1 exactly on the steps its centre is on a puddle."""
    env = crax.make("DiskDrift1", episode_length=100)
    assert env.observation_size == 3 + 8
    reset, step = jax.jit(env.reset), jax.jit(env.step)
    state = reset(jax.random.key(1))
    start, yaw = env.body.position(state.data)[:2], env.body.yaw(state.data)
    heading = jnp.stack([jnp.cos(yaw), jnp.sin(yaw)])
    puddles = jnp.asarray([start + 0.5 * heading, [9.0, 9.0], [-9.0, 9.0], [9.0, -9.0]])  # one on its path
    state = state.replace(info={**state.info, "task": {**state.info["task"], "puddles": puddles}})
    rewards, costs, expected = [], [], []
    for _ in range(25):
        state = step(state, jnp.asarray([1.0, 0.0]))
        xy = env.body.position(state.data)[:2]
        rewards.append(float(state.reward))
        costs.append(float(state.metrics["cost/puddles"]))
        expected.append(float(jnp.sum(jnp.linalg.norm(puddles - xy, axis=-1) < 0.3)))
    moved = env.body.position(state.data)[:2] - start
    assert float(jnp.linalg.norm(moved)) > 0.3
    assert float(jnp.dot(moved, heading) / jnp.linalg.norm(moved)) > 0.99  # along its heading
    assert sum(rewards) == pytest.approx(float(moved[0]), abs=1e-5)  # reward: x progress
    assert costs == expected and 0 < sum(costs) < 25  # on the puddle for part of the way
    assert float(state.obs[0]) > 0.3 and abs(float(state.obs[1])) < 1e-2  # forward speed, no sideways


@pytest.mark.slow
def test_added_components_beacon_and_thrust_limit_by_hand():
    env = crax.make("PointGoal1", constraints={"ThrustLimit": {"limit": 0.25}}, sensors={"Beacon": {"x": 1.0, "y": 2.0}})
    beacon, term = env.suite.sensors[-1], env.suite.constraints[-1]
    assert env.observation_size == 62 + 2
    np.testing.assert_allclose(env.mj_model.site_pos[beacon.site_id], [1.0, 2.0, 0.3])  # added by its build
    site_xpos = env._data0.site_xpos.at[beacon.site_id].set(jnp.asarray([1.0, 2.0, 0.3]))
    ctx = Context(model=env.mjx_model, data=env._data0.replace(site_xpos=site_xpos), agent_xy=jnp.asarray([1.0, 0.0]),
                  agent_yaw=jnp.asarray(np.pi / 2), task={}, action=jnp.asarray([-0.9, 0.3]))
    np.testing.assert_allclose(beacon.observe(ctx), [2.0, 0.0], atol=1e-6)  # 2 m straight ahead
    assert float(term.cost(ctx)) == pytest.approx(0.9 - 0.25)  # |a₀| beyond the limit
    metrics = jax.eval_shape(env.step, env.state_shapes, jnp.zeros(2)).metrics
    assert "cost/thrust" in metrics and metrics["cost/thrust"].shape == ()

    graphdef, params, rest = nnx.split(term, TaskParam, ...)

    def cost_at(limit):
        copy = nnx.merge(graphdef, params, rest, copy=True)  # a fresh module inside the trace
        copy.limit[...] = limit
        return copy.cost(ctx)

    costs = jax.vmap(cost_at)(jnp.asarray([0.0, 0.5, 0.8]))
    np.testing.assert_allclose(costs, [0.9, 0.4, 0.1], atol=1e-6)
    state = nnx.state(env.suite, TaskParam)  # every TaskParam of the task, the added term's too
    values = {tuple(path): v[...] for path, v in nnx.to_flat_state(state)}
    n = len(env.suite.constraints) - 1
    assert values[("constraints", n, "limit")] == pytest.approx(0.25)
    state["constraints"][n]["limit"][...] = jnp.asarray(0.5)
    nnx.update(env.suite, state)
    assert float(term.cost(ctx)) == pytest.approx(0.4)


def test_puddles_cost_by_hand():
    from tests.plugin_examples.puddles import Puddles

    p = Puddles(3, radius=0.5)
    got = p.cost(jnp.zeros(2), jnp.asarray([[0.3, 0.3], [0.5, 0.0], [2.0, 2.0]]))
    np.testing.assert_array_equal(got, [1.0, 0.0, 0.0])  # 0.42 m: inside; 0.5 m: on the edge, outside


def test_learner_changes_the_trained_reward_and_is_a_train_subcommand(capsys):
    from crax.cli import main
    from tests.plugin_examples.learner import SquaredCostConfig, SquaredCostPPO

    learner = SquaredCostPPO(SquaredCostConfig(cost_weight=0.5), 4, 2, 10, rngs=nnx.Rngs(0))
    got = learner.training_reward(jnp.asarray([1.0, 1.0, -1.0]), jnp.asarray([0.0, 2.0, 1.0]))
    np.testing.assert_allclose(got, [1.0, 1.0 - 0.5 * 4.0, -1.0 - 0.5])  # r − w·c²
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "ppo-squared-cost", "--help"])
    assert exit_info.value.code == 0 and "--cost-weight" in capsys.readouterr().out


@dataclasses.dataclass(frozen=True)
class StepFields:
    """The rule's field (``--lambda-step`` on the command line)."""

    lambda_step: float = 0.05
    """How far λ moves per iteration."""


class StepRule(PenaltyRule):
    """λ moves by a fixed step each iteration: up while the cost is over the bound (v > 0), down while
    under it, never below 0. As a PenaltyRule it mixes (Â_r − λ·Â_c) / (1 + λ)."""

    Fields: ClassVar[type[StepFields]] = StepFields
    config: StepFields

    def __init__(self, config: StepFields, cost_shape: tuple[int, ...], episode_length: int):
        super().__init__(config, cost_shape, episode_length)
        self.lagrange = self.filled(0.0)  # a Multiplier: logged and checkpointed, never trained

    def update(self, violation: jax.Array, bound: jax.Array) -> None:
        step = self.config.lambda_step * jnp.sign(violation)
        self.lagrange[...] = jnp.maximum(0.0, self.lagrange[...] + step)


@dataclasses.dataclass(frozen=True)
class StepLagConfig(StepFields, PPOConfig):
    """PPO's hyperparameters plus the rule's."""


class StepLagPPO(ConstrainedPPO, name="ppo-step-lag", config=StepLagConfig, rule=StepRule):
    """PPO composed with the step rule."""


def test_multiplier_hook_example_by_hand_and_in_the_training_loop(tmp_path):
    from crax import runs
    from tests.learners.toy_env import ToyEnv

    learner = StepLagPPO(StepLagConfig(lambda_step=0.1), 4, 2, 10, rngs=nnx.Rngs(0))
    seen = []
    for v in (0.3, 0.2, -0.5, -0.1, -0.2):
        learner.multiplier_update(jnp.asarray(v))
        seen.append(float(learner.multipliers()["lagrange"]))
    np.testing.assert_allclose(seen, [0.1, 0.2, 0.1, 0.0, 0.0], atol=1e-6)  # by sign, clamped at 0
    learner.rule.lagrange[...] = jnp.asarray(0.5)
    got = learner.advantage(jnp.asarray([1.0, -1.0]), jnp.asarray([2.0, 0.0]), jnp.asarray(0.0))
    np.testing.assert_allclose(got, [(1.0 - 1.0) / 1.5, -1.0 / 1.5], atol=1e-6)
    # the loop calls the hook once per iteration: bound 0 makes v = ĉ > 0 (the toy env's band costs 1)
    config = StepLagConfig(lambda_step=0.1, safety_bound=0.0, num_envs=8, unroll_length=4, batch_size=4,
                           num_minibatches=4, num_epochs=1, actor_hidden=(8,), critic_hidden=(8,), eval_envs=4,
                           num_evals=0, total_steps=3 * 64)
    runs.train(StepLagPPO, config, ToyEnv(), run_dir=tmp_path / "run", progress=False)
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    lambdas = [r["multiplier/lagrange"] for r in rows if "multiplier/lagrange" in r]
    np.testing.assert_allclose(lambdas, [0.1, 0.2, 0.3], atol=1e-6)


def test_parameters_of_a_plugin_task():
    params = crax.parameters("DiskDrift2")
    assert params["puddle_radius"].default == 0.3 and params["puddle_radius"].describe() == "> 0"
    assert params["episode_length"].default == 1000
    assert list(params) == ["puddle_radius", "extent", "episode_length", "physics", "solver_iterations", "ls_iterations",
                            "constraints", "sensors"]
