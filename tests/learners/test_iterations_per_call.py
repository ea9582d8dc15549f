"""Several iterations per compiled call: the same training as one per call, evaluations and checkpoints
at their iterations, a divergence reported at its own iteration; and max_grad_norm bounding each update."""

from __future__ import annotations

from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from flax import nnx

from crax import runs as crax_runs
from crax.learners import PPO, Multiplier, PPOLag, Trainer
from crax.runs import checkpoint as ckpt
from crax.runs import loop
from crax.runs.metrics import read_metrics
from tests.learners.conftest import tiny
from tests.learners.toy_env import ToyEnv

STEPS_PER_ITER = 64  # TINY: 8 envs × 8 steps
ITERATIONS = 4


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The same PPO-Lag run (4 iterations, evaluations due at 2 and 4, a checkpoint every 2) with 1, 2 and
    3 iterations per call: ``{per_call: (run_dir, TrainResult)}``."""
    out = {}
    for per_call in (1, 2, 3):
        run_dir = tmp_path_factory.mktemp(f"per_call_{per_call}") / "r"
        config = tiny(PPOLag.Config, total_steps=ITERATIONS * STEPS_PER_ITER, num_evals=2, checkpoint_every=2,
                      lambda_lr=0.5, iterations_per_call=per_call)
        out[per_call] = run_dir, crax_runs.train(PPOLag, config, ToyEnv(), run_dir=run_dir, progress=False)
    return out


def training_records(run_dir):
    return [r for r in read_metrics(run_dir) if "loss/policy" in r]


def eval_steps(run_dir):
    return [r["step"] for r in read_metrics(run_dir) if "eval/stochastic/return" in r]


@pytest.mark.parametrize("per_call", [2, 3])
@pytest.mark.slow
def test_more_iterations_per_call_train_the_same_run(runs, per_call):
    (one_dir, one), (many_dir, many) = runs[1], runs[per_call]
    a, b = training_records(one_dir), training_records(many_dir)
    assert [r["step"] for r in b] == [r["step"] for r in a] == [STEPS_PER_ITER * i for i in range(1, ITERATIONS + 1)]
    for ra, rb in zip(a, b, strict=True):  # every iteration's metrics, read from its own slot of the call
        assert set(ra) == set(rb)
        for k in ra:
            if not k.startswith("perf/") and k != "time":
                np.testing.assert_allclose(rb[k], ra[k], rtol=1e-4, atol=1e-6, err_msg=f"step {ra['step']}: {k}")
    params = lambda r: jax.tree.leaves(nnx.state(r.trainer.learner(r.state), nnx.Param))  # noqa: E731
    for x, y in zip(params(one), params(many), strict=True):
        np.testing.assert_allclose(y, x, rtol=1e-4, atol=1e-6)


def test_evaluations_and_checkpoints_land_at_their_iterations_when_calls_divide_the_schedule(runs):
    for per_call in (1, 2):
        run_dir, _ = runs[per_call]
        assert eval_steps(run_dir) == [2 * STEPS_PER_ITER, 4 * STEPS_PER_ITER], per_call
        assert [s for s, _ in ckpt.checkpoints(run_dir)] == [2 * STEPS_PER_ITER, 4 * STEPS_PER_ITER], per_call


def test_a_call_runs_whole_so_what_falls_due_inside_it_happens_at_its_end(runs):
    # 3 per call over 4 iterations: calls [1, 3] and [4]; the evaluation and checkpoint due at 2 come at 3
    run_dir, _ = runs[3]
    assert eval_steps(run_dir) == [3 * STEPS_PER_ITER, 4 * STEPS_PER_ITER]
    assert [s for s, _ in ckpt.checkpoints(run_dir)] == [3 * STEPS_PER_ITER, 4 * STEPS_PER_ITER]


def test_a_call_with_two_evaluations_due_ends_at_the_first_so_every_one_runs(tmp_path):
    # 3 per call, evaluations due at 1, 2, 3 and 4: each call is cut at the first one due in it
    config = tiny(PPOLag.Config, total_steps=ITERATIONS * STEPS_PER_ITER, num_evals=4, checkpoint_every=10,
                  lambda_lr=0.5, iterations_per_call=3)
    crax_runs.train(PPOLag, config, ToyEnv(), run_dir=tmp_path / "r", progress=False)
    assert eval_steps(tmp_path / "r") == [i * STEPS_PER_ITER for i in range(1, ITERATIONS + 1)]
    assert [r["step"] for r in training_records(tmp_path / "r")] == [i * STEPS_PER_ITER for i in range(1, 5)]


@pytest.mark.parametrize(("start", "stage_end", "evals", "length"), [
    (0, 100, {5, 10}, 5),        # two due in a call of 10: ends at the first
    (0, 100, {12}, 10),          # one due after it: a whole call
    (0, 100, {7}, 10),           # one due inside: a whole call, the evaluation at its end
    (95, 100, {96, 97}, 1),      # the stage's end shortens it, then two due: ends at 96
    (0, 100, set(), 10),
])
def test_call_length(start, stage_end, evals, length):
    assert loop.call_length(start, 10, stage_end, evals) == length


class PoisonedPPO(PPO, name="test-poisoned-ppo"):
    """PPO whose ``poison`` multiplier turns NaN in iteration ``bad_iteration`` (a parameter-free divergence)."""

    bad_iteration: ClassVar[int] = 0

    def init_multipliers(self) -> None:
        self.iterations = Multiplier(jnp.zeros((), jnp.float32))
        self.poison = Multiplier(jnp.zeros((), jnp.float32))

    def multiplier_update(self, violation: jax.Array) -> None:
        self.iterations[...] = self.iterations[...] + 1.0
        self.poison[...] = jnp.where(self.iterations[...] == self.bad_iteration, jnp.nan, self.poison[...])


@pytest.mark.parametrize("per_call, bad", [(2, 2), (3, 5)])
@pytest.mark.slow
def test_a_divergence_inside_a_call_is_reported_at_its_iteration(tmp_path, per_call, bad):
    cls = type(f"PoisonedAt{bad}", (PoisonedPPO,), {"bad_iteration": bad})
    config = tiny(PPO.Config, total_steps=6 * STEPS_PER_ITER, num_evals=0, checkpoint_every=1,
                  iterations_per_call=per_call)
    with pytest.raises(crax_runs.TrainingDiverged, match=rf"at iteration {bad} \(env step {bad * STEPS_PER_ITER:,}\)"):
        crax_runs.train(cls, config, ToyEnv(), run_dir=tmp_path / "r", progress=False)
    # the iterations before it are logged, the poisoned one and those after it in its call are not
    assert [r["step"] for r in training_records(tmp_path / "r")] == [STEPS_PER_ITER * i for i in range(1, bad)]
    # checkpoints only at ends of fully good calls
    good_calls = (bad - 1) // per_call * per_call
    assert [s for s, _ in ckpt.checkpoints(tmp_path / "r")][-1:] == ([good_calls * STEPS_PER_ITER] if good_calls else [])


def adam_first_moment_norm(trainer: Trainer, state) -> float:
    """‖μ‖/(1 − β₁) after one Adam step from μ = 0: the global norm of the gradient that step applied."""
    _, opt = nnx.merge(trainer.graphdef, jax.tree.map(lambda x: x[0], state.model))
    adam = [s for s in jax.tree.leaves(opt.opt_state, is_leaf=lambda s: isinstance(s, optax.ScaleByAdamState))
            if isinstance(s, optax.ScaleByAdamState)]
    (adam,) = adam
    return float(optax.tree.norm(jax.tree.map(lambda v: v[...], adam.mu))) / (1.0 - 0.9)


@pytest.mark.slow
def test_max_grad_norm_bounds_the_applied_gradient():
    # one minibatch and one epoch: an iteration is exactly one Adam step
    one_step = dict(batch_size=8, num_minibatches=1, num_epochs=1)
    norms = {}
    for clip in (None, 1e-3):
        trainer = Trainer(PPO, tiny(PPO.Config, max_grad_norm=clip, **one_step), ToyEnv())
        state, _ = trainer.run(trainer.init(jax.random.key(0)), 1)
        norms[clip] = adam_first_moment_norm(trainer, state)
    assert norms[None] > 1e-2  # unclipped, the gradient is far larger than the bound
    assert norms[1e-3] == pytest.approx(1e-3, rel=1e-3)  # clipped to the bound, direction kept
