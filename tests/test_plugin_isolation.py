"""A broken installed plugin is reported once by name and skipped; crax and the other plugins work."""

import warnings

import jax
import jax.numpy as jnp
import pytest

import crax
from crax.plugins import manager
from tests.fake_install import installed_sources

BROKEN = {
    # a hook that raises: an optional dependency missing, imported inside the hook
    "broken_hook": ("broken-hook-plugin", """
        from crax import hookimpl

        @hookimpl
        def crax_register_constraints():
            from tests.plugin_examples.thrust_limit import ThrustLimit
            return [ThrustLimit]

        @hookimpl
        def crax_register_bodies():
            import a_dependency_that_is_not_installed  # noqa: F401
            return []
        """),
    # registration fails: a hook named like crax's that crax does not define
    "misnamed_hook": ("misnamed-hook-plugin", """
        from crax import hookimpl

        @hookimpl
        def crax_register_robots():
            return []
        """),
    # registration fails: a hook taking an argument crax does not pass
    "bad_signature": ("bad-signature-plugin", """
        from crax import hookimpl

        @hookimpl
        def crax_register_sensors(config):
            return []
        """),
}


@pytest.fixture
def broken_plugins(tmp_path):
    with installed_sources(tmp_path, BROKEN):
        yield


@pytest.mark.slow
def test_broken_plugins_are_skipped_with_one_warning_each_and_crax_still_works(broken_plugins):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reg = crax.registry()
        names = crax.names()
        env = crax.make("PointGoal1")
        crax.make("PointGoal1", constraints={"tether": {}})
        reg.table("bodies"), reg.table("learners")
    messages = [str(w.message) for w in caught]
    for name, (dist, _) in BROKEN.items():
        mine = [m for m in messages if f"crax plugin {name!r} ({dist})" in m]
        assert len(mine) == 1, messages  # reported once, by plugin and distribution
        assert "the plugin is skipped (crax and the other plugins work without it)" in mine[0]
    (hook,) = [m for m in messages if "'broken_hook'" in m]
    assert ("hook crax_register_bodies failed: ModuleNotFoundError: No module named "
            "'a_dependency_that_is_not_installed'") in hook
    (misnamed,) = [m for m in messages if "'misnamed_hook'" in m]
    assert "failed to register" in misnamed and "crax_register_robots" in misnamed
    (signature,) = [m for m in messages if "'bad_signature'" in m]
    assert "failed to register" in signature and "config" in signature
    # the whole broken plugin is skipped (its working constraint hook too); the others are not
    assert "ThrustLimit" not in names["constraints"]
    assert {"Point", "Sled"} <= set(names["bodies"]) and "Tether" in names["constraints"]
    assert {"broken_hook", "misnamed_hook", "bad_signature"}.isdisjoint(dict(reg.pm.list_name_plugin()))
    state = env.state_shapes
    state = jax.eval_shape(env.step, state, jnp.zeros(2))
    assert state.obs.shape == (62,) and "cost/cylinder_zones" in state.metrics


def test_without_the_broken_plugins_nothing_is_reported():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        manager.registry.cache_clear()
        manager.plugin_manager.cache_clear()
        crax.registry().table("bodies")
    assert not [w for w in caught if "crax plugin" in str(w.message)]
