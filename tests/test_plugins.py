"""The plugin path: entry-point discovery with the real example package, clashes and failures."""

import importlib.metadata
import json
import re
import textwrap
import types
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pluggy
import pytest

import crax
from crax.plugins import PluginError, Registry, hookimpl, hookspecs, manager
from crax.plugins import builtin as builtin_plugin
from crax.plugins.manager import _load_entry_points


def _manager(*plugins: tuple[str, object]) -> pluggy.PluginManager:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.register(builtin_plugin, name="crax.builtin")
    for name, plugin in plugins:
        pm.register(plugin, name=name)
    return pm


def test_example_plugin_is_an_installed_distribution():
    dist = importlib.metadata.distribution("crax-example-plugin")
    eps = [ep for ep in dist.entry_points if ep.group == "crax.plugins"]
    assert [ep.value for ep in eps] == ["crax_example_plugin.plugin"]
    assert "crax_example" in dict(crax.registry().pm.list_name_plugin())


def test_plugin_body_works_in_goal_without_suite_changes():
    assert "Sled" in crax.registry().bodies
    assert "SledGoal1" in crax.env_ids()
    env = crax.make("SledGoal1")
    assert env.action_size == 2
    assert env.observation_size == 6 + 16 + 16 + 2 + 16
    state = jax.jit(env.reset)(jax.random.key(0))
    step = jax.jit(env.step)
    x0 = env.body.position(state.data)[:2]
    for _ in range(10):
        state = step(state, jnp.array([1.0, 0.0]))
    moved = jnp.linalg.norm(env.body.position(state.data)[:2] - x0)
    assert moved > 0.01  # the thrust actuator drives it
    assert jnp.isfinite(state.obs).all()
    assert set(state.metrics) >= {"reward/distance", "reward/goal", "cost/cylinder_zones", "cost/contact"}


def test_plugin_body_rejected_by_suite_it_does_not_support():
    with pytest.raises(ValueError, match="bodies for Velocity: Ant, HalfCheetah, Hopper, Humanoid, Point, Spider, Walker2d"):
        crax.make("SledVelocity1")


def _body_named(name: str) -> type:
    from crax.bodies.point import Point

    return type(name + "Copy", (Point,), {"name": name, "__module__": "my_robots"})


def test_a_builtin_name_stays_crax_own_and_a_name_two_plugins_share_names_neither():
    one = types.SimpleNamespace(crax_register_bodies=hookimpl(tryfirst=True)(lambda: [_body_named("Point"), _body_named("Rover")]))
    two = types.SimpleNamespace(crax_register_bodies=hookimpl(lambda: [_body_named("Rover"), _body_named("Tank")]))
    reg = Registry(_manager(("one", one), ("two", two)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bodies = reg.bodies
    fix = "set the class attribute name to one that `crax list` does not show (docs/plugins.md), or uninstall one of the distributions"
    rover = ("body name 'Rover' is claimed by plugin 'one' (class my_robots.RoverCopy) and plugin 'two' "
             "(class my_robots.RoverCopy), so it names neither — rename it in one of the plugins: " + fix)
    assert [str(w.message) for w in caught] == [
        "body name 'Point' is claimed by crax (class crax.bodies.point.Point) and plugin 'one' "
        "(class my_robots.PointCopy); crax's own body keeps the name and the plugin's class is ignored — "
        "rename it in 'one': " + fix,
        rover + ". Asking for 'Rover' raises this error; the plugins' other components work",
    ]
    from crax.bodies.point import Point

    assert bodies["Point"] is Point and reg.get("bodies", "Point") is Point
    assert "Rover" not in bodies and bodies["Tank"].__name__ == "TankCopy"
    with pytest.raises(PluginError, match="^" + re.escape(rover) + "$"):
        reg.get("bodies", "Rover")


def test_a_rejected_component_error_is_chained_to_the_check_that_made_it():
    class Blind(crax.sensors.Sensor):
        name = "Blind"
        size = 1

    reg = Registry(_manager(("blind", types.SimpleNamespace(crax_register_sensors=hookimpl(lambda: [Blind])))))
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        original = reg.rejected("sensors")["Blind"]
    with pytest.raises(TypeError, match="sensor class Blind: defines no observe") as error:
        reg.get("sensors", "Blind")
    assert error.value is not original and error.value.__cause__ is original
    assert original.__traceback__ is not None  # where check_class raised it


def test_every_class_the_hook_specs_name_exists():
    import importlib

    named = re.findall(r":class:`(crax\.[\w.]+)`", hookspecs.__doc__ + "".join(
        getattr(hookspecs, f"crax_register_{kind}").__doc__ for kind in manager.KINDS))
    assert len(named) == len(manager.KINDS)
    for path in named:
        module, _, attr = path.rpartition(".")
        assert isinstance(getattr(importlib.import_module(module), attr, None), type), path


def test_unknown_name_lists_valid_choices():
    with pytest.raises(ValueError, match="unknown body 'Nope'; valid choices: Ant, Car, Doggo, HalfCheetah, Hopper, Humanoid, Point, Racecar, Reacher, Sled, Spider, Walker2d"):
        crax.registry().get("bodies", "Nope")
    with pytest.raises(ValueError, match="valid kinds"):
        crax.registry().table("robots")


def test_plugin_that_fails_to_import_is_reported_by_name(tmp_path, monkeypatch):
    dist = tmp_path / "broken_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        textwrap.dedent("""
        [crax.plugins]
        broken = broken_plugin_module_that_does_not_exist
        """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    pm = _manager()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _load_entry_points(pm)
    messages = [str(w.message) for w in caught]
    assert any("'broken'" in m and "broken-plugin" in m and "failed to import" in m for m in messages), messages
    assert pm.get_plugin("broken") is None
    assert pm.get_plugin("crax_example") is not None  # the healthy plugin still loads


def test_entry_point_name_declared_by_two_distributions_is_a_warning_naming_both(tmp_path, monkeypatch):
    dist = tmp_path / "impostor-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: impostor\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[crax.plugins]\ncrax_example = json\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    pm = _manager()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _load_entry_points(pm)
    (message,) = [str(w.message) for w in caught if "declared twice" in str(w.message)]
    assert message.startswith("crax plugin name 'crax_example' is declared twice: by ")
    assert "impostor (json)" in message and "crax-example-plugin (crax_example_plugin.plugin)" in message
    assert "rename the entry point in one of the two" in message
    assert pm.get_plugin("crax_example") is not None  # one of the two, and crax goes on


@pytest.mark.slow
def test_plugin_constraint_and_sensor_compose_into_a_task_by_name():
    """The example package's Tether term and Pose sensor, found through its installed entry point."""
    from crax_example_plugin.pose import Pose
    from crax_example_plugin.tether import Tether

    reg = crax.registry()
    assert reg.constraints["Tether"] is Tether and reg.sensors["Pose"] is Pose
    env = crax.make("PointGoal1", constraints={"tether": {"radius": 1.5, "weight": 2.0}}, sensors={"pose": {"scale": 3.0}})
    assert isinstance(env.suite.constraints[-1], Tether) and isinstance(env.suite.sensors[-1], Pose)
    assert env.observation_size == crax.make("PointGoal1").observation_size + 4  # both by jax.eval_shape
    assert "cost/tether" in jax.eval_shape(env.step, env.state_shapes, jnp.zeros(2)).metrics
    ctx = crax.sensors.Context(model=None, data=None, agent_xy=jnp.asarray([3.0, -4.0]),
                               agent_yaw=jnp.asarray(jnp.pi / 2), task={})
    tether, pose = env.suite.constraints[-1], env.suite.sensors[-1]
    assert float(tether.cost(ctx)) == pytest.approx(2.0 * (5.0 - 1.5))  # w · (‖xy‖ − radius)
    assert float(tether.cost(ctx.replace(agent_xy=jnp.asarray([0.9, 1.2])))) == 0.0  # 1.5 m: on the leash's end
    np.testing.assert_allclose(pose.observe(ctx), [1.0, -4.0 / 3.0, 0.0, 1.0], atol=1e-6)  # xy/scale, cos, sin


def test_plugin_constraint_that_does_not_fit_the_body_lists_the_bodies_it_fits():
    with pytest.raises(ValueError, match=r"^constraint Tether \(HalfCheetahVelocity1\) needs a body of kind\(s\) "
                                         r"navigation; HalfCheetah is locomotion, planar; bodies it fits: Ant, Car, Doggo, "
                                         r"Humanoid, Point, Racecar, Sled, Spider$"):
        crax.make("HalfCheetahVelocity1", constraints={"Tether": {}})


@pytest.mark.slow  # trains and evaluates on PointCircle1 (the cheapest navigation task to compile), then resumes
def test_plugin_learner_trains_a_real_env_through_the_cli(tmp_path, capsys):
    """The example package's ``ppo-lag-capped`` appears as a subcommand and trains with the package's
    added cost term and sensor (and a built-in term); eval and resume rebuild the same env."""
    from crax import runs
    from crax.cli import main

    assert "ppo-lag-capped" in crax.registry().learners
    run_dir = tmp_path / "run"
    tiny = ["--num-envs", "8", "--unroll-length", "4", "--batch-size", "4", "--num-minibatches", "4",
            "--num-epochs", "2", "--actor-hidden", "16", "--critic-hidden", "16", "--eval-envs", "4",
            "--num-evals", "0", "--total-steps", "128", "--checkpoint-every", "1"]  # crax eval below evaluates
    added = ["--constraint", "action_energy:weight=0.05", "--constraint", "tether:radius=1.5", "--sensor", "pose:scale=3",
             "--env-param", "episode_length=64"]
    main(["train", "ppo-lag-capped", "--env", "PointCircle1", "--run-dir", str(run_dir), "--no-progress",
          "--lambda-max", "0.5", "--lambda-init", "3.0", "--safety-bound", "0", *tiny, *added])
    config = (run_dir / "config.json").read_text()
    assert '"learner": "ppo-lag-capped"' in config and '"lambda_max": 0.5' in config
    record = json.loads(config)
    assert record["env_kwargs"] == {"constraints": {"action_energy": {"weight": 0.05}, "tether": {"radius": 1.5}},
                                    "sensors": {"pose": {"scale": 3}}, "episode_length": 64}
    rebuilt = runs.make_env(record["env"], record["env_kwargs"])  # what eval and --resume build
    assert rebuilt.episode_length == 64
    assert [c.term for c in rebuilt.suite.constraints][-2:] == ["action_energy", "tether"]
    assert rebuilt.observation_size == crax.make("PointCircle1").observation_size + 4
    assert list((run_dir / "tb" / "seed_0").glob("events.out.tfevents.*"))
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    lambdas = [r["multiplier/lagrange"] for r in rows if "multiplier/lagrange" in r]
    # bound 0 makes the violation v = ĉ ≥ 0, so plain PPO-Lag would keep λ ≥ λ₀ = 3; the plugin caps it
    assert lambdas and all(lam == 0.5 for lam in lambdas)
    capsys.readouterr()
    main(["eval", str(run_dir), "--episodes", "4", "--json"])  # the checkpoint loads: same observation size
    assert json.loads(capsys.readouterr().out)["env_steps"] == 128
    main(["train", "--resume", str(run_dir), "--total-steps", "192", "--no-progress"])
    from crax.runs import checkpoint as ckpt

    assert [step for step, _ in ckpt.checkpoints(run_dir)][-1] == 192
    assert json.loads((run_dir / "config.json").read_text())["env_kwargs"] == record["env_kwargs"]
    with pytest.raises(SystemExit) as exit_info:  # a bad spec: status 2 and a message, before any run folder
        main(["train", "ppo-lag", "--env", "PointCircle1", "--run-dir", str(tmp_path / "bad"), "--constraint", "tether:r=1"])
    assert exit_info.value.code == 2 and not (tmp_path / "bad").exists()
    assert "takes no parameter(s) r; its parameters: radius, weight, term" in capsys.readouterr().err
    for flag, message in [("episode_lenght=64", "unknown parameter(s) episode_lenght for PointCircle1; valid parameters:"),
                          ("physics=warp", "--env-param physics=...: give it with --physics"),
                          ("episode_length", "is not FIELD=VALUE")]:
        with pytest.raises(SystemExit) as exit_info:
            main(["train", "ppo-lag", "--env", "PointCircle1", "--run-dir", str(tmp_path / "bad"), "--env-param", flag])
        assert exit_info.value.code == 2 and not (tmp_path / "bad").exists()
        assert message in capsys.readouterr().err


def test_a_collision_mjx_lacks_names_the_geoms(monkeypatch):
    # the example plugin's Sled is a box; Goal2's pillars collide as capsules (box–capsule exists), but a
    # hazard colliding as a true cylinder meets a box MJX cannot test against
    from crax.objects.pillars import CylinderPillars

    monkeypatch.setattr(CylinderPillars, "collision_proxy", lambda self: None)
    with pytest.raises(ValueError, match=r"SledGoal2: MJX has no cylinder–box collision, and these geoms can collide: "
                                         r"agent/hull / cylinder_pillars/0.*sphere or capsule"):
        crax.make("SledGoal2")
    monkeypatch.undo()
    assert crax.make("SledGoal2").observation_size > 0


def test_a_plugin_family_trains_its_learners_with_its_own_trainer():
    """A plugin brings a learner family (a base class and its trainer) through ``crax_register_families``;
    its learners register and are trained by that trainer; a learner of no family is refused naming them,
    and a malformed pair is skipped with a warning."""
    import dataclasses

    from crax.learners import BaseTrainer, Learner, RunConfig
    from crax.runs import envs as run_envs

    @dataclasses.dataclass(frozen=True)
    class SearchConfig(RunConfig):
        population: int = 8

    class SearchFamily(Learner):
        name = "search-family"
        Config = SearchConfig

    class SearchTrainer(BaseTrainer):
        def __init__(self, learner_cls, config, env, devices=None):
            self.made = (learner_cls, config, env)

    class RandomSearch(SearchFamily):
        name = "random-search"

    class Orphan(Learner):
        name = "orphan"

    plugin = types.SimpleNamespace(
        crax_register_families=hookimpl(lambda: [(SearchFamily, SearchTrainer), ("not", "a pair")]),
        crax_register_learners=hookimpl(lambda: [RandomSearch, Orphan]))
    reg = Registry(_manager(("searchers", plugin)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        learners = reg.learners
    assert reg.families()[SearchFamily] is SearchTrainer and len(reg.families()) == 3
    assert learners["random-search"] is RandomSearch and "orphan" not in learners
    messages = [str(w.message) for w in caught]
    assert any("not a (family, trainer) pair" in m for m in messages)
    assert any("Orphan" in m and "SearchFamily" in m and "ConstrainedPPO" in m for m in messages)
    config = SearchConfig()
    trainer = run_envs.make_trainer(RandomSearch, config, "env", families=reg.families())
    assert isinstance(trainer, SearchTrainer) and trainer.made == (RandomSearch, config, "env")


def test_disabling_plugin_autoload_loads_only_crax_own_and_a_bad_value_names_the_choices(monkeypatch):
    manager.plugin_manager.cache_clear()
    try:
        monkeypatch.setenv("CRAX_DISABLE_PLUGIN_AUTOLOAD", "1")
        assert [name for name, _ in manager.plugin_manager().list_name_plugin()] == ["crax.builtin"]
        manager.plugin_manager.cache_clear()
        monkeypatch.setenv("CRAX_DISABLE_PLUGIN_AUTOLOAD", "maybe")
        with pytest.raises(ValueError, match=r"CRAX_DISABLE_PLUGIN_AUTOLOAD='maybe' is not a switch; use 0 .* or 1"):
            manager.plugin_manager()
        manager.plugin_manager.cache_clear()
        monkeypatch.setenv("CRAX_DISABLE_PLUGIN_AUTOLOAD", "0")
        assert "crax_example" in {name for name, _ in manager.plugin_manager().list_name_plugin()}
    finally:
        manager.plugin_manager.cache_clear()
