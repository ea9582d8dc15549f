"""Presets: OmniSafe's settings as data files, checked against the learners' configs and taken by the CLI."""

from __future__ import annotations

import pytest

from crax.cli.train import parse_learner_command
from crax.learners import presets
from crax.runs.envs import learners
from tests.learners.conftest import TOY_ENV_ID


@pytest.mark.parametrize("preset", presets.presets())
def test_every_preset_file_names_fields_of_its_learner_in_range(preset):
    table = learners()
    names = presets.learners_with(preset)
    assert names, f"preset {preset} has no files"
    for name in names:
        assert name in table, f"preset {preset} has a file for {name!r}, which is not a learner"
        values = presets.preset_values(preset, table[name])
        assert values
        assert presets.source(preset, name)["source"]["algorithm"]
        for env_id in presets.read(preset, name).get("env", {}):
            assert presets.preset_values(preset, table[name], env_id) != values


def test_the_omnisafe_preset_is_omnisafes_ppo_lag():
    values = presets.preset_values("omnisafe", learners()["ppo-lag"])
    assert values["lambda_optimizer"] == "adam" and values["lambda_lr"] == pytest.approx(0.035)
    assert values["lambda_init"] == pytest.approx(0.001)
    assert values["actor_hidden"] == (64, 64) and values["activation"] == "tanh"
    assert values["batch_size"] * values["num_minibatches"] == 19_968 and values["num_epochs"] == 40
    assert values["cost_signal"] == "episodes" and values["cost_window"] == 100


def test_an_env_section_lays_omnisafes_per_env_values_over_the_defaults():
    sac_lag = learners()["sac-lag"]
    values = presets.preset_values("omnisafe", sac_lag)
    goal = presets.preset_values("omnisafe", sac_lag, "SafetyPointGoal1-v0")
    assert values["init_alpha"] == pytest.approx(0.2) and not values["auto_alpha"]
    assert goal["init_alpha"] == pytest.approx(1e-5) and goal["actor_learning_rate"] == pytest.approx(5e-6)
    assert goal["buffer_size"] == values["buffer_size"]
    assert presets.preset_values("omnisafe", sac_lag, "SafetyHopperVelocity-v1") == values  # no section


def test_unknown_presets_and_uncovered_learners_name_the_choices():
    with pytest.raises(ValueError, match="unknown preset 'nope'; the presets are omnisafe"):
        presets.learners_with("nope")
    with pytest.raises(ValueError, match="has no settings for learner 'ppo-cost'; it covers .*ppo-lag"):
        presets.preset_values("omnisafe", learners()["ppo-cost"])


def test_the_cli_takes_a_presets_values_as_defaults_and_flags_over_them():
    cls, config, _ = parse_learner_command(["ppo-lag", "--env", TOY_ENV_ID, "--preset", "omnisafe",
                                            "--num-epochs", "3"], "crax train", "")
    assert cls.name == "ppo-lag"
    assert config.num_epochs == 3  # the flag
    assert config.lambda_optimizer == "adam" and config.actor_std == "parameter"  # the preset
    assert config.total_steps == 10_000_000
    _, plain, _ = parse_learner_command(["ppo-lag", "--env", TOY_ENV_ID], "crax train", "")
    assert plain.lambda_optimizer == "sgd" and plain.num_epochs == 6


def test_the_cli_refuses_an_unknown_preset_naming_the_presets(capsys):
    with pytest.raises(SystemExit) as e:
        parse_learner_command(["ppo-lag", "--env", TOY_ENV_ID, "--preset", "nope"], "crax train", "")
    assert e.value.code == 2
    assert "the presets are omnisafe" in capsys.readouterr().err
