"""`BaseTrainer`: the run plumbing every learner family's trainer shares, as Brax's ``training/``
shares acting and gradients.

One implementation each of: the batched training and evaluation envs built from the learner's
``wrap_env``; the seed-batched train state and its layout over devices; ``init``, ``run`` (the
family's ``_iteration`` in ``lax.scan``, ``iterations_per_call`` at a time, vmapped over seeds),
ahead-of-time ``compile`` and ``place``; the rollout of the training envs (every seed's envs step
as one flat batch); and evaluation (one episode per eval env, stochastic and deterministic policy).
A family's trainer (:class:`crax.learners.on_policy.trainer.Trainer` for the PPO family,
:class:`crax.learners.off_policy.trainer.OffPolicyTrainer` for the off-policy one) adds what it
builds (``_build``), what its state holds beyond the shared fields (``_init_one``) and its
iteration (``_iteration``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Self

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx, struct
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from crax.core import observation
from crax.core.batch import BATCH_AXIS, map_per_env
from crax.core.early_termination import terminate_early
from crax.core.env import AutoReset, Env, EpisodeStats, PackedState, State, Vmap
from crax.core.observation import Observation
from crax.core.physics import single_device
from crax.devices import distributed, startup, xla_options
from crax.learners.shared.config import EVAL_POLICIES
from crax.learners.shared.learner import Learner
from crax.learners.shared.networks import gaussian_log_prob
from crax.learners.shared.safety_layer import safety_layer
from crax.learners.shared.shield import shield

STEP_COST = "constraint/step_cost"
_MEANS = ("shield/", "safety_layer/")  # per-step metrics of a wrapper that is part of the policy: averaged
"""Metric of the iteration's mean per-step summed cost; ``constraint/step_cost/cost/<term>`` holds each
cost term's, logged every iteration (episode sums, ``episode/cost/<term>``, only when episodes end)."""


def step_costs(s: State) -> dict[str, jax.Array]:
    """The summed cost of a (batched) step under ``"cost"`` and every ``cost/<term>`` metric under its name."""
    terms = {k: v for k, v in s.metrics.items() if k.startswith("cost/") and v.shape == s.cost.shape}
    return {"cost": s.cost, **terms}


@struct.dataclass
class TrainState:
    """Everything that evolves during training, one pytree (leading seed axis when batched)."""

    model: Any  # nnx.State of (learner, optimizer(s))
    env: State
    key: jax.Array
    env_steps: jax.Array
    iteration: jax.Array

    if TYPE_CHECKING:  # flax.struct.dataclass adds replace() at runtime; pyright cannot see it
        def replace(self, **updates: Any) -> Self: ...


@struct.dataclass
class Transition:
    """One rollout step of every env: what the learner saw, did and got."""

    obs: Observation
    u: jax.Array  # the pre-squash action; the env received the learner's env_action(u)
    logp: jax.Array
    loc: jax.Array
    scale: jax.Array
    reward: jax.Array
    cost: jax.Array
    done: jax.Array
    truncation: jax.Array
    final_obs: Observation
    episode: dict[str, jax.Array]
    events: dict[str, jax.Array]  # ``env/*`` event flags (e.g. non-finite actions), counted per iteration; ``shield/*``, averaged
    step_costs: dict[str, jax.Array]  # the summed cost ("cost") and each ``cost/<term>`` of the step, for logging


def episode_metrics(tr: Transition) -> dict[str, jax.Array]:
    """The iteration's episode statistics (means over the episodes that ended in it), event counts, the
    shield's and safety layer's means (``shield/intervened``: the fraction of steps whose action it replaced)
    and per-step costs, as every family logs them."""
    done = tr.episode["done"]
    n_done = done.sum()
    per_episode = lambda x: jnp.sum(x * done) / jnp.maximum(n_done, 1.0)  # noqa: E731
    return {
        **{f"episode/{k}": per_episode(v) for k, v in tr.episode.items() if k != "done"},
        "episode/count": n_done,
        **{k: v.mean() if k.startswith(_MEANS) else v.sum() for k, v in tr.events.items()},
        **{STEP_COST if k == "cost" else f"{STEP_COST}/{k}": v.mean() for k, v in tr.step_costs.items()},
    }


class BaseTrainer:
    """Compiles one learner class's training iteration on one env, for all seeds at once.

    ``init(key)`` builds ``num_seeds`` independent learners (vmapped), ``run(state, n)`` runs ``n``
    iterations (one jitted call; metrics come back per seed and iteration, shape ``(S, n)``), and
    ``evaluate(state, key)`` runs one episode on ``eval_envs`` envs per seed with the stochastic and
    with the deterministic policy. With several local devices (or ``devices`` given), the state is
    laid out over them by :func:`state_sharding` and every call runs data-parallel; learner code
    does not change.
    """

    def __init__(self, learner_cls: type[Learner], config: Any, env: Env,
                 devices: list[distributed.Device] | None = None):
        if type(config) is not learner_cls.Config:
            raise ValueError(f"config must be a {learner_cls.Config.__qualname__} for learner "
                             f"{learner_cls.name!r}, got {type(config).__qualname__}")
        startup.start_work()  # compile cache and host devices (crax/devices/startup.py)
        config = learner_cls.configure(config, env)
        self.learner_cls = learner_cls
        self.config = config
        self._check_constraint_kind()
        self.env = env
        tracked = EpisodeStats(PackedState(env))
        if config.safety_layer_steps > 0:  # so is a safety layer, fitted here on its own exploration
            tracked = safety_layer(tracked, config, jax.random.fold_in(jax.random.key(config.seed), 0x5afe))
        if config.shield_horizon > 0:  # a shield is part of the policy: training and evaluation step through it
            tracked = shield(tracked, config.shield_horizon, config.shield_candidates)
        single = learner_cls.learner_env(tracked, config)
        # early termination shapes training only: an evaluation judges whole episodes
        trained = (learner_cls.learner_env(terminate_early(tracked, config.safety_bound), config)
                   if config.early_termination else single)
        # Each batch steps inside the vmap over seeds (flat_env: all seeds' envs as one batch)
        self.train_env = AutoReset(Vmap(trained, config.num_envs))
        self.flat_env = AutoReset(Vmap(trained, config.num_envs * config.num_seeds))
        self.eval_env = Vmap(single, config.eval_envs)
        self.observation_spec = single.observation_spec
        """One observation's shapes as the learner sees it (:mod:`crax.core.observation`)."""
        self.action_size = env.action_size
        self.episode_length = env.episode_length
        self.cost_terms = tuple(config.budget_bounds)
        if self.cost_terms:
            self._check_budgets(single)
        self.graphdef = nnx.split(nnx.eval_shape(lambda: self._build(jax.random.key(0))))[0]
        init = jax.vmap(self._init_one, axis_name=BATCH_AXIS)
        if devices is None:
            devices = default_devices(config.num_devices, env.unwrapped.physics)
        self.sharding = state_sharding(jax.eval_shape(init, self.seed_keys(jax.random.key(0))),
                                       config.num_seeds, config.num_envs, devices)
        if self.sharding is None and distributed.multiprocess():
            raise ValueError(f"a run over {jax.process_count()} processes spreads over {len(devices)} devices: "
                             f"num_seeds ({config.num_seeds}) or num_envs ({config.num_envs}) must be a multiple "
                             f"of {len(devices)}")
        self._init = xla_options.jit(init, out_shardings=self.sharding)
        self._run = xla_options.jit(self._run_impl, static_argnums=1, out_shardings=(self.sharding, None))
        self._compiled: dict[int, Any] = {}
        self._eval = xla_options.jit(jax.vmap(self._evaluate_one, axis_name=BATCH_AXIS))

    @property
    def observation_size(self) -> int:
        """Size of a flat observation as the learner sees it; a ValueError for a structured one."""
        return observation.flat_size(self.observation_spec)

    # ---- what a family defines ----------------------------------------------------------------

    def _build(self, key: jax.Array) -> tuple[Any, ...]:
        """The learner and its optimizer(s), learner first: ``(learner, optimizer, ...)``."""
        raise NotImplementedError

    def _init_one(self, key: jax.Array) -> TrainState:
        """One seed's fresh train state (a family whose state holds more extends :meth:`_fresh`'s)."""
        return self._fresh(key)

    def _iteration(self, ts: TrainState) -> tuple[TrainState, dict[str, jax.Array]]:
        """One training iteration of every seed: the new state and the metrics (one value per seed)."""
        raise NotImplementedError

    # ---- construction -------------------------------------------------------------------------

    def _check_constraint_kind(self) -> None:
        kind = self.config.constraint_kind
        if kind not in self.learner_cls.constraint_kinds():
            raise ValueError(f"learner {self.learner_cls.name!r} bounds {' or '.join(self.learner_cls.constraint_kinds())} "
                             f"cost only, not constraint_kind={kind!r} (its rule steers no multiplier by a statistic "
                             f"of the episode costs); learners that do: {', '.join(Learner.taking_kind(kind))}")

    def _check_budgets(self, env: Env) -> None:
        if not self.learner_cls.supports_budgets:
            raise ValueError(f"learner {self.learner_cls.name!r} keeps no per-term multipliers, so it takes no "
                             f"budgets (it constrains the summed cost with safety_bound); learners that do: "
                             f"{', '.join(Learner.taking_budgets())}")
        terms = {k for k in env.state_shapes.metrics if k.startswith("cost/")}
        unknown = [t for t in self.cost_terms if t not in terms]
        if unknown:
            raise ValueError(f"budgets name cost terms this env does not have: {unknown}; its terms: "
                             f"{', '.join(sorted(terms))}")

    def violation(self, learner: Learner, tr: Transition) -> jax.Array:
        """The iteration's constraint violation v from one seed's rollout (:meth:`Learner.rollout_violation`:
        the rollout's mean step cost, or the window of finished episodes' costs)."""
        terms = self.cost_terms
        if self.config.constraint_kind == "statewise":  # each episode's largest step cost
            episode_cost = tr.episode["cost_peak"]
        else:
            episode_cost = jnp.stack([tr.episode[t] for t in terms], axis=-1) if terms else tr.episode["cost"]
        return learner.rollout_violation(tr.cost, episode_cost, tr.episode["done"])

    def cost_signal(self, s: State) -> jax.Array:
        """The cost the learner constrains: the summed cost, or the budgeted terms stacked (..., K)."""
        if not self.cost_terms:
            return s.cost
        return jnp.stack([s.metrics[t] for t in self.cost_terms], axis=-1)

    def _fresh(self, key: jax.Array) -> TrainState:
        """One seed's fresh learner, optimizers and envs (started desynchronized where configured)."""
        k_model, k_env, k_train, k_offset = jax.random.split(key, 4)
        model = nnx.state(self._build(k_model))
        env_state = self.train_env.reset(k_env)
        if self.config.desync_episodes:
            env_state = desynchronize(env_state, k_offset, self.episode_length)
        zero = jnp.zeros((), jnp.int32)
        return TrainState(model=model, env=env_state, key=k_train, env_steps=zero, iteration=zero)

    def seed_keys(self, key: jax.Array) -> jax.Array:
        return jax.random.split(key, self.config.num_seeds)

    def init(self, key: jax.Array) -> TrainState:
        """Fresh learners and envs for every seed (leading axis ``num_seeds``)."""
        return self._init(self.seed_keys(key))

    def abstract_state(self) -> TrainState:
        """Shapes and dtypes of :meth:`init`'s result, without computing it."""
        return jax.eval_shape(self._init, self.seed_keys(jax.random.key(0)))

    def place(self, state: TrainState) -> TrainState:
        """Puts a state (e.g. one restored from a checkpoint) on this trainer's devices."""
        if self.sharding is None:
            return jax.tree.map(jnp.asarray, state)
        return distributed.put(state, self.sharding)

    def learner(self, state: TrainState, seed: int = 0) -> Learner:
        """The learner module of one seed (a concrete NNX module, e.g. for a notebook)."""
        model = jax.tree.map(lambda x: x[seed], state.model)
        return nnx.merge(self.graphdef, model)[0]

    # ---- the loop -----------------------------------------------------------------------------

    def compile(self, state: TrainState, num_iterations: int) -> float:
        """Compiles ``run`` for ``num_iterations`` ahead of time; returns the seconds it took."""
        n = int(num_iterations)
        if n in self._compiled:
            return 0.0
        t = time.perf_counter()
        self._compiled[n] = self._run.lower(state, n).compile()
        return time.perf_counter() - t

    def run(self, state: TrainState, num_iterations: int) -> tuple[TrainState, dict[str, jax.Array]]:
        """Runs ``num_iterations`` training iterations for every seed in one compiled call."""
        n = int(num_iterations)
        self.compile(state, n)
        return self._compiled[n](state)

    def _run_impl(self, state: TrainState, n: int):
        state, metrics = jax.lax.scan(lambda ts, _: self._iteration(ts), state, None, length=n)
        return state, jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), metrics)  # (S, n)

    def collect(self, state: TrainState, length: int) -> tuple[TrainState, Transition]:
        """``length`` steps of every seed's training envs under the current policies, with no update
        (to inspect what an iteration learns from): the state with its envs and keys moved on, and the
        transitions ``(S, T, N, ...)``. Jit it for speed; it is not part of the training loop."""
        keys = jax.vmap(jax.random.split)(state.key)
        env_state, tr = self._rollout(state.model, state.env, keys[:, 1], state.env_steps, length)
        return state.replace(env=env_state, key=keys[:, 0]), tr

    def _explore(self, learner: Learner, obs: Observation, key: jax.Array,
                 env_steps: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
        """The pre-squash action a training env receives (as the learner's ``env_action``), with the policy's location and
        scale. Default: a sample of the learner's policy."""
        loc, scale = learner.policy(obs)
        return loc + scale * jax.random.normal(key, loc.shape), loc, scale

    def _rollout(self, models, env_state: State, keys: jax.Array, env_steps: jax.Array, length: int):
        """``length`` steps of every seed's training envs: arrays ``(S, T, N, ...)``.

        Policies run vmapped over seeds, but the envs of all seeds step as one flat batch of
        ``S · N`` envs outside that vmap: under ``jax.vmap`` the auto-reset's ``lax.cond`` would
        turn into a select and run the reset at every step.
        """
        s_, n_ = self.config.num_seeds, self.config.num_envs
        flat = lambda x: x.reshape((s_ * n_, *x.shape[2:]))  # noqa: E731
        unflat = lambda x: x.reshape((s_, n_, *x.shape[1:]))  # noqa: E731

        def act(model, obs, k, steps):
            learner = nnx.merge(self.graphdef, model)[0]
            u, loc, scale = self._explore(learner, obs, k, steps)
            return u, loc, scale, learner.env_action(u)

        def reward(model, r, c):
            return nnx.merge(self.graphdef, model)[0].training_reward(r, c)

        def step(s: State, ks: jax.Array):
            u, loc, scale, action = jax.vmap(act)(models, s.obs, ks, env_steps)
            ns = map_per_env(unflat, self.flat_env.step(map_per_env(flat, s), flat(action)))
            tr = Transition(
                obs=s.obs, u=u, logp=gaussian_log_prob(u, loc, scale), loc=loc, scale=scale,
                reward=jax.vmap(reward)(models, ns.reward, ns.cost), cost=self.cost_signal(ns), done=ns.done,
                truncation=ns.truncation, final_obs=ns.info["final_obs"],
                episode={k.removeprefix("episode/"): v for k, v in ns.metrics.items() if k.startswith("episode/")},
                events={k: v for k, v in ns.metrics.items() if k.startswith(("env/", *_MEANS))},
                step_costs=step_costs(ns),
            )
            return ns, tr

        step_keys = jax.vmap(lambda k: jax.random.split(k, length))(keys)  # (S, T)
        env_state, tr = jax.lax.scan(step, env_state, jnp.swapaxes(step_keys, 0, 1))
        return env_state, jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), tr)

    # ---- evaluation ---------------------------------------------------------------------------

    def evaluate(self, state: TrainState, key: jax.Array) -> dict[str, dict[str, jax.Array]]:
        """One episode per eval env and seed, for the stochastic and the deterministic policy.

        Returns ``{"stochastic": {...}, "deterministic": {...}}``, each mapping ``return``, ``cost``,
        ``length``, ``over_bound`` (1 where the episode's cost exceeds ``safety_bound``) and
        ``costly_steps`` (its steps with a positive cost) to per-episode arrays of shape
        ``(num_seeds, eval_envs)``. Both policies start from the same initial states.
        """
        return self.evaluate_model(state.model, key)

    def evaluate_model(self, model, key: jax.Array) -> dict[str, dict[str, jax.Array]]:
        """:meth:`evaluate` from the (seed-batched) model state alone, e.g. one read from a checkpoint."""
        return self._eval(model, self.seed_keys(key))

    def _evaluate_one(self, model, key: jax.Array) -> dict[str, dict[str, jax.Array]]:
        # Both policies in one loop over a flag: the program holds one copy of the env's step and reset,
        # not one per policy (half the evaluation's compile); both still draw from the same two keys.
        k_reset, k_act = jax.random.split(key)
        deterministic = jnp.asarray([mode == "deterministic" for mode in EVAL_POLICIES])
        out = jax.lax.map(lambda flag: self._episodes(model, k_reset, k_act, flag), deterministic)
        return {mode: jax.tree.map(lambda x, i=i: x[i], out) for i, mode in enumerate(EVAL_POLICIES)}

    def _episodes(self, model, k_reset: jax.Array, k_act: jax.Array, deterministic: jax.Array) -> dict[str, jax.Array]:
        learner = nnx.merge(self.graphdef, model)[0]
        env = self.eval_env
        n = self.config.eval_envs
        zeros = jnp.zeros((n,), jnp.float32)

        def step(carry, k):
            s, ret, cost, length, costly, finished = carry
            loc, scale = learner.policy(s.obs)
            u = jnp.where(deterministic, loc, loc + scale * jax.random.normal(k, loc.shape))
            s = env.step(s, learner.env_action(u))
            costly = costly + ((s.cost > 0) & ~finished)
            first = (s.metrics["episode/done"] > 0) & ~finished
            ret = jnp.where(first, s.metrics["episode/return"], ret)
            cost = jnp.where(first, s.metrics["episode/cost"], cost)
            length = jnp.where(first, s.metrics["episode/length"], length)
            return (s, ret, cost, length, costly, finished | first), None

        init = (env.reset(k_reset), zeros, zeros, zeros, zeros, jnp.zeros((n,), bool))
        keys = jax.random.split(k_act, self.episode_length)
        (_, ret, cost, length, costly, _), _ = jax.lax.scan(step, init, keys)
        over = (cost > self.config.safety_bound).astype(jnp.float32)
        return {"return": ret, "cost": cost, "length": length, "over_bound": over, "costly_steps": costly}


def finite_flag(model, metrics: dict[str, jax.Array]) -> jax.Array:
    """1.0 when any floating leaf of the updated model or of the metrics is not finite, else 0.0."""
    finite = [jnp.all(jnp.isfinite(x)) for x in jax.tree.leaves((model, metrics))
              if jnp.issubdtype(x.dtype, jnp.floating)]
    return 1.0 - jnp.all(jnp.stack(finite)).astype(jnp.float32)


def expand_terms(metrics: dict[str, jax.Array], cost_terms: tuple[str, ...]) -> dict[str, jax.Array]:
    """Per-term metrics (shape (K,)) split into one scalar per budgeted term: ``constraint/violation/cost/contact``."""
    if not cost_terms:
        return metrics
    expanded = {}
    for k, v in metrics.items():
        if jnp.ndim(v):
            expanded.update({f"{k}/{t}": v[i] for i, t in enumerate(cost_terms)})
        else:
            expanded[k] = v
    return expanded


def desynchronize(env_state: State, key: jax.Array, episode_length: int) -> State:
    """Starts each env of a batch at a random step of its episode, uniform in ``[0, T)``.

    Without it all envs start together and never terminate early on many tasks, so every
    iteration's cost estimate samples the same slice of every episode and the multipliers track
    episode phase. The shortened first episodes are flagged ``partial`` so :class:`EpisodeStats`
    leaves them out of the episode statistics. Envs that keep no ``info["steps"]`` counter are
    returned unchanged.
    """
    if "steps" not in env_state.info or "episode" not in env_state.info:
        return env_state
    steps = env_state.info["steps"]
    offsets = jax.random.randint(key, steps.shape, 0, episode_length).astype(steps.dtype)
    episode = {**env_state.info["episode"], "partial": (offsets > 0).astype(jnp.float32)}
    return env_state.replace(info={**env_state.info, "steps": offsets, "episode": episode})


def default_devices(num_devices: int, physics: str = "jax") -> list[distributed.Device]:
    """The devices a trainer spreads over: the first ``num_devices`` local devices, or with 0 every
    accelerator, and a single device on a CPU; in a multi-process run (:mod:`crax.devices.distributed`),
    the same choice on every process.

    An env whose physics steps a batch on one device (:func:`crax.core.physics.single_device`) trains
    on one (0 picks the first); a larger ``num_devices``, or several processes, is a ValueError.

    crax splits a CPU into host devices (one per core) so benchmarks can run envs data-parallel,
    but training sharded over host devices that share the same cores measured 2.5× slower than
    on one device (PPO-Lag, PointGoal1, SPEC defaults: 1,995 vs 4,928 steps/s on 2 cores), so a
    CPU trains on one unless asked.
    """
    available = jax.local_devices()
    if single_device(physics):
        if num_devices > 1 or distributed.multiprocess():
            raise ValueError(f"physics={physics!r} trains on one device; got num_devices={num_devices} over "
                             f"{jax.process_count()} process(es): use num_devices 1 (or 0) in one process, or "
                             "physics='jax' to spread over devices")
        return available[:1]
    if num_devices > len(available):
        raise ValueError(f"num_devices={num_devices} but only {len(available)} local device(s): {available}")
    if num_devices:
        return distributed.global_devices(available[:num_devices])
    return distributed.global_devices(available[:1] if available[0].platform == "cpu" else available)


def state_sharding(abstract: TrainState, num_seeds: int, num_envs: int,
                   devices: list[distributed.Device] | None = None) -> TrainState | None:
    """How a seed-batched :class:`TrainState` is laid out over ``devices`` (default: all local devices).

    Seeds are spread over the devices when their count divides evenly (no communication at all);
    otherwise each seed's env batch is (the learner and any other per-seed state, a replay buffer
    included, is then replicated and XLA inserts the reductions the update needs). None on a single
    device or when neither divides evenly.
    """
    devices = list(jax.local_devices() if devices is None else devices)
    if len(devices) < 2:
        return None
    mesh = Mesh(np.array(devices), ("devices",))
    if num_seeds % len(devices) == 0:
        return jax.tree.map(lambda _: NamedSharding(mesh, PartitionSpec("devices")), abstract)
    if num_envs % len(devices):
        return None
    replicated = NamedSharding(mesh, PartitionSpec())
    env_axis = NamedSharding(mesh, PartitionSpec(None, "devices"))
    everything = jax.tree.map(lambda _: replicated, abstract)
    return everything.replace(
        env=jax.tree.map(lambda x: env_axis if x.ndim >= 2 and x.shape[1] == num_envs else replicated, abstract.env),
    )
