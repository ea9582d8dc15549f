"""What every learner family's config shares: how a run is carried out (:class:`RunConfig`) and the
constraint it trains under (:class:`ConstraintConfig`). A family's config (e.g.
:class:`crax.learners.on_policy.family.PPOConfig`) derives from both and declares only its algorithm's fields.

Every field declares its valid values with :func:`crax.core.params.ranged`; a config is checked
whole when it is built, and a bad value is a ValueError naming the field and its range.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, get_args

from crax.core.params import check_fields, ranged
from crax.learners.shared.encoders import EncoderKind

CostSignal = Literal["rollout", "episodes"]
"""What a learner's constraint signal measures (``cost_signal``)."""

ConstraintKind = Literal["expected", "chance", "cvar", "statewise"]
CONSTRAINT_KINDS: tuple[ConstraintKind, ...] = get_args(ConstraintKind)
"""What a learner's constraint bounds (``constraint_kind``): the expected episodic cost, the probability
that an episode's cost exceeds the bound (a chance constraint), the CVaR of the episodic cost, or the
largest step cost of an episode (a state-wise constraint)."""

EvalPolicy = Literal["stochastic", "deterministic"]
EVAL_POLICIES: tuple[EvalPolicy, ...] = get_args(EvalPolicy)
"""The policies every evaluation runs: sampled actions, and the mean action."""


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """How a run is carried out: its length, evaluations, seeds, devices and checkpoints. None of
    these fields changes what an iteration computes (``num_seeds`` trains independent copies)."""

    total_steps: int = ranged(100_000_000, ge=1, integer=True)
    """Environment steps to train for, per seed (rounded up to whole iterations)."""
    num_evals: int = ranged(5, ge=0, integer=True)
    """Evaluations during training (evenly spaced, the last at the end); 0 disables."""
    eval_envs: int = ranged(128, ge=1, integer=True)
    """Episodes (parallel envs) per evaluation, run with both the stochastic and the deterministic policy."""
    eval_policy: EvalPolicy = "stochastic"
    """Which evaluated policy the final report and the safe verdict use (the constraint is optimised
    for the stochastic one)."""
    num_devices: int = ranged(0, ge=0, integer=True)
    """Local devices to spread seeds (or the env batch) over; 0 = every GPU/TPU, or one device on a CPU
    (CPU host devices share the same cores: sharding over them measured 2.5× slower)."""
    seed: int = ranged(0, integer=True)
    """Random seed; seed i of a multi-seed run uses a key split from it."""
    num_seeds: int = ranged(1, ge=1, integer=True)
    """Independent seeds trained together under one jax.vmap."""
    iterations_per_call: int = ranged(1, ge=1, integer=True)
    """Training iterations per compiled call (metrics stay per iteration). A call runs whole: an
    evaluation or checkpoint that falls due inside it happens at its end; a call in which two
    evaluations fall due ends at the first (a call of that length compiles once more)."""
    checkpoint_every: int = ranged(10, ge=1, integer=True)
    """Write a checkpoint every this many iterations (and always at the end)."""

    def __post_init__(self) -> None:
        """Checks every field of the config (a subclass's too) against its declared range or choices."""
        check_fields(self)

    @property
    def steps_per_iteration(self) -> int:
        """Environment steps per iteration and seed (set by the learner family's batch layout)."""
        raise NotImplementedError

    @property
    def num_iterations(self) -> int:
        return -(-self.total_steps // self.steps_per_iteration)


SAFETY_BOUND = 25.0
"""The default episodic cost budget d."""


def positive_safety_bound() -> Any:
    """``safety_bound``'s field where d must be positive: Saute and Simmer spend their budget in units of d
    (every other learner takes d ≥ 0, :class:`ConstraintConfig`)."""
    return ranged(SAFETY_BOUND, gt=0)


@dataclasses.dataclass(frozen=True)
class ObservationConfig:
    """How every family's networks read an observation: the state vector's normalizer, and on an
    observation with images (:mod:`crax.core.observation`) each network's convolutional torso and the
    frames it sees."""

    normalize_observations: bool = True
    """Standardize observations with running mean/variance statistics."""
    observation_clip: float = ranged(10.0, gt=0)
    """Standardized observations are clipped to ±this (OmniSafe's observation normalizer: 5)."""
    encoder: EncoderKind = "nature"
    """On an observation with images: the convolutional torso each network runs on each image
    (``nature``: Nature-DQN's; ``impala``: IMPALA's; :mod:`crax.learners.shared.encoders`). Unused on a
    flat observation."""
    encoder_features: int = ranged(256, ge=1, integer=True)
    """On an observation with images: the features each image's torso gives the network's MLP."""
    frame_stack: int = ranged(1, ge=1, integer=True)
    """On an observation with images: the last this many frames of each image, stacked along channels
    (:class:`~crax.learners.shared.frame_stack.FrameStack`); 1: the current frame alone."""


@dataclasses.dataclass(frozen=True)
class ConstraintConfig:
    """The constraint a learner trains under: one episodic cost budget, or one per cost term."""

    safety_bound: float = ranged(SAFETY_BOUND, ge=0)
    """Episodic cost budget d; the constraint signal is v = ĉ − d/T with ĉ the mean per-step cost."""
    cost_signal: CostSignal = "rollout"
    """What the constraint signal ĉ measures: the iteration rollout's mean per-step cost (``rollout``), or
    the mean cost of the last ``cost_window`` finished episodes over the episode length (``episodes``,
    OmniSafe's ``EpCost`` over its logger's window; the rollout's when none has finished yet)."""
    cost_window: int = ranged(100, ge=1, integer=True)
    """Finished episodes the ``episodes`` signal averages (OmniSafe's ``window_lens``), and the
    ``chance`` and ``cvar`` constraints estimate their statistic over."""
    constraint_kind: ConstraintKind = "expected"
    """What the constraint bounds: ``expected`` (the mean episodic cost ≤ d), ``chance`` (the probability
    that an episode's cost exceeds d ≤ ``violation_probability``), ``cvar`` (the mean of the worst
    ``cvar_alpha`` fraction of episodic costs ≤ d) or ``statewise`` (the mean over episodes of the largest
    step cost ≤ ``step_bound``: every step safe, the episodic budget d unused). ``chance``, ``cvar`` and
    ``statewise`` read the last ``cost_window`` finished episodes (whatever ``cost_signal`` says), and need
    a learner whose multiplier rule takes them (the Lagrangian and PID rules)."""
    violation_probability: float = ranged(0.05, gt=0, lt=1)
    """δ of ``constraint_kind="chance"``: the allowed probability that an episode's cost exceeds d."""
    cvar_alpha: float = ranged(0.1, gt=0, lt=1)
    """α of ``constraint_kind="cvar"``: the worst fraction of episodes whose mean cost is bounded."""
    step_bound: float = ranged(0.0, ge=0)
    """w of ``constraint_kind="statewise"``: the bound on an episode's largest step cost, its violation
    v = mean of the window's largest step costs − w, a cost per step as the expected kind's ĉ − d/T is
    (Safety-Gymnasium's 0/1 costs: the fraction of episodes with a costly step, against w)."""
    early_termination: bool = False
    """End a training episode, with no reward on its last step, once its cost passes ``safety_bound``
    (Sun et al. 2021; OmniSafe's ``EarlyTerminatedAdapter``): any learner; evaluation runs whole episodes."""
    shield_horizon: int = ranged(0, ge=0, integer=True)
    """Env steps a shield (:class:`crax.learners.shared.shield.Shield`) looks ahead in the env's own model, the
    proposed action first and then held, replacing an action that predicts cost with the alternative that
    predicts least; 0: no shield. Any learner; in training and in evaluation alike (the shield is part of
    the deployed policy). Costs ``(1 + shield_candidates) × shield_horizon`` extra env steps per step."""
    shield_candidates: int = ranged(8, ge=1, integer=True)
    """Alternative actions the shield weighs against a costly one: the zero action, the action halved, the
    action reversed, then fixed Halton points of the action box (only with ``shield_horizon`` > 0)."""
    safety_layer_steps: int = ranged(0, ge=0, integer=True)
    """Env steps of uniformly random exploration (all ``safety_layer_envs`` together, rounded up to whole
    steps of them) that pre-train a safety layer (:class:`crax.learners.shared.safety_layer.SafetyLayer`,
    Dalal et al. 2018) before training; 0: no safety layer. It fits a linear model of the next step's cost,
    c(s) + g(s)ᵀa, and projects every action onto those it predicts within ``safety_layer_bound``. Any
    learner; in training and in evaluation alike (it is part of the deployed policy)."""
    safety_layer_envs: int = ranged(64, ge=1, integer=True)
    """Parallel envs of the safety layer's exploration (only with ``safety_layer_steps`` > 0)."""
    safety_layer_epochs: int = ranged(10, ge=1, integer=True)
    """Passes of the safety layer's fit over its exploration data."""
    safety_layer_batch: int = ranged(256, ge=1, integer=True)
    """Transitions per Adam step of the safety layer's fit (at most all of them)."""
    safety_layer_lr: float = ranged(1e-3, gt=0)
    """Adam's learning rate in the safety layer's fit."""
    safety_layer_hidden: tuple[int, ...] = ranged((64, 64), ge=1, integer=True)
    """Hidden layers of the safety layer's g(s), an MLP of the flat state; (): g affine in the state."""
    safety_layer_bound: float = ranged(0.5, ge=0)
    """C, the safety layer's bound on the predicted step cost c(s) + g(s)ᵀa: an action predicted above it is
    projected onto it. 0.5 suits indicator costs (Safety-Gymnasium's 0/1): the prediction is then roughly
    the probability that the next step costs, and the layer acts where that is more likely than not."""
    budgets: tuple[str, ...] = ()
    """Per-constraint budgets, ``cost/<term>=<d>`` each (episodic, like ``safety_bound``): the
    learner then keeps one cost-value output and one multiplier per term, each driven by its own
    term's violation. Empty: one budget, ``safety_bound``, on the summed cost."""

    def __post_init__(self) -> None:
        super_post = getattr(super(), "__post_init__", None)
        if super_post is not None:
            super_post()
        bounds = self.budget_bounds or {"safety_bound": self.safety_bound}
        if self.constraint_kind == "statewise" and self.budget_bounds:
            raise ValueError("constraint_kind='statewise' bounds the summed cost's largest step, not per-term "
                             "budgets: drop budgets, or use constraint_kind expected, chance or cvar with them")
        if self.constraint_kind == "chance" and min(bounds.values()) <= 0:
            raise ValueError("constraint_kind='chance' needs a positive bound (an episode exceeds it or not; its "
                             f"violation is weighed in units of the bound): got {bounds}")

    @property
    def reads_episode_window(self) -> bool:
        """Whether the constraint signal reads the window of the last ``cost_window`` finished episodes:
        ``cost_signal="episodes"``, or a ``chance``, ``cvar`` or ``statewise`` constraint."""
        return self.cost_signal == "episodes" or self.constraint_kind != "expected"

    @property
    def budget_bounds(self) -> dict[str, float]:
        """``{"cost/<term>": d}`` from :attr:`budgets` (empty without per-term budgets)."""
        out: dict[str, float] = {}
        for spec in self.budgets:
            term, sep, value = str(spec).partition("=")
            term = term.strip()
            term = term if term.startswith("cost/") else f"cost/{term}"
            try:
                bound = float(value)
            except ValueError:
                bound = float("nan")
            if not sep or term == "cost/" or not bound >= 0:
                raise ValueError(f"config field 'budgets': {spec!r} is not 'cost/<term>=<bound >= 0>' "
                                 "(e.g. cost/contact=5)")
            if term in out:
                raise ValueError(f"config field 'budgets' names {term!r} twice")
            out[term] = bound
        return out
