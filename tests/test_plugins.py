"""The plugin path: entry-point discovery with the real example package, clashes and failures."""

import importlib.metadata
import json
import textwrap
import types
import warnings

import jax
import jax.numpy as jnp
import pluggy
import pytest

import crax
from crax.plugins import PluginError, Registry, hookimpl, hookspecs
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


def test_duplicate_component_name_is_an_error_naming_both_plugins():
    class FakePoint:
        name = "Point"

    clash = types.SimpleNamespace(crax_register_bodies=hookimpl(lambda: [FakePoint]))
    reg = Registry(_manager(("shadowing_plugin", clash)))
    with pytest.raises(PluginError, match="'Point' is registered by plugin 'crax.builtin' and again by 'shadowing_plugin'"):
        reg.table("bodies")


def test_unknown_name_lists_valid_choices():
    with pytest.raises(ValueError, match="unknown body 'Nope'; valid choices: Ant, HalfCheetah, Hopper, Humanoid, Point, Reacher, Sled, Spider, Walker2d"):
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


def test_entry_point_name_declared_by_two_distributions_is_an_error(tmp_path, monkeypatch):
    dist = tmp_path / "impostor-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: impostor\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[crax.plugins]\ncrax_example = json\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PluginError, match="plugin name 'crax_example' is declared twice"):
        _load_entry_points(_manager())


def test_plugin_learner_trains_a_real_env_through_the_cli(tmp_path):
    """The example package's ``ppo-lag-capped`` appears as a subcommand, trains, and evaluates."""
    from crax.cli import main

    assert "ppo-lag-capped" in crax.registry().learners
    run_dir = tmp_path / "run"
    tiny = ["--num-envs", "8", "--unroll-length", "4", "--batch-size", "4", "--num-minibatches", "4",
            "--num-epochs", "2", "--actor-hidden", "16", "--critic-hidden", "16", "--eval-envs", "4",
            "--num-evals", "1", "--total-steps", "128", "--checkpoint-every", "1"]
    main(["train", "ppo-lag-capped", "--env", "PointGoal1", "--run-dir", str(run_dir), "--no-progress",
          "--lambda-max", "0.5", "--lambda-init", "3.0", "--safety-bound", "0", *tiny])
    config = (run_dir / "config.json").read_text()
    assert '"learner": "ppo-lag-capped"' in config and '"lambda_max": 0.5' in config
    assert list((run_dir / "tb" / "seed_0").glob("events.out.tfevents.*"))
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    lambdas = [r["multiplier/lagrange"] for r in rows if "multiplier/lagrange" in r]
    # bound 0 makes the violation v = ĉ ≥ 0, so plain PPO-Lag would keep λ ≥ λ₀ = 3; the plugin caps it
    assert lambdas and all(lam == 0.5 for lam in lambdas)
    main(["eval", str(run_dir), "--episodes", "4"])
