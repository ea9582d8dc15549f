"""The on-policy baselines crax names after OmniSafe's algorithms against OmniSafe 0.5's own numbers
(``tests/learners/data/omnisafe/baselines.json``, recorded by ``benchmarks/omnisafe/baselines.py``):
whole actor updates (TRPO, TRPO-PID, RCPO's natural gradient), policy losses and their gradients
(CPPO-PID, PDO, IPO), the multipliers (Lagrange by Adam, the PID Lagrangian, IPO's barrier), and what
OmniSafe's env adapters do on a fixed cost sequence (Saute, Simmer and its controller, early
termination), with the differences crax keeps (docs/DECISIONS.md, decision 81) asserted as such.
Each new learner also trains two iterations on the toy env."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from crax.core.early_termination import EarlyTermination, terminate_early
from crax.core.env import Env, EpisodeStats, State
from crax.learners import (
    CPPOPID,
    IPO,
    PDO,
    PPO,
    RCPO,
    TRPO,
    TRPOPID,
    IterationBatch,
    PolicyBatch,
    PPOEarlyTerminated,
    PPOSaute,
    PPOSimmerPID,
    SACLag,
    Trainer,
    TRPOEarlyTerminated,
    TRPOSaute,
    TRPOSimmerPID,
)
from crax.learners.shared.budget_envs import SauteBudget, SimmerBudget
from crax.learners.shared.networks import gaussian_kl, gaussian_log_prob
from crax.learners.trust_region import family as trust_region
from crax.learners.trust_region.family import PolicySpace
from crax.runs.envs import trainer_for
from tests.learners.conftest import tiny
from tests.learners.omnisafe_data import load
from tests.learners.test_off_policy import small
from tests.learners.toy_env import ToyEnv, TwoActionEnv

DATA = load("baselines")
BATCH = {k: jnp.asarray(v) for k, v in DATA["batch"].items()}
T = 1000  # the episode length the violations v = (J − d)/T are taken over
NEW = [TRPO, TRPOPID, CPPOPID, RCPO, PDO, IPO, TRPOSaute, PPOSimmerPID, TRPOSimmerPID, PPOEarlyTerminated,
       TRPOEarlyTerminated]


# ---- the actor: OmniSafe's GaussianLearningActor in crax's parameter-std actor --------------------

def omnisafe_params(theta: np.ndarray) -> dict[str, np.ndarray]:
    """OmniSafe's flat parameters by name (torch's layout: ``Linear.weight`` is (out, in))."""
    out, at = {}, 0
    for entry in DATA["actor"]["layout"]:
        size = int(np.prod(entry["shape"]))
        out[entry["name"]] = np.asarray(theta[at:at + size]).reshape([int(n) for n in entry["shape"]])
        at += size
    return out


def crax_params(actor) -> dict[str, np.ndarray]:
    """A crax actor's parameters under OmniSafe's names (``mean.{2i}`` is crax's layer i, kernel transposed)."""
    out = {"log_std": np.asarray(actor.log_std[...])}
    for i, layer in enumerate(actor.net.layers):
        out[f"mean.{2 * i}.weight"] = np.asarray(layer.kernel[...]).T
        out[f"mean.{2 * i}.bias"] = np.asarray(layer.bias[...])
    return out


def learner(cls, episode_length: int = T, **overrides):
    """A crax learner whose actor is OmniSafe's recorded one (tanh, one learned log-std, raw observations)."""
    config = tiny(cls.Config, activation="tanh", actor_std="parameter", normalize_observations=False,
                  actor_hidden=tuple(int(h) for h in DATA["actor"]["hidden"]), **overrides)
    made = cls(config, int(DATA["actor"]["obs"]), int(DATA["actor"]["act"]), episode_length, rngs=nnx.Rngs(0))
    params = omnisafe_params(DATA["actor"]["theta"])
    made.actor.log_std[...] = jnp.asarray(params["log_std"])
    for i, layer in enumerate(made.actor.net.layers):
        layer.kernel[...] = jnp.asarray(params[f"mean.{2 * i}.weight"].T)
        layer.bias[...] = jnp.asarray(params[f"mean.{2 * i}.bias"])
    return made


def step_multipliers(made, episode_costs) -> list[float]:
    """The learner's multiplier hook on OmniSafe's episode costs J (as v = (J − d)/T): λ after each."""
    out = []
    for jc in episode_costs:
        made.multiplier_update(jnp.asarray((float(jc) - float(DATA["limit"])) / made.episode_length, jnp.float32))
        out.append(float(made.rule.lagrange[...]))
    return out


def assert_params(got: dict[str, np.ndarray], want: dict[str, np.ndarray], rtol=2e-4, atol=2e-6) -> None:
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value, rtol=rtol, atol=atol, err_msg=name)


def actor_after_step(made) -> dict[str, np.ndarray]:
    """The learner's actor after its ``actor_step`` on the recorded batch (the trust-region update hook's step)."""
    samples = {"obs": BATCH["obs"], "u": BATCH["act"], "logp": BATCH["logp"], "adv_r": BATCH["adv_r"],
               "adv_c": BATCH["adv_c"]}
    batch = IterationBatch(samples=samples, violation=jnp.zeros(()), cost_scale=jnp.ones(()))
    space = PolicySpace(made, samples)
    step, _ = made.actor_step(space, batch)
    nnx.update(made.actor, space.params(space.theta + step))
    return crax_params(made.actor)


def loss_and_grad(made) -> tuple[float, dict[str, np.ndarray]]:
    """The learner's ``policy_loss`` on the recorded batch and its gradient in the actor's parameters."""
    graphdef, params, rest = nnx.split(made.actor, nnx.Param, ...)

    def loss(p):
        loc, scale = nnx.merge(graphdef, p, rest)(BATCH["obs"])
        ratio = jnp.exp(gaussian_log_prob(BATCH["act"], loc, scale) - BATCH["logp"])
        kl = gaussian_kl(loc, scale, loc, scale)
        return made.policy_loss(PolicyBatch(ratio=ratio, adv_r=BATCH["adv_r"], adv_c=BATCH["adv_c"], kl=kl,
                                            violation=jnp.zeros(())))[0]

    value, grad = jax.value_and_grad(loss)(params)
    return float(value), crax_params(nnx.merge(graphdef, grad, rest))


# ---- whole actor updates and losses ------------------------------------------------------------

OMNISAFE_CG_EPS = 1e-6
"""OmniSafe's ``conjugate_gradients`` adds 10⁻⁶ to the denominators of its step sizes, crax's CG nothing by
default (decision 78); the whole-update tests give crax's CG OmniSafe's ε (without it the step moves by
about 1 % on this batch, whose gradient is small)."""


@pytest.fixture
def omnisafe_cg(monkeypatch):
    monkeypatch.setattr(trust_region, "conjugate_gradient",
                        functools.partial(trust_region.conjugate_gradient, eps=OMNISAFE_CG_EPS))


def surrogate_grad(made) -> dict[str, np.ndarray]:
    """The gradient of −mean(ρ · Â) at the actor, Â the learner's ``advantage`` hook's mix (OmniSafe's
    ``_loss_pi`` on its ``_compute_adv_surrogate``: what its natural-gradient step solves for)."""
    samples = {"obs": BATCH["obs"], "u": BATCH["act"], "logp": BATCH["logp"]}
    space = PolicySpace(made, samples)
    adv = made.advantage(BATCH["adv_r"], BATCH["adv_c"], jnp.zeros(()))
    grad = jax.grad(lambda th: -space.surrogate(th, adv))(space.theta)
    graphdef, _, rest = nnx.split(made.actor, nnx.Param, ...)
    return crax_params(nnx.merge(graphdef, space.params(grad), rest))


def check_update(made, key: str) -> None:
    """The surrogate's gradient, and the actor after the whole update, are OmniSafe's."""
    assert_params(surrogate_grad(made), omnisafe_params(DATA[key]["grad"]), rtol=1e-4, atol=1e-7)
    theta0 = omnisafe_params(DATA["actor"]["theta"])
    want = omnisafe_params(DATA[key]["theta"])
    assert max(np.abs(want[k] - theta0[k]).max() for k in want) > 1e-2  # the update moved the actor
    assert_params(actor_after_step(made), want)


def test_trpo_update_matches_omnisafe(omnisafe_cg):
    check_update(learner(TRPO), "trpo")


def test_trpo_pid_multiplier_and_update_match_omnisafe(omnisafe_cg):
    made = learner(TRPOPID)
    np.testing.assert_allclose(step_multipliers(made, DATA["ep_costs"]), DATA["trpo_pid"]["lambdas"], rtol=1e-5)
    check_update(made, "trpo_pid")


def test_rcpo_multiplier_and_natural_gradient_step_match_omnisafe(omnisafe_cg):
    made = learner(RCPO)
    np.testing.assert_allclose(step_multipliers(made, DATA["ep_costs"]), DATA["rcpo"]["lambdas"], rtol=1e-5)
    check_update(made, "rcpo")


def test_rcpo_takes_the_whole_step_where_a_line_search_takes_none():
    """RCPO is OmniSafe's NaturalPG: the step sqrt(2δ/xᵀHx)·x whatever the surrogate and the KL do there."""
    samples = {"obs": BATCH["obs"], "u": BATCH["act"], "logp": BATCH["logp"]}
    direction = jnp.full((22,), 0.05)
    reject = lambda fraction: jnp.asarray(False)  # noqa: E731
    for cls, taken in ((RCPO, 1.0), (TRPOPID, 0.0)):
        made = learner(cls)
        space = PolicySpace(made, samples)
        step, stats = made.searched_step(space, direction, reject, functools.partial(space.surrogate, adv=BATCH["adv_r"]))
        np.testing.assert_allclose(step, taken * direction)
        assert float(stats["trust_region/accepted_step"]) == taken


@pytest.mark.parametrize("cls, key", [(CPPOPID, "cppo_pid"), (PDO, "pdo")], ids=["cppo-pid", "pdo"])
def test_lagrangian_losses_and_gradients_match_omnisafe(cls, key):
    made = learner(cls)
    np.testing.assert_allclose(step_multipliers(made, DATA["ep_costs"]), DATA[key]["lambdas"], rtol=1e-5)
    loss, grad = loss_and_grad(made)
    np.testing.assert_allclose(loss, DATA[key]["loss"], rtol=1e-5, atol=1e-7)
    assert_params(grad, omnisafe_params(DATA[key]["grad"]), rtol=1e-4, atol=1e-7)


def test_pdo_surrogate_is_not_clipped_and_cppo_pid_s_is():
    """On this batch some ratios are past PPO's clip: PDO's loss is OmniSafe's unclipped one, CPPO-PID's clipped."""
    pdo, cppo = learner(PDO), learner(CPPOPID)
    pdo.rule.lagrange[...] = jnp.asarray(0.0)
    cppo.rule.lagrange[...] = jnp.asarray(0.0)
    assert abs(loss_and_grad(pdo)[0] - loss_and_grad(cppo)[0]) > 1e-4


@pytest.mark.parametrize("i", range(len(DATA["ipo"])), ids=[f"J={r['ep_cost']:g}" for r in DATA["ipo"]])
def test_ipo_penalty_loss_and_gradient_match_omnisafe(i):
    rec = DATA["ipo"][i]
    made = learner(IPO)
    made.multiplier_update(jnp.asarray((float(rec["ep_cost"]) - float(DATA["limit"])) / T, jnp.float32))
    np.testing.assert_allclose(float(made.rule.ipo_penalty[...]), rec["penalty"], rtol=1e-4)
    adv = made.advantage(BATCH["adv_r"], BATCH["adv_c"], jnp.zeros(()))
    np.testing.assert_allclose(adv, rec["adv"], rtol=1e-4, atol=1e-6)
    loss, grad = loss_and_grad(made)
    np.testing.assert_allclose(loss, rec["loss"], rtol=1e-4, atol=1e-7)
    assert_params(grad, omnisafe_params(rec["grad"]), rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("cls", [TRPOPID, CPPOPID, RCPO, PDO, IPO], ids=lambda c: c.name)
def test_budget_taking_baselines_keep_one_multiplier_per_term(cls):
    """With ``budgets`` each term's multiplier moves with its own violation only, and the mix weighs each
    term's cost advantage by its own."""
    made = cls(tiny(cls.Config, budgets=("cost/a=5", "cost/b=1")), 3, 1, T, rngs=nnx.Rngs(0))
    before = np.asarray(made.multipliers()["ipo_penalty" if cls is IPO else "lagrange"])
    made.multiplier_update(jnp.asarray([-0.02, 0.0]))  # term a well under its bound, b on it
    made.multiplier_update(jnp.asarray([-0.02, 0.03]))  # then b over it
    after = np.asarray(made.multipliers()["ipo_penalty" if cls is IPO else "lagrange"])
    assert after.shape == (2,) and after[1] > after[0] and after[1] > before[1]
    adv_c = jnp.stack([jnp.ones(4), jnp.zeros(4)], axis=-1)
    mixed = made.advantage(jnp.zeros(4), adv_c, jnp.zeros(2))
    np.testing.assert_allclose(mixed, -after[0] / (1 + after.sum()), rtol=1e-5)


# ---- env adapters on a fixed cost sequence -------------------------------------------------------

class GivenCostEnv(TwoActionEnv):
    """A stub task: reward 1 each step, the cost and the time-limit flag given as the action's two entries
    (OmniSafe's recorder's stub env returns the same sequence)."""

    def __init__(self, episode_length: int):
        super().__init__(episode_length, dt=1.0)

    def reset(self, key: jax.Array) -> State:
        zero = jnp.zeros((), jnp.float32)
        return State(data={}, obs=jnp.zeros((int(DATA["actor"]["obs"]),)), reward=zero, cost=zero, done=zero,
                     truncation=zero, info={"steps": zero}, metrics={"cost/given": zero})

    def step(self, state: State, action: jax.Array) -> State:
        cost, truncated = action[0], action[1]
        return state.replace(reward=jnp.ones(()), cost=cost, done=truncated, truncation=truncated,
                             info={**state.info, "steps": state.info["steps"] + 1.0}, metrics={"cost/given": cost})


def run_env(env: Env, rec: dict, extra: tuple[float, ...] = ()) -> dict[str, np.ndarray]:
    """``env`` through the recorded costs and time limits (resetting where an episode ends, as OmniSafe's
    AutoReset does), ``extra`` appended to every action: reward, done, truncation, Saute's state z and the
    observation's last entry."""
    horizon, costs = int(rec["horizon"]), [float(c) for c in rec["costs"]]
    state = env.reset(jax.random.key(0))
    step = jax.jit(env.step)
    out = {"reward": [], "done": [], "truncation": [], "z": [float(state.info.get("saute_budget", np.nan))],
           "observed": [float(state.obs[-1])]}
    for k, cost in enumerate(costs):
        state = step(state, jnp.asarray([cost, float((k + 1) % horizon == 0), *extra]))
        for name in ("reward", "done", "truncation"):
            out[name].append(float(getattr(state, name)))
        if state.done > 0:
            state = env.reset(jax.random.key(k))
        out["z"].append(float(state.info.get("saute_budget", np.nan)))
        out["observed"].append(float(state.obs[-1]))
    return {k: np.asarray(v) for k, v in out.items()}


@pytest.mark.parametrize("cls", [PPOSaute, TRPOSaute], ids=lambda c: c.name)
@pytest.mark.parametrize("run", range(2), ids=["gamma=0.999", "gamma=0.99"])
def test_saute_budget_matches_omnisafe_s_adapter(run, cls):
    rec = DATA["saute"]
    omni = rec["runs"][run]
    gamma = float(omni["saute_gamma"])
    config = tiny(cls.Config, safety_bound=float(DATA["limit"]), saute_discount=gamma,
                  saute_penalty=float(rec["cfgs"]["unsafe_reward"]), saute_max_budget=3.0)
    env = cls.wrap_env(GivenCostEnv(int(rec["horizon"])), config)
    assert isinstance(env, SauteBudget)
    np.testing.assert_allclose(env.discounted_bound, float(np.ravel(omni["safety_budget"])[0]), rtol=1e-6)
    got = run_env(env, rec)
    np.testing.assert_allclose(got["z"], omni["z"], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got["reward"], omni["reward"])
    # decision 27: crax observes z clipped to [0, z_max], OmniSafe z itself
    np.testing.assert_allclose(got["observed"], np.clip(omni["z"], 0.0, 3.0), rtol=1e-5, atol=1e-6)
    assert (got["z"] < 0).any() and (np.asarray(omni["reward"]) < 0).any()  # the budget was spent, then penalized


def test_trpo_saute_wraps_the_env_as_ppo_saute():
    config = tiny(TRPOSaute.Config, safety_bound=4.0, saute_discount=0.999)
    env = TRPOSaute.wrap_env(GivenCostEnv(20), config)
    assert isinstance(env, SauteBudget) and env.discount == 0.999 and env.safety_bound == 4.0
    with pytest.raises(ValueError, match="safety_bound"):
        TRPOSaute.Config(safety_bound=0.0)


@pytest.mark.parametrize("key", ["simmer", "simmer_fast"])
def test_simmer_controller_matches_omnisafe_s_agent(key):
    rec = DATA[key]
    gains = rec["cfgs"]
    made = learner(PPOSimmerPID, episode_length=int(rec["horizon"]), safety_bound=float(rec["safety_bound"]),
                   simmer_upper_budget=float(rec["upper_budget"]), saute_discount=float(gains["saute_gamma"]),
                   simmer_kp=float(gains["kp"]), simmer_ki=float(gains["ki"]), simmer_kd=float(gains["kd"]),
                   simmer_polyak=float(gains["polyak"]))
    np.testing.assert_allclose(float(made.rule.simmer_budget[...]), rec["start_budget"], rtol=1e-6)
    budgets = []
    for jc in rec["ep_costs"]:
        made.multiplier_update(jnp.asarray((float(jc) - float(rec["safety_bound"])) / made.episode_length))
        budgets.append(float(made.rule.simmer_budget[...]))
    np.testing.assert_allclose(budgets, rec["budgets"], rtol=1e-5)
    # the learner's action carries the budget to the env
    action = made.env_action(jnp.zeros((5, int(DATA["actor"]["act"]))))
    np.testing.assert_allclose(action[:, -1], budgets[-1], rtol=1e-6)


def test_simmer_budget_state_matches_omnisafe_s_adapter_from_each_episode_s_start():
    """OmniSafe's SimmerAdapter starts the first episode after its reset at z = budget/upper and every
    later one at 1 (its step's reset); crax starts every episode at 1 (decision 81). The second episode
    matches; the first differs by exactly the start's (1 − budget/upper)/γ^t."""
    rec = DATA["simmer"]
    gamma, horizon, budget = float(rec["cfgs"]["saute_gamma"]), int(rec["horizon"]), float(rec["budgets"][-1])
    env = SimmerBudget(GivenCostEnv(horizon), safety_bound=float(rec["safety_bound"]), discount=gamma,
                       penalty=float(rec["cfgs"]["unsafe_reward"]), max_budget=3.0)
    assert env.action_size == 3
    got = run_env(env, rec, extra=(budget,))
    omni = {k: np.asarray(v) for k, v in rec["steps"].items()}
    second = slice(horizon + 1, 2 * horizon + 1)
    np.testing.assert_allclose(got["z"][second], omni["z"][second], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got["reward"][horizon:], omni["reward"][horizon:])
    upper = float(rec["upper_budget"]) * (1 - gamma**horizon) / (1 - gamma) / horizon
    start_gap = (1.0 - budget / upper) / gamma ** np.arange(horizon)
    np.testing.assert_allclose(got["z"][:horizon] - omni["z"][:horizon], start_gap, rtol=1e-4, atol=1e-6)
    assert start_gap[0] > 0.01


def test_early_termination_matches_omnisafe_within_an_episode_and_resets_the_spent_cost_at_its_end():
    """OmniSafe's EarlyTerminatedAdapter ends the episode where the cost spent since its last early
    termination passes the limit, reward 0 on that step; it keeps what an episode spent past the episode's
    end by its time limit. crax's rule counts the cost of the episode alone (decision 81)."""
    rec = DATA["early_terminated"]
    horizon, limit = int(rec["horizon"]), float(rec["cost_limit"])
    costs = np.asarray(rec["costs"])
    omni = {k: np.asarray(v) for k, v in rec["steps"].items()}

    def terminations(reset_at_time_limit: bool) -> np.ndarray:
        spent, out = 0.0, []
        for k, c in enumerate(costs):
            spent += c
            out.append(float(spent > limit))
            if spent > limit or (reset_at_time_limit and (k + 1) % horizon == 0):
                spent = 0.0
        return np.asarray(out)

    np.testing.assert_array_equal(omni["terminated"], terminations(reset_at_time_limit=False))  # OmniSafe's rule
    got = run_env(EarlyTermination(GivenCostEnv(horizon), limit), rec)
    ended = terminations(reset_at_time_limit=True)
    np.testing.assert_array_equal(got["done"], np.maximum(ended, omni["truncated"]))
    np.testing.assert_array_equal(got["truncation"], omni["truncated"] * (1 - ended))
    np.testing.assert_array_equal(got["reward"], 1.0 - ended)
    first = slice(0, horizon)  # no carried cost yet: the same steps end, with the same rewards
    np.testing.assert_array_equal(got["reward"][first], omni["reward"][first])
    assert (ended != omni["terminated"]).any()


def test_early_termination_sits_under_episode_stats():
    env = terminate_early(EpisodeStats(GivenCostEnv(10)), 1.5)
    assert isinstance(env, EpisodeStats) and isinstance(env.env, EarlyTermination)
    state = env.reset(jax.random.key(0))
    for _ in range(2):
        state = env.step(state, jnp.asarray([1.0, 0.0]))
    assert float(state.done) == 1 and float(state.metrics["episode/done"]) == 1
    assert float(state.metrics["episode/cost"]) == 2.0 and float(state.metrics["episode/return"]) == 1.0
    assert float(state.metrics["early_termination/terminated"]) == 1


@pytest.mark.parametrize("cls", [PPO, SACLag], ids=lambda c: c.name)
def test_any_learner_trains_on_early_terminated_episodes_and_evaluates_whole_ones(cls):
    """``early_termination`` on a learner of either family: every ToyEnv step costs 1 (hazard below y = −10),
    so a training episode ends at its third step (3 > d = 2); an evaluation episode runs all 16."""
    config = tiny(cls.Config, safety_bound=2.0, early_termination=True) if cls is PPO else small(SACLag, safety_bound=2.0,
                                                                                                 early_termination=True)
    trainer = trainer_for(cls, config, ToyEnv(episode_length=16, hazard_y=-10.0))
    state, metrics = trainer.run(trainer.init(jax.random.key(0)), 4)  # past the desynchronised first episodes
    ended = np.asarray(metrics["episode/count"]) > 0
    assert ended.any() and (np.asarray(metrics["episode/length"])[ended] == 3).all()
    ev = jax.device_get(trainer.evaluate(state, jax.random.key(1)))
    np.testing.assert_array_equal(ev["stochastic"]["length"], 16)
    np.testing.assert_array_equal(ev["stochastic"]["cost"], 16)


# ---- every new learner trains ---------------------------------------------------------------------

ENV_HOOKS = (TRPOSaute, PPOSimmerPID, TRPOSimmerPID, PPOEarlyTerminated, TRPOEarlyTerminated)
"""The learners whose env hooks change what the trainer steps (the others' hooks are tested above; their
runs, ~8 s each, are in the slow tier)."""


@pytest.mark.parametrize("cls", [c if c in ENV_HOOKS else pytest.param(c, marks=pytest.mark.slow) for c in NEW],
                         ids=lambda c: c.name)
def test_new_learner_trains_two_iterations_on_the_toy_env(cls):
    trainer = Trainer(cls, tiny(cls.Config, safety_bound=2.0), ToyEnv())
    state, metrics = trainer.run(trainer.init(jax.random.key(0)), 2)
    assert all(np.isfinite(np.asarray(v)).all() for v in metrics.values())
    assert int(state.env_steps[0]) == 2 * trainer.config.steps_per_iteration
    assert (np.asarray(metrics["loss/policy"]) != 0).all()
