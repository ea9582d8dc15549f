"""Evaluating a trained run folder: :func:`evaluate`, :func:`load_policy` and :func:`eval_video`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax

from crax.core.env import Env
from crax.devices import xla_options
from crax.learners.shared.config import EVAL_POLICIES
from crax.learners.shared.trainer import BaseTrainer
from crax.runs import checkpoint as ckpt
from crax.runs.envs import get_learner, make_env, trainer_for
from crax.runs.guards import check_seed
from crax.runs.results import eval_summary, verdict


def evaluate(run_dir: str | Path, episodes: int = 128, *, seed: int = 0, env: Env | None = None,
             policy: str | None = None, physics: str | None = None) -> dict[str, Any]:
    """Evaluates the latest checkpoint of a run: ``episodes`` episodes per trained seed and policy.

    Both the stochastic and the deterministic policy run; ``policy`` (default: the run's
    ``eval_policy``, stochastic unless changed) is the one judged. Returns ``{"learner", "env",
    "episodes", "env_steps", "safety_bound", "policy", "return", "cost", "length", "return_std",
    "cost_std", "safe", "stochastic": {...}, "deterministic": {...}, "per_seed": [...]}``: means
    and standard deviations over all seeds' episodes; ``safe`` is ``cost < safety_bound``. Each
    policy's record adds the safety a mean cost hides (:func:`crax.runs.results.eval_summary`):
    ``over_bound``, ``cost_cvar`` and ``costly_step_fraction``.
    ``physics`` (``"jax"`` or ``"warp"``, :mod:`crax.core.physics`) evaluates on another MJX
    implementation than the run trained on (default: the run's).
    """
    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    check_seed(seed, "seed")
    record, cls, config, trainer, restored, policy = _restore(run_dir, episodes, env, policy, physics)
    model = jax.tree.map(jax.numpy.asarray, restored["state"].model)
    ev = jax.device_get(trainer.evaluate_model(model, jax.random.key(seed)))
    per_seed = [verdict(eval_summary(ev, s), policy, config.safety_bound) for s in range(config.num_seeds)]
    pooled = eval_summary(ev, None)
    return {"learner": cls.name, "env": record["env"], "episodes": int(episodes), "env_steps": restored["env_steps"],
            "safety_bound": config.safety_bound, **verdict(pooled, policy, config.safety_bound),
            "per_seed": per_seed}


def _restore(run_dir: str | Path, episodes: int, env: Env | None, policy: str | None, physics: str | None = None):
    """A run's record, learner class, config (``eval_envs=episodes``), trainer, latest checkpoint and
    judged policy (``policy``, or the run's ``eval_policy``; ValueError if not in EVAL_POLICIES).

    The env is the run's, on ``physics`` where given. Only the learners and optimizers are restored
    (the checkpoint's env states, which evaluation does not use, differ between physics)."""
    record = ckpt.read_config(run_dir)
    cls = get_learner(record["learner"])
    config = ckpt.config_from_dict(cls.Config, record["config"])
    policy = config.eval_policy if policy is None else policy
    if policy not in EVAL_POLICIES:
        raise ValueError(f"policy must be one of {', '.join(EVAL_POLICIES)}, got {policy!r}")
    config = dataclasses.replace(config, eval_envs=int(episodes))
    env_kwargs = dict(record["env_kwargs"] or {})
    if physics is not None:
        if env is not None or ":" in record["env"]:
            raise ValueError("physics applies to a run's registered env id (crax.make), not to an env object or class")
        env_kwargs["physics"] = physics
    env_obj = env if env is not None else make_env(record["env"], env_kwargs)
    trainer = trainer_for(cls, config, env_obj)
    restored = ckpt.load_checkpoint(run_dir, trainer.abstract_state().replace(env=None))
    return record, cls, config, trainer, restored, policy


def eval_video(run_dir: str | Path, path: str | Path, *, seed: int = 0, policy: str | None = None,
               camera: str = "track", width: int = 480, height: int = 480, physics: str | None = None) -> Path:
    """Renders one evaluation episode of the latest checkpoint's seed-0 learner to a video
    (:mod:`crax.render`): ``policy`` (default: the run's judged ``eval_policy``), on the env the
    learner sees (its ``learner_env``: ``wrap_env`` and any frame stacking, on ``physics`` where given), episode drawn from ``seed``. Returns the path."""
    from crax import render, video

    path = video.video_path(path)
    _, _, _, trainer, restored, policy = _restore(run_dir, 1, None, policy, physics)
    act = _policy_fn(trainer, restored["state"].model, 0, policy == "deterministic")
    env = trainer.eval_env.env  # the single env evaluation steps: EpisodeStats and the learner's learner_env
    states = render.first_episode(render.rollout(env, act, jax.random.key(seed), env.episode_length))
    return render.save_video(env, states, path, camera=camera, width=width, height=height)


def _policy_fn(trainer: BaseTrainer, model, seed: int, deterministic: bool) -> Callable:
    """``act(obs, key=None) -> action`` of trained seed ``seed`` of a (seed-batched) model state: the
    env's action (the learner's ``env_action``: ``tanh``, or a clip) of the Gaussian's mean, or of a
    sample from it drawn with ``key``."""
    from flax import nnx

    learner_state = jax.tree.map(lambda x: jax.numpy.asarray(x[seed]), model)

    def act(obs: jax.Array, key: jax.Array | None = None) -> jax.Array:
        learner = nnx.merge(trainer.graphdef, learner_state)[0]
        loc, scale = learner.policy(obs)
        if deterministic:
            return learner.env_action(loc)
        if key is None:
            raise ValueError("a sampled policy (deterministic=False) needs a key: act(obs, key)")
        return learner.env_action(loc + scale * jax.random.normal(key, loc.shape))

    return act


def load_policy(run_dir: str | Path, *, seed: int = 0, deterministic: bool = True,
                env: Env | None = None) -> Callable[..., jax.Array]:
    """A trained policy from the latest checkpoint of a run folder, as a jitted ``act(obs, key=None)``.

    ``act`` maps an observation (or a batch, leading axes free; a flat array, or a dict of the state
    vector and images, :mod:`crax.core.observation`) of the env the learner sees to actions
    in ``[-1, 1]``: the mean action when ``deterministic`` (``key`` unused), else a sampled one, which
    needs a ``key``. The observation normalizer is inside. The learner sees the run's env through its
    ``learner_env`` (PPO-Saute appends the remaining budget to the observation; ``frame_stack`` stacks
    the last images):
    the trainer's ``eval_env.env`` is that env, or ``runs.evaluate`` runs it for you.

    Args:
      run_dir: a run folder written by :func:`train`.
      seed: which trained seed's learner, in ``[0, num_seeds)``.
      deterministic: the mean action (True) or a sample (False).
      env: the env instance, for runs trained on an :class:`Env` object rather than an env id.

    Example::

        act = runs.load_policy("runs/PointGoal1-ppo-lag-20250101-120000")
        action = act(state.obs)
    """
    _, _, config, trainer, restored, _ = _restore(run_dir, 1, env, None)
    if not 0 <= seed < config.num_seeds:
        raise ValueError(f"seed must be in [0, {config.num_seeds}): the run trained {config.num_seeds} seed(s); "
                         f"got {seed}")
    return xla_options.jit(_policy_fn(trainer, restored["state"].model, seed, deterministic))
