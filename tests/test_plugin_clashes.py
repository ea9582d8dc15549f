"""Installed plugins that reuse a component name: each clash is reported once, crax and every
other name keep working, built-ins keep their names, and a name only plugins share raises when
it is asked for (docs/DECISIONS.md 43)."""

import re
import warnings

import jax
import jax.numpy as jnp
import pytest

import crax
from crax.cli import main
from crax.costs import JointLimit
from crax.learners import PPOLag
from crax.plugins import PluginError
from tests.fake_install import installed_sources

SENSOR = """
    import jax.numpy as jnp

    from crax.sensors import Sensor


    class {cls}(Sensor):
        name = "{name}"
        size = 2

        def observe(self, ctx):
            return jnp.stack([jnp.cos(ctx.agent_yaw), jnp.sin(ctx.agent_yaw)])
    """

PLUGINS = {
    # a built-in constraint's and a built-in learner's names, its hooks asking to run first
    "shadow": ("shadow-plugin", """
        import jax.numpy as jnp

        from crax import hookimpl
        from crax.costs import Constraint
        from crax.learners import PPOLag


        class JointLimit(Constraint):
            name = "JointLimit"

            def __init__(self, *, term: str = "joint_limit"):
                self.term = term

            def cost(self, ctx):
                return jnp.ones(())


        class MyPPOLag(PPOLag):
            name = "ppo-lag"


        @hookimpl(tryfirst=True)
        def crax_register_constraints():
            return [JointLimit]


        @hookimpl(tryfirst=True)
        def crax_register_learners():
            return [MyPPOLag]
        """),
    # two independent plugins that both call their sensor Heading; the first has a second sensor
    "heading_a": ("heading-a-plugin", SENSOR.format(cls="Heading", name="Heading") + SENSOR.format(cls="Bearing", name="Bearing") + """
    from crax import hookimpl


    @hookimpl
    def crax_register_sensors():
        return [Heading, Bearing]
    """),
    "heading_b": ("heading-b-plugin", SENSOR.format(cls="Heading", name="Heading") + """
    from crax import hookimpl


    @hookimpl
    def crax_register_sensors():
        return [Heading]
    """),
}


@pytest.fixture
def clashing_plugins(tmp_path):
    with installed_sources(tmp_path, PLUGINS):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            crax.registry().table("bodies")
        yield [str(w.message) for w in caught]


def test_clashing_names_break_no_command(clashing_plugins, capsys):
    env = crax.make("PointGoal1")  # no plugin component involved
    assert env.state_shapes.obs.shape == (env.observation_size,)
    main(["list"])
    listed = capsys.readouterr().out
    assert "JointLimit" in listed and "ppo-lag" in listed and "Bearing" in listed
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--help"])
    assert exit_info.value.code == 0 and "ppo-lag" in capsys.readouterr().out


def test_each_clash_is_reported_once_naming_every_claimant(clashing_plugins):
    joint = [m for m in clashing_plugins if "'JointLimit'" in m]
    assert joint == [
        "constraint name 'JointLimit' is claimed by crax (class crax.costs.joint_limit.JointLimit) and plugin "
        "'shadow' (shadow-plugin) (class shadow_module.JointLimit); crax's own constraint keeps the name and the "
        "plugin's class is ignored — rename it in 'shadow' (shadow-plugin): set the class attribute name to one "
        "that `crax list` does not show (docs/plugins.md), or uninstall one of the distributions"]
    (learner,) = [m for m in clashing_plugins if "'ppo-lag'" in m]
    assert learner.startswith("learner name 'ppo-lag' is claimed by crax (class crax.learners.on_policy.ppo_lag.PPOLag) and "
                              "plugin 'shadow' (shadow-plugin) (class shadow_module.MyPPOLag); crax's own learner keeps")
    assert [m for m in clashing_plugins if "'Heading'" in m] == [
        "sensor name 'Heading' is claimed by plugin 'heading_a' (heading-a-plugin) (class heading_a_module.Heading) "
        "and plugin 'heading_b' (heading-b-plugin) (class heading_b_module.Heading), so it names neither — rename "
        "it in one of the plugins: set the class attribute name to one that `crax list` does not show "
        "(docs/plugins.md), or uninstall one of the distributions. Asking for 'Heading' raises this error; the "
        "plugins' other components work"]
    assert len(clashing_plugins) == 3, clashing_plugins


def test_builtins_keep_their_names(clashing_plugins):
    reg = crax.registry()
    assert reg.get("constraints", "JointLimit") is JointLimit and reg.get("learners", "ppo-lag") is PPOLag
    env = crax.make("AntVelocity1", constraints={"JointLimit": {}})  # crax's JointLimit, not the plugin's constant 1
    assert type(env.suite.constraints[-1]) is JointLimit


@pytest.mark.slow
def test_a_name_only_plugins_share_raises_when_asked_for_and_their_other_names_work(clashing_plugins, tmp_path, capsys):
    reg = crax.registry()
    assert "Heading" not in reg.sensors and "Bearing" in reg.sensors
    message = "^" + re.escape("sensor name 'Heading' is claimed by plugin 'heading_a' (heading-a-plugin) (class "
                              "heading_a_module.Heading) and plugin 'heading_b'") + ".* or uninstall one of the distributions$"
    with pytest.raises(PluginError, match=message):
        reg.get("sensors", "Heading")
    with pytest.raises(PluginError, match=message):
        crax.make("PointGoal1", sensors={"heading": {}})
    with pytest.raises(SystemExit) as exit_info:  # on the command line: a message and status 2, no traceback
        main(["train", "ppo", "--env", "PointGoal1", "--run-dir", str(tmp_path / "run"), "--sensor", "heading"])
    assert exit_info.value.code == 2 and not (tmp_path / "run").exists()
    assert "sensor name 'Heading' is claimed by plugin 'heading_a'" in capsys.readouterr().err
    env = crax.make("PointGoal1", sensors={"Bearing": {}})
    state = jax.eval_shape(env.step, env.state_shapes, jnp.zeros(2))
    assert state.obs.shape == (crax.make("PointGoal1").observation_size + 2,)
