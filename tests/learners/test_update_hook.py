"""The policy-update hook: the PPO family's update goes through it unchanged in numbers (one PPO-Lag
iteration on the toy env is pinned to values recorded before the hook existed)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jax
import numpy as np

from crax.learners import PPOLag, Trainer
from tests.learners.conftest import tiny
from tests.learners.toy_env import ToyEnv

PINNED = Path(__file__).parent / "data" / "ppo_lag_iteration.json"


def one_ppo_lag_iteration() -> dict[str, dict[str, list[float]]]:
    """Metrics and, per model leaf (learner and optimizer), its sum and first entries after one iteration."""
    trainer = Trainer(PPOLag, tiny(PPOLag.Config, lambda_lr=0.5, safety_bound=2.0), ToyEnv())
    state, metrics = trainer.run(trainer.init(jax.random.key(0)), 1)
    leaves = jax.tree_util.tree_flatten_with_path(state.model)[0]
    model = {}
    for path, leaf in leaves:
        x = np.asarray(leaf, np.float64).reshape(-1)
        model[jax.tree_util.keystr(path)] = [float(x.sum()), *map(float, x[:3])]
    return {"metrics": {k: [float(v[0, 0])] for k, v in metrics.items()}, "model": model}


def test_one_ppo_lag_iteration_matches_the_numbers_recorded_before_the_hook():
    pinned = json.loads(PINNED.read_text())
    got = one_ppo_lag_iteration()
    assert set(got["metrics"]) == set(pinned["metrics"])
    assert set(got["model"]) == set(pinned["model"])
    for part in ("metrics", "model"):
        for key, want in pinned[part].items():
            # recorded on a 2-core x86 CPU, where the numbers agree bit for bit; the tolerance only
            # absorbs float reassociation on other hardware
            np.testing.assert_allclose(got[part][key], want, rtol=2e-5, atol=1e-7, err_msg=f"{part} {key}")


if __name__ == "__main__" and sys.argv[1:] == ["--record"]:
    PINNED.write_text(json.dumps(one_ppo_lag_iteration(), indent=1, sort_keys=True) + "\n")
