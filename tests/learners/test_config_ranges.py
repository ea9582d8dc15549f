"""Every learner config field has a declared range, checked when the config is built; the CLI reports a
value outside it as a clean error naming the field and the range."""

from __future__ import annotations

import dataclasses
import math
import re
import typing

import pytest

from crax.cli import train as train_cli
from crax.core.params import Range
from crax.learners import BUILTIN_LEARNERS, CPO, CUP, FOCOPS, P3O, PCPO, PPO, PPOPID, PPOLag, PPOSaute, TRPOLag
from tests.learners.conftest import TOY_ENV_ID, tiny

# Fields whose valid values a type states, not a numeric range (checked elsewhere: eval_policy, budgets,
# constraint_value in tests/learners/test_trust_region.py).
NOT_NUMERIC = {"normalize_observations", "desync_episodes", "eval_policy", "budgets", "constraint_value"}


def numeric(config_cls: type, name: str) -> bool:
    """Whether a config field takes numbers (not a flag, a choice of a ``Literal`` or one of NOT_NUMERIC)."""
    hint = typing.get_type_hints(config_cls)[name]
    return name not in NOT_NUMERIC and hint is not bool and typing.get_origin(hint) is not typing.Literal


def ranged_fields():
    for cls in BUILTIN_LEARNERS:
        for f in dataclasses.fields(cls.Config):
            if numeric(cls.Config, f.name):
                yield cls, f


@pytest.mark.parametrize("cls", BUILTIN_LEARNERS, ids=lambda c: c.name)
def test_every_numeric_field_declares_a_range_and_its_default_lies_in_it(cls):
    config = cls.Config()
    for f in dataclasses.fields(cls.Config):
        if not numeric(cls.Config, f.name):
            continue
        valid = f.metadata.get("range")
        assert isinstance(valid, Range), f"{cls.Config.__name__}.{f.name} declares no range"
        value = getattr(config, f.name)
        assert all(valid.valid(v, config) for v in (value if isinstance(value, tuple) else (value,))), f.name


def just_outside(valid: Range, config) -> list:
    """Values right outside each finite end of ``valid`` (and NaN / an integer-only violation)."""
    step = 1 if valid.integer else 0.5
    out = []
    if valid.lo is not None:
        out.append(valid.lo - (0 if valid.lo_open else step))
    if valid.hi is not None:
        out.append(valid.hi + (0 if valid.hi_open else step))
    if valid.at_least is not None:
        out.append(getattr(config, valid.at_least) - step)
    out.append(1.5 if valid.integer else math.nan)
    return out


@pytest.mark.parametrize("cls, field", [(c, f.name) for c, f in ranged_fields()],
                         ids=lambda x: x if isinstance(x, str) else x.name)
def test_a_value_outside_the_range_names_the_field_and_the_range(cls, field):
    config = cls.Config()
    valid = next(f for f in dataclasses.fields(cls.Config) if f.name == field).metadata["range"]
    default = getattr(config, field)
    for bad in just_outside(valid, config):
        value = (bad,) if isinstance(default, tuple) else bad
        with pytest.raises(ValueError, match=rf"^config field '{field}'(: every entry)? must be "
                                             rf"{re.escape(valid.describe(config))}, got "):
            cls.Config(**{field: value})


@pytest.mark.parametrize("cls, changes, message", [
    (PPOLag, dict(lambda_lr=-3.0), r"'lambda_lr' must be > 0, got -3.0"),
    (PPOLag, dict(lambda_lr=-1.0), r"'lambda_lr' must be > 0"),  # kept λ at 0: the constraint silently off
    (FOCOPS, dict(focops_lambda=0.0), r"'focops_lambda' must be > 0, got 0.0"),  # divided the loss by zero
    (PPOPID, dict(d_ema=7.0), r"'d_ema' must be in \[0, 1\), got 7.0"),
    (PPOPID, dict(d_delay=0), r"'d_delay' must be an integer >= 1, got 0"),
    (PPO, dict(target_kl=0.0), r"'target_kl' must be None or > 0, got 0.0"),  # stopped every update after one epoch
    (PPO, dict(max_grad_norm=-1.0), r"'max_grad_norm' must be None or > 0, got -1.0"),  # reversed the gradient
    (PPO, dict(max_grad_norm=0.0), r"'max_grad_norm' must be None or > 0, got 0.0"),  # zeroed every update
    (P3O, dict(kappa_init=0.5, kappa_max=0.1), r"'kappa_max' must be >= kappa_init \(0.5\), got 0.1"),
    (PPOPID, dict(lambda_max=0.0), r"'lambda_max' must be > 0, got 0.0"),
    (PPOSaute, dict(safety_bound=0.0), r"'safety_bound' must be > 0, got 0.0"),  # Saute spends z in units of d
    (PPO, dict(critic_hidden=(16, 0)), r"'critic_hidden': every entry must be an integer >= 1, got \(16, 0\)"),
    (PPO, dict(num_envs=True), r"'num_envs' must be an integer >= 1, got True"),
    # the trust-region fields (issue 20): δ > 0, CG iterations >= 1, damping >= 0, backtracking in (0, 1)
    (CPO, dict(target_kl=0.0), r"'target_kl' must be > 0, got 0.0"),
    (TRPOLag, dict(target_kl=-0.01), r"'target_kl' must be > 0, got -0.01"),
    (CUP, dict(target_kl=0.0), r"'target_kl' must be > 0, got 0.0"),
    (PCPO, dict(cg_iterations=0), r"'cg_iterations' must be an integer >= 1, got 0"),
    (CPO, dict(cg_iterations=2.5), r"'cg_iterations' must be an integer >= 1, got 2.5"),
    (TRPOLag, dict(cg_damping=-0.1), r"'cg_damping' must be >= 0, got -0.1"),
    (CPO, dict(backtrack_coef=1.0), r"'backtrack_coef' must be in \(0, 1\), got 1.0"),
    (PCPO, dict(backtrack_coef=0.0), r"'backtrack_coef' must be in \(0, 1\), got 0.0"),
    (TRPOLag, dict(backtrack_steps=0), r"'backtrack_steps' must be an integer >= 1, got 0"),
    # a Literal field, checked against its own choices (every learner's, the family's)
    (PPO, dict(eval_policy="greedy"), r"'eval_policy' must be one of stochastic, deterministic, got 'greedy'"),
    (PCPO, dict(constraint_value="window"), r"'constraint_value' must be one of per-step, episode, got 'window'"),
])
def test_trial_findings_are_rejected(cls, changes, message):
    with pytest.raises(ValueError, match=message):
        tiny(cls.Config, **changes)


def test_a_negative_seed_and_no_grad_clip_stay_valid():
    assert tiny(PPO.Config, seed=-3, max_grad_norm=None).seed == -3
    assert tiny(PPO.Config, max_grad_norm=0.5).max_grad_norm == 0.5


@pytest.mark.parametrize("flags, message", [
    (["ppo-lag", "--lambda-lr", "-1"], "'lambda_lr' must be > 0"),
    (["ppo-lag", "--max-grad-norm", "-1"], "'max_grad_norm' must be None or > 0"),
    (["focops", "--focops-lambda", "0"], "'focops_lambda' must be > 0"),
    (["cpo", "--target-kl", "0"], "'target_kl' must be > 0"),
    (["pcpo", "--backtrack-coef", "1.5"], "'backtrack_coef' must be in (0, 1)"),
    (["trpo-lag", "--cg-iterations", "0"], "'cg_iterations' must be an integer >= 1"),
    (["cpo", "--cg-damping", "-1"], "'cg_damping' must be >= 0"),
])
def test_cli_reports_an_out_of_range_flag_cleanly(capsys, flags, message):
    with pytest.raises(SystemExit) as exc:
        train_cli.train_main([*flags, "--env", TOY_ENV_ID])
    err = " ".join(capsys.readouterr().err.replace("│", " ").split())  # tyro may wrap it in a box
    assert exc.value.code == 2
    assert "Traceback" not in err and message in err
