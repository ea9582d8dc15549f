"""A run started from another (``init_from``) for every learner family: an off-policy run copies the
parts it names from another off-policy run (or the actor of a PPO-family one), and a transfer that
cannot work is refused before anything trains and before a run folder exists."""

from __future__ import annotations

import dataclasses
import json

import jax
import numpy as np
import pytest

from crax import runs
from crax.cli.studies import transfer_main
from crax.learners import PPO, TD3, OffPolicyTrainer, PPOLag, SACLag, Trainer
from crax.learners.shared.trainer import BaseTrainer
from crax.runs import transfer as run_transfer
from tests.learners.conftest import TOY_ENV_ID, tiny
from tests.learners.test_off_policy import small
from tests.learners.toy_env import ToyEnv

OFF_POLICY_PARTS = ("actor", "normalizer", "critics/reward_q1", "critics/reward_q2", "temperature")
"""A SAC run's policy, reward critics, temperature and normalizer; its cost critic, targets,
multiplier, optimizers and replay buffer start fresh."""


def leaves(tree):
    return [np.asarray(x) for x in jax.tree.leaves(tree)]


def assert_equal(a, b):
    for x, y in zip(leaves(a), leaves(b), strict=True):
        np.testing.assert_array_equal(x, y)


def piece(model, part):
    node = model[0]
    for key in part.split("/"):
        node = node[key]
    return node


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """Finished tiny runs on the toy env: PPO, SAC-Lag and TD3 (two iterations each off-policy,
    the second with gradient steps)."""
    root = tmp_path_factory.mktemp("sources")
    configs = {"ppo": (PPO, tiny(PPO.Config, total_steps=64, num_evals=0)),
               "sac-lag": (SACLag, small(SACLag, total_steps=64, num_evals=0)),
               "td3": (TD3, small(TD3, total_steps=64, num_evals=0))}
    return {name: runs.train(cls, config, TOY_ENV_ID, run_dir=root / name, progress=False)
            for name, (cls, config) in configs.items()}


def first_states(monkeypatch, trainer_cls):
    """Records the state each ``run`` call of ``trainer_cls`` starts from."""
    seen, original = [], trainer_cls.run

    def run(self, state, n):
        seen.append(state)
        return original(self, state, n)

    monkeypatch.setattr(trainer_cls, "run", run)
    return seen


@pytest.mark.slow
def test_an_off_policy_run_copies_the_parts_it_names_from_another(sources, tmp_path, monkeypatch):
    source = sources["sac-lag"]
    seen = first_states(monkeypatch, OffPolicyTrainer)
    config = small(SACLag, total_steps=32, num_evals=0, lambda_init=0.25)
    result = runs.train(SACLag, config, TOY_ENV_ID, run_dir=tmp_path / "t", progress=False,
                        init_from=source.run_dir, init_parts=OFF_POLICY_PARTS)
    start = seen[0]
    for part in OFF_POLICY_PARTS:  # the source's final values
        assert_equal(piece(start.model, part), piece(source.state.model, part))
    # the rest is fresh: the cost critic (the source's trained one differs), the multiplier, the buffer
    assert not all(np.array_equal(a, b) for a, b in zip(leaves(piece(start.model, "critics/cost_q")),
                                                          leaves(piece(source.state.model, "critics/cost_q")),
                                                          strict=True))
    assert float(start.model[0]["rule"]["lagrange"][...][0]) == 0.25
    assert int(start.replay.size[0]) == 0
    record = json.loads((result.run_dir / "config.json").read_text())["init_from"]
    assert record == {"run_dir": str(source.run_dir), "parts": list(OFF_POLICY_PARTS)}
    # a resume does not copy them again: it continues from its own checkpoint
    runs.train(None, small(SACLag, total_steps=64, num_evals=0, lambda_init=0.25), run_dir=result.run_dir,
               resume=True, progress=False)
    assert_equal(seen[-1].model, result.state.model)


@pytest.mark.slow
def test_an_off_policy_run_takes_the_actor_and_normalizer_of_a_ppo_run(sources, tmp_path, monkeypatch):
    source = sources["ppo"]
    seen = first_states(monkeypatch, OffPolicyTrainer)
    runs.train(SACLag, small(SACLag, total_steps=32, num_evals=0), TOY_ENV_ID, run_dir=tmp_path / "t",
               progress=False, init_from=source.run_dir, init_parts=("actor", "normalizer"))
    for part in ("actor", "normalizer"):  # one tanh-Gaussian actor class in both families
        assert_equal(seen[0].model[0][part], source.state.model[0][part])


REFUSED = [
    ("td3", SACLag, run_transfer.INIT_PARTS, "nor sac-lag (this run) has a part 'reward_critic'",
     "valid parts (both learners have them): actor, critics, normalizer, target_critics, or a piece of one by its "
     "path (e.g. 'critics/cost_q', 'critics/reward_q1', 'critics/reward_q2')"),
    ("sac-lag", PPOLag, run_transfer.INIT_PARTS, "sac-lag (", "has no part 'reward_critic'; valid parts "
     "(both learners have them): actor, normalizer, rule"),
    ("ppo", TD3, ("actor", "normalizer"), "'actor' from", "its shapes differ (net/layers/1/bias: (4,) there, (2,) "
     "here; net/layers/1/kernel: (16, 4) there, (16, 2) here)"),
    ("sac-lag", SACLag, ("critics/reward_q3",), "(this run) has a part 'critics/reward_q3'", "'critics/reward_q2'"),
    ("ppo", PPOLag, (), "init_parts names no part", "actor, cost_critic, normalizer, reward_critic"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("source", "cls", "parts", "says", "names"), REFUSED,
                         ids=["td3-sac-lag", "sac-lag-ppo-lag", "ppo-td3", "no-such-piece", "no-part"])
def test_a_transfer_that_cannot_work_is_refused_before_a_run_folder_exists(sources, tmp_path, monkeypatch, source,
                                                                           cls, parts, says, names):
    monkeypatch.setattr(BaseTrainer, "compile", lambda *a: pytest.fail("a refused transfer compiled"))
    config = small(cls, total_steps=32) if cls in (SACLag, TD3) else tiny(cls.Config, total_steps=64)
    with pytest.raises(ValueError) as err:
        runs.train(cls, config, TOY_ENV_ID, runs_root=tmp_path / "runs", progress=False,
                   init_from=sources[source].run_dir, init_parts=parts)
    assert says in str(err.value) and names in str(err.value)
    assert not (tmp_path / "runs").exists()
    with pytest.raises(ValueError, match="seed"):
        runs.train(cls, dataclasses.replace(config, num_seeds=2), TOY_ENV_ID, run_dir=tmp_path / "s",
                   progress=False, init_from=sources[source].run_dir)
    assert not (tmp_path / "s").exists()


@pytest.mark.slow
def test_crax_transfer_from_an_off_policy_run_refuses_before_the_run_folder(sources, tmp_path, capsys):
    flags = ["--num-envs", "8", "--unroll-length", "4", "--actor-hidden", "16", "--critic-hidden", "16",
             "--eval-envs", "4", "--num-evals", "0", "--total-steps", "64", "--no-progress"]
    with pytest.raises(SystemExit) as exc:
        transfer_main(["sac-lag", "--env", TOY_ENV_ID, "--from", str(sources["td3"].run_dir), "--run-dir",
                       str(tmp_path / "t"), "--batch-size", "16", "--learning-starts", "64", "--buffer-size", "256",
                       *flags])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "has a part 'reward_critic'; valid parts" in err and "'critics/reward_q1'" in err
    assert not (tmp_path / "t" / "sac-lag").exists()


def test_check_parts_reads_shapes_only():
    """What a study can ask before it trains the source run: no run folder, no training."""
    ppo = Trainer(PPO, tiny(PPO.Config), ToyEnv())
    sac = OffPolicyTrainer(SACLag, small(SACLag), ToyEnv())
    run_transfer.check_parts(ppo, sac, ("actor", "normalizer"))
    run_transfer.check_parts(sac, sac, OFF_POLICY_PARTS)
    with pytest.raises(ValueError, match="sac-lag \\(this run\\) has no part 'reward_critic'"):
        run_transfer.check_parts(ppo, sac, run_transfer.INIT_PARTS)
    assert run_transfer.part_names(sac) == ["actor", "critics", "normalizer", "rule", "target_critics", "temperature"]


def test_crax_transfer_of_an_off_policy_learner_refuses_before_ppo_trains(tmp_path, capsys):
    """Without --from the study trains PPO first: a learner that cannot take PPO's parts is refused before."""
    with pytest.raises(SystemExit) as exc:
        transfer_main(["sac-lag", "--env", TOY_ENV_ID, "--run-dir", str(tmp_path / "t"), "--num-envs", "8",
                       "--batch-size", "16", "--learning-starts", "64", "--buffer-size", "256", "--total-steps", "128",
                       "--no-progress"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "sac-lag (this run) has no part 'reward_critic'" in err
    assert not (tmp_path / "t").exists()
