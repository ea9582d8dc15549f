"""Learners on dict observations (crax.core.observation): the convolutional encoders, the one encoder the
actor and the critics share (trained by the critics' losses alone), the normalizer of the state vector
alone, frame stacking, and PPO-Lag, TRPO-Lag and SAC-Lag training on the toy env seen through a 16×16
camera (tests/learners/pixel_toy_env.py); a flat observation's learners keep their parameter trees."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from crax import runs
from crax.core import observation
from crax.core.env import Env
from crax.learners import OffPolicyTrainer, PPOLag, SACLag, Trainer, TRPOLag
from crax.learners.off_policy.trainer import OffPolicyState
from crax.learners.on_policy.trainer import next_values
from crax.learners.shared.budget_envs import SauteBudget
from crax.learners.shared.encoders import Encoder, ImageEncoder
from crax.learners.shared.frame_stack import FrameStack
from crax.learners.shared.gradients import chunked_rows
from crax.runs import checkpoint as ckpt
from tests.learners.conftest import tiny
from tests.learners.pixel_toy_env import PixelToyEnv

PIXEL_ENV_ID = "tests.learners.pixel_toy_env:PixelToyEnv"
SPEC = PixelToyEnv().observation_spec
PIXELS: dict[str, Any] = dict(encoder_features=16)
"""Small torsos' features, to compile and run fast."""
OFF_POLICY: dict[str, Any] = dict(num_envs=8, unroll_length=4, batch_size=16, updates_per_iteration=2, buffer_size=256,
                  learning_starts=32, actor_hidden=(16,), critic_hidden=(16,), eval_envs=4, num_evals=1,
                  checkpoint_every=4, iterations_per_call=1, **PIXELS)
"""One iteration: 8 envs × 4 steps = 32 transitions; updates from the second iteration."""


def params(module: nnx.Module) -> dict[str, np.ndarray]:
    return {"/".join(map(str, p)): np.asarray(v) for p, v in nnx.to_flat_state(nnx.state(module, nnx.Param))}


def torso(module: nnx.Module) -> dict[str, np.ndarray]:
    """The parameters of the encoders a module holds, by path."""
    return {k: v for k, v in params(module).items() if "images/" in k}  # an Encoder's per-image torsos


def moved(before: dict[str, np.ndarray], after: dict[str, np.ndarray]) -> bool:
    """Whether any parameter of ``after`` differs from ``before``'s."""
    assert after and before.keys() == after.keys()
    return any(not np.allclose(before[k], after[k]) for k in after)


def host(tree):
    """``tree``'s leaves as NumPy arrays (PRNG keys as their key data)."""
    def leaf(x):
        return np.asarray(jax.random.key_data(x) if jnp.issubdtype(x.dtype, jax.dtypes.prng_key) else x)

    return jax.tree.map(leaf, tree)


def observations(env: Env, n: int, key: int = 0) -> Any:
    """A batch of ``n`` reset observations."""
    return jax.vmap(env.reset)(jax.random.split(jax.random.key(key), n)).obs


def image_influence(learner: Any, env: Env) -> float:
    """How far the actor's mean moves when only the image changes."""
    obs = observations(env, 8)
    shifted = {**obs, "camera": jnp.roll(obs["camera"], 5, axis=-2)}
    return float(jnp.max(jnp.abs(learner.policy(obs)[0] - learner.policy(shifted)[0])))


# ---- the encoders ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["nature", "impala"])
@pytest.mark.parametrize("size", [64, 256])
def test_torso_features_at_64_and_256_pixels(kind, size):
    encoder = ImageEncoder((size, size, 3), kind, 256, rngs=nnx.Rngs(0))
    image = jax.random.randint(jax.random.key(0), (2, 3, size, size, 3), 0, 256).astype(jnp.uint8)
    features = encoder(image)
    assert features.shape == (2, 3, 256) and features.dtype == jnp.float32
    assert bool(jnp.all(jnp.isfinite(features)))
    # the pooled map before the Linear is at most 8×8 cells, whatever the image size
    assert encoder.linear.in_features <= 8 * 8 * encoder.torso.channels


def test_encoder_concatenates_each_image_and_the_state():
    spec = {"state": jax.ShapeDtypeStruct((5,), jnp.float32), "front": jax.ShapeDtypeStruct((16, 16, 3), jnp.uint8),
            "back": jax.ShapeDtypeStruct((32, 24, 1), jnp.uint8)}
    encoder = Encoder(spec, "nature", 7, rngs=nnx.Rngs(0))
    obs = observation.zeros(spec, (4,))
    obs["state"] = jnp.arange(20.0).reshape(4, 5)
    out = encoder(obs)
    assert encoder.size == 2 * 7 + 5 and out.shape == (4, 19)
    np.testing.assert_array_equal(out[:, -5:], obs["state"])  # the state vector passes through, last


def test_unknown_encoder_is_a_clean_error():
    with pytest.raises(ValueError, match="unknown encoder 'vit'"):
        ImageEncoder((16, 16, 1), "vit", 8, rngs=nnx.Rngs(0))  # pyright: ignore[reportArgumentType]


# ---- flat observations: nothing changes ------------------------------------------------------------

PPO_LAG_TREE = [
    "actor/net/layers/0/bias:8", "actor/net/layers/0/kernel:3x8", "actor/net/layers/1/bias:4",
    "actor/net/layers/1/kernel:8x4", "cost_critic/layers/0/bias:8", "cost_critic/layers/0/kernel:3x8",
    "cost_critic/layers/1/bias:1", "cost_critic/layers/1/kernel:8x1", "normalizer/count:", "normalizer/mean:3",
    "normalizer/var:3", "reward_critic/layers/0/bias:8", "reward_critic/layers/0/kernel:3x8",
    "reward_critic/layers/1/bias:1", "reward_critic/layers/1/kernel:8x1", "rule/lagrange:",
]
"""PPO-Lag's parameter tree on a flat observation of 3 (hidden layers (8,)), as crax stored it before
structured observations."""
SAC_LAG_CRITIC = ["cost_q/layers/0/bias:8", "cost_q/layers/0/kernel:5x8", "cost_q/layers/1/bias:1",
                  "cost_q/layers/1/kernel:8x1", "reward_q1/layers/0/bias:8", "reward_q1/layers/0/kernel:5x8",
                  "reward_q1/layers/1/bias:1", "reward_q1/layers/1/kernel:8x1", "reward_q2/layers/0/bias:8",
                  "reward_q2/layers/0/kernel:5x8", "reward_q2/layers/1/bias:1", "reward_q2/layers/1/kernel:8x1"]


def tree(learner) -> list[str]:
    return ["/".join(map(str, p)) + ":" + "x".join(map(str, v.shape)) for p, v in nnx.to_flat_state(nnx.state(learner))]


@pytest.mark.parametrize("flat", [3, jax.ShapeDtypeStruct((3,), jnp.float32)], ids=["size", "spec"])
def test_a_flat_observation_keeps_the_parameter_tree_and_its_values(flat):
    ppo = PPOLag(PPOLag.Config(actor_hidden=(8,), critic_hidden=(8,)), flat, 2, 16, rngs=nnx.Rngs(0))
    assert tree(ppo) == PPO_LAG_TREE
    sac = SACLag(SACLag.Config(actor_hidden=(8,), critic_hidden=(8,)), flat, 2, 16, rngs=nnx.Rngs(0))
    critics = [k for k in tree(sac) if k.startswith(("critics/", "target_critics/"))]
    assert critics == [f"{part}/{k}" for part in ("critics", "target_critics") for k in SAC_LAG_CRITIC]
    by_size = PPOLag(PPOLag.Config(actor_hidden=(8,), critic_hidden=(8,)), 3, 2, 16, rngs=nnx.Rngs(0))
    jax.tree.map(np.testing.assert_array_equal, nnx.state(ppo), nnx.state(by_size))


def test_a_pixel_learner_shares_one_encoder_between_actor_and_critics():
    ppo = PPOLag(tiny(PPOLag.Config, **PIXELS), SPEC, 2, 16, rngs=nnx.Rngs(0))
    assert torso(ppo.encoder)
    for part in ("actor", "reward_critic", "cost_critic"):
        assert not torso(getattr(ppo, part)), part  # plain MLPs on the encoder's features
    assert ppo.actor.net.layers[0].in_features == ppo.encoder.size == 16 + 1  # one image's features + the state
    sac = SACLag(SACLag.Config(**OFF_POLICY), SPEC, 2, 16, rngs=nnx.Rngs(0))
    assert torso(sac.critics.encoder) and torso(sac.target_critics.encoder)  # the online encoder and its target
    assert sac.feature_encoder is sac.critics.encoder and not torso(sac.actor)
    for q in ("reward_q1", "reward_q2", "cost_q"):
        assert not torso(getattr(sac.critics, q)), q


def test_only_the_critics_loss_trains_the_shared_encoder():
    """PPO's joint loss reaches the encoder through the value loss alone: its gradient with respect to the
    encoder is the value loss's, and the actor's surrogate gives the encoder none (the actor reads the
    features under stop_gradient) though it depends on the image."""
    learner = PPOLag(tiny(PPOLag.Config, **PIXELS), SPEC, 2, 16, rngs=nnx.Rngs(0))
    env = PixelToyEnv()
    obs = observations(env, 8)
    loc, scale = learner.policy(obs)
    u = loc + scale * jax.random.normal(jax.random.key(1), loc.shape)
    mb = {"obs": obs, "u": u, "logp": jnp.full(8, -1.0), "loc": loc, "scale": scale,
          "adv_r": jnp.linspace(-1.0, 1.0, 8), "adv_c": jnp.linspace(1.0, -1.0, 8),
          "target_r": jnp.linspace(0.0, 2.0, 8), "target_c": jnp.linspace(0.5, 0.0, 8)}

    def encoder_grad(loss):
        grads = nnx.grad(lambda m: loss(m)[0])(learner)
        return {k: np.asarray(v) for k, v in nnx.to_flat_state(grads.encoder)}

    joint = encoder_grad(lambda m: m.ppo_loss(mb, jnp.zeros(())))
    value = encoder_grad(lambda m: m.value_loss(mb))
    assert any(np.abs(g).max() > 0 for g in value.values())
    for k in value:
        np.testing.assert_allclose(joint[k], value[k], rtol=1e-5, atol=1e-8)
    policy = encoder_grad(lambda m: (jnp.sum(m.policy(obs)[0] ** 2), None))
    assert all(np.abs(g).max() == 0 for g in policy.values())
    assert image_influence(learner, env) > 0


# ---- the normalizer sees the state vector alone --------------------------------------------------------


def test_normalizer_statistics_are_of_the_state_vector_alone():
    learner = PPOLag(tiny(PPOLag.Config, **PIXELS), SPEC, 2, 16, rngs=nnx.Rngs(0))
    assert learner.normalizer.mean[...].shape == (1,)
    obs = observations(PixelToyEnv(), 6)
    obs = {**obs, "state": jnp.arange(6.0).reshape(6, 1)}
    learner.update_normalizer(obs)
    np.testing.assert_allclose(learner.normalizer.mean[...], [2.5])
    np.testing.assert_allclose(learner.normalizer.var[...], [np.var(np.arange(6.0))], rtol=1e-6)
    x = learner.normalize(obs)
    assert x["camera"].dtype == jnp.uint8  # images pass unchanged: their encoders scale them
    np.testing.assert_array_equal(x["camera"], obs["camera"])
    np.testing.assert_allclose(x["state"][:, 0], (np.arange(6.0) - 2.5) / np.sqrt(np.var(np.arange(6.0)) + 1e-6),
                               rtol=1e-5)


# ---- rows of a dict observation -------------------------------------------------------------------------


def test_chunked_rows_and_next_values_take_a_dict_observation():
    env = PixelToyEnv()
    obs = jax.tree.map(lambda x: x.reshape(3, 4, *x.shape[1:]), observations(env, 12))

    def fn(o):
        return o["state"][..., 0] + jnp.mean(o["camera"].astype(jnp.float32), axis=(-3, -2, -1))

    np.testing.assert_allclose(chunked_rows(fn, obs, 4), fn(obs), rtol=1e-6)
    final = jax.tree.map(lambda x: jnp.roll(x, -1, axis=0), obs)  # each step's next obs: the next step's
    final["camera"] = final["camera"].at[1, 2].set(0)  # but step 1 of env 2 saw another image
    done = truncation = jnp.zeros((3, 4))
    got = next_values(fn, obs, fn(obs), final, done, truncation)
    np.testing.assert_allclose(got, fn(final), rtol=1e-6)


# ---- frame stacking, Saute's budget on a dict ---------------------------------------------------------------


def test_frame_stack_fills_on_reset_and_pushes_each_frame():
    env = FrameStack(PixelToyEnv(), 3)
    assert env.observation_spec["camera"].shape == (16, 16, 3)
    state = env.reset(jax.random.key(0))
    first = state.obs["camera"][..., 0]
    np.testing.assert_array_equal(state.obs["camera"], np.stack([first] * 3, axis=-1))
    frames = [first]
    for _ in range(2):
        state = env.step(state, jnp.asarray([1.0, 0.0]))
        frames.append(PixelToyEnv().render(state.data["pos"])[..., 0])  # pyright: ignore[reportIndexIssue]
    np.testing.assert_array_equal(state.obs["camera"], np.stack(frames, axis=-1))  # oldest first
    assert state.obs["state"].shape == (1,)


def test_frame_stack_needs_an_image():
    from tests.learners.toy_env import ToyEnv

    with pytest.raises(ValueError, match="has none"):
        FrameStack(ToyEnv(), 2)


def test_saute_appends_its_budget_to_the_state_vector_of_a_dict():
    env = SauteBudget(PixelToyEnv(), safety_bound=4.0)
    state = env.step(env.reset(jax.random.key(0)), jnp.zeros(2))
    assert state.obs["state"].shape == (2,) and state.obs["camera"].shape == (16, 16, 1)
    np.testing.assert_allclose(state.obs["state"][-1], jnp.clip(state.info["saute_budget"], 0.0, 3.0))


# ---- training ------------------------------------------------------------------------------------------


def test_ppo_lag_trains_on_pixels_and_its_run_checkpoints_and_acts(tmp_path):
    config = tiny(PPOLag.Config, total_steps=3 * 64, num_evals=1, frame_stack=2, **PIXELS)
    result = runs.train(PPOLag, config, PIXEL_ENV_ID, run_dir=tmp_path / "run", progress=False)
    assert all(r.get("train/nonfinite", 0.0) == 0.0 for r in result.history)
    trainer, state = result.trainer, result.state
    assert trainer.observation_spec["camera"].shape == (16, 16, 2)  # two frames stacked
    learner: Any = trainer.learner(state)
    fresh: Any = trainer.learner(trainer.init(jax.random.split(jax.random.key(config.seed))[0]))  # the run's init key
    assert moved(torso(fresh.encoder), torso(learner.encoder))
    for part in ("actor", "reward_critic", "cost_critic"):
        assert moved(params(getattr(fresh, part)), params(getattr(learner, part))), part
    assert image_influence(learner, FrameStack(PixelToyEnv(), 2)) > 0

    restored = ckpt.load_checkpoint(result.run_dir, trainer.abstract_state())["state"]
    assert restored.env.obs["camera"].dtype == jnp.uint8
    jax.tree.map(np.testing.assert_array_equal, host(restored), host(state))

    act = runs.load_policy(result.run_dir)
    obs = observations(FrameStack(PixelToyEnv(), 2), 5)
    actions = act(obs)
    assert actions.shape == (5, 2) and bool(jnp.all(jnp.abs(actions) <= 1.0))
    np.testing.assert_allclose(act(jax.tree.map(lambda x: x[0], obs)), actions[0], rtol=1e-5, atol=1e-6)


def test_trpo_lag_steps_the_actor_and_the_critics_train_the_encoder_on_pixels():
    trainer = Trainer(TRPOLag, tiny(TRPOLag.Config, **PIXELS), PixelToyEnv())
    state = trainer.init(jax.random.key(0))
    before: Any = trainer.learner(state)
    state, metrics = trainer.run(state, 3)
    assert float(jnp.max(metrics["train/nonfinite"])) == 0.0
    assert float(jnp.max(metrics["trust_region/accepted_step"])) > 0  # some step was taken
    after: Any = trainer.learner(state)
    assert moved(params(before.actor), params(after.actor))  # the trust-region step's θ: the actor's MLP
    assert moved(torso(before.encoder), torso(after.encoder))  # the critics' regression
    for part in ("reward_critic", "cost_critic"):
        assert moved(params(getattr(before, part)), params(getattr(after, part))), part
    assert image_influence(after, PixelToyEnv()) > 0


def test_sac_lag_trains_on_pixels_and_its_replay_stores_uint8():
    trainer = OffPolicyTrainer(SACLag, SACLag.Config(**OFF_POLICY), PixelToyEnv())
    state = trainer.init(jax.random.key(0))
    assert isinstance(state, OffPolicyState)
    replay = state.replay.data
    for field in ("obs", "next_obs"):
        assert replay[field]["camera"].dtype == jnp.uint8 and replay[field]["camera"].shape == (1, 256, 16, 16, 1)
        assert replay[field]["state"].dtype == jnp.float32
    before: Any = trainer.learner(state)
    state, metrics = trainer.run(state, 3)
    assert isinstance(state, OffPolicyState)
    assert float(jnp.max(metrics["train/nonfinite"])) == 0.0
    stored = state.replay.data["obs"]["camera"][0, : int(state.replay.size[0])]
    assert stored.dtype == jnp.uint8 and int(jnp.max(stored)) > 200  # the blob, as the env drew it
    after: Any = trainer.learner(state)
    for name, b, a in [("actor", before.actor, after.actor), ("reward_q1", before.critics.reward_q1, after.critics.reward_q1),
                       ("cost_q", before.critics.cost_q, after.critics.cost_q),
                       ("target reward_q1", before.target_critics.reward_q1, after.target_critics.reward_q1)]:
        assert moved(params(b), params(a)), name
    assert moved(torso(before.critics.encoder), torso(after.critics.encoder))  # the critics' optimizer
    assert moved(torso(before.target_critics.encoder), torso(after.target_critics.encoder))  # the Polyak average
    assert image_influence(after, PixelToyEnv()) > 0
