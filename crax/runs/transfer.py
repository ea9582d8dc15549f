"""A run started from another run's learner: ``train(..., init_from=RUN, init_parts=...)``.

:func:`plan_transfer` runs before the new run's folder exists (from :func:`crax.runs.training.train`):
it reads the source run, checks that every named part exists in both learners with the same shapes
and that both train as many seeds (:func:`check_parts`), and reads those parts from the source's
newest checkpoint, so a transfer that cannot work is refused before anything trains or is written.
:func:`initial_model` puts them into the new run's fresh state; everything else starts fresh (the
optimizers, and an off-policy learner's replay buffer, which starts empty: ``learning_starts``
applies again).

A part is one of the learner's variable groups (the top-level names of ``nnx.state(learner)``,
:func:`part_names`), or a piece of one by its path (``critics/reward_q1``). By family:

- PPO and trust region (``ppo``, ``ppo-lag``, ``trpo-lag``, ``cpo``...): ``actor``, ``reward_critic``,
  ``cost_critic``, ``normalizer``, and ``rule`` where a rule keeps multipliers;
- off-policy (``ddpg``, ``td3``, ``sac`` and their ``-lag``/``-pid`` twins): ``actor``, ``critics``
  (``reward_q1``, ``cost_q``, and ``reward_q2`` but in DDPG), ``target_critics``, ``normalizer``, and
  ``rule``, ``temperature`` (SAC), ``target_actor`` (TD3), ``variance`` and ``target_variance`` (WCSAC)
  where the learner has them.

The default, :data:`INIT_PARTS`, is the PPO family's; an off-policy run names its parts, e.g.
``("actor", "normalizer", "critics/reward_q1", "critics/reward_q2")``. Across families a part fits
where both have it with one shape: the actor and normalizer of the PPO family and SAC (a tanh-Gaussian
actor both), not the deterministic actor of DDPG and TD3, nor any critic (a state value against
action values).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp

from crax.learners.shared.trainer import BaseTrainer, TrainState
from crax.runs import checkpoint as ckpt
from crax.runs import checkpoint_layouts
from crax.runs.envs import get_learner, make_env, trainer_for

INIT_PARTS = ("actor", "reward_critic", "normalizer")
"""What a run initialised from another (``init_from``) copies by default: the policy, the reward
critic and the observation normalizer of the PPO family; the cost critic, multipliers and optimizer
start fresh. An off-policy learner has no ``reward_critic``: name its parts (module docstring)."""


@dataclasses.dataclass(frozen=True)
class Transfer:
    """What a new run copies from the run in ``run_dir``: ``values[part]``, each with its seed axis."""

    run_dir: str
    parts: tuple[str, ...]
    values: dict[str, Any]

    @property
    def record(self) -> dict[str, Any]:
        """``config.json``'s ``init_from`` entry."""
        return {"run_dir": self.run_dir, "parts": list(self.parts)}


def part_names(trainer: BaseTrainer) -> list[str]:
    """The learner's variable groups, by name (the parts a transfer can copy whole)."""
    return sorted(str(k) for k in _learner_state(trainer))


def _learner_state(trainer: BaseTrainer):
    return trainer.abstract_state().model[0]


def _child(node, key: str):
    """``node[key]`` of a mapping, for a name or an index written as digits; None where it has none."""
    if not isinstance(node, Mapping):
        return None
    if key in node:
        return node[key]
    return node.get(int(key)) if key.isdigit() else None


def _key(node: Mapping, key: str):
    return key if key in node or not key.isdigit() else int(key)


def _lookup(tree, part: str):
    """The piece of ``tree`` at ``part`` (``critics/reward_q1``); None where there is none."""
    node = tree
    for key in part.split("/"):
        node = _child(node, key)
        if node is None:
            return None
    return node


def _shapes(tree) -> dict[str, tuple[int, ...]]:
    """Each leaf's shape without the seed axis, by its path (``net/layers/0/kernel``)."""
    return {ckpt.leaf_name(p).removesuffix("value").removesuffix("/"): tuple(x.shape[1:])
            for p, x in jax.tree_util.tree_flatten_with_path(tree)[0]}


def _shape_difference(got, want) -> str:
    """Where the shapes of ``got`` (the source's) and ``want`` (this run's) differ, in words ('' where they do not)."""
    there, here = _shapes(got), _shapes(want)
    diff = [f"{n}: {there[n]} there, {here[n]} here" for n in there if n in here and there[n] != here[n]]
    diff += [f"{n or 'the part'} only there" for n in there if n not in here]
    diff += [f"{n or 'the part'} only here" for n in here if n not in there]
    return "; ".join(diff[:3]) + (f"; {len(diff) - 3} more" if len(diff) > 3 else "")


def check_parts(source: BaseTrainer, target: BaseTrainer, parts: Sequence[str], where: str = "the source run") -> None:
    """ValueError unless a run of ``target`` can copy ``parts`` from one of ``source`` (``where`` names
    it): both train as many seeds and have each part with the same shapes. It reads the trainers'
    state shapes only, so a study can call it before it trains the source run."""
    src, dst = source.learner_cls.name, target.learner_cls.name
    there, here = _learner_state(source), _learner_state(target)
    if not parts:
        raise ValueError(f"init_parts names no part to copy from {where}; parts both learners have: "
                         f"{', '.join(_common(there, here))}")
    if source.config.num_seeds != target.config.num_seeds:
        raise ValueError(f"{where} trained {source.config.num_seeds} seed(s); this run has {target.config.num_seeds}")
    for part in parts:  # every name first: its error lists the valid ones
        got, want = _lookup(there, part), _lookup(here, part)
        if got is None or want is None:
            lacking = (f"{dst} (this run) has no part {part!r}" if got is not None
                       else f"{src} ({where}) has no part {part!r}" if want is not None
                       else f"neither {src} ({where}) nor {dst} (this run) has a part {part!r}")
            raise ValueError(f"cannot copy {part!r} from {where} ({src}) into a {dst} run: {lacking}; valid parts "
                             f"(both learners have them): {', '.join(_common(there, here))}{_pieces(there, here)}")
    for part in parts:
        if diff := _shape_difference(_lookup(there, part), _lookup(here, part)):
            raise ValueError(f"cannot copy {part!r} from {where} ({src}) into a {dst} run: its shapes differ ({diff}); "
                             "another env, observation or action size, network size, or kind of network")


def _common(there, here) -> list[str]:
    return sorted(set(map(str, there)) & set(map(str, here)))


def _pieces(there, here) -> str:
    """``, or a piece of one by its path (e.g. 'critics/cost_q', ...)``: the pieces of the first part
    both learner states have that holds several networks (none: '')."""
    for name in sorted(set(map(str, there)) & set(map(str, here))):
        a, b = there[name], here[name]
        keys = sorted(str(k) for k in set(a) & set(b)
                      if isinstance(a[k], Mapping) and isinstance(b[k], Mapping)) if isinstance(a, Mapping) else []
        if len(keys) > 1:
            return f", or a piece of one by its path (e.g. {', '.join(repr(f'{name}/{k}') for k in keys)})"
    return ""


def plan_transfer(init_from: str | os.PathLike, parts: Sequence[str], target: BaseTrainer) -> Transfer:
    """The parts ``parts`` of the newest checkpoint of the run in ``init_from``, checked against a run
    of ``target`` (:func:`check_parts`); ValueError where that run cannot start from them."""
    run_dir = str(init_from)
    parts = (parts,) if isinstance(parts, str) else tuple(parts)
    record = ckpt.read_config(run_dir)
    src_cls = get_learner(record["learner"])
    src_config = ckpt.config_from_dict(src_cls.Config, record["config"])
    src_env = make_env(record["env"], record["env_kwargs"])
    source = trainer_for(src_cls, src_config, src_env)
    check_parts(source, target, parts, repr(run_dir))
    restored = ckpt.load_checkpoint(run_dir, source.abstract_state(), checkpoint_layouts.packed_data([src_env]))
    model = restored["state"].model
    return Transfer(run_dir=run_dir, parts=parts, values={part: _lookup(model[0], part) for part in parts})


def initial_model(trainer: BaseTrainer, state: TrainState, transfer: Transfer) -> TrainState:
    """``state`` (a fresh one of ``trainer``) with the parts of ``transfer`` in place of its own."""
    model = state.model
    for part, value in transfer.values.items():
        *path, last = part.split("/")
        parent = _lookup(model[0], "/".join(path)) if path else model[0]
        if not isinstance(parent, MutableMapping) or _child(parent, last) is None:
            raise ValueError(f"this {trainer.learner_cls.name} run's learner has no part {part!r}")
        parent[_key(parent, last)] = jax.tree.map(jnp.asarray, value)
    return trainer.place(state.replace(model=model))


__all__ = ["INIT_PARTS", "Transfer", "check_parts", "initial_model", "part_names", "plan_transfer"]
