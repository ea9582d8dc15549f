"""One MuJoCo body split into agents by joint partition (Multi-Agent MuJoCo's scheme, de Witt et al. 2020).

A body's joints are the nodes of a graph (:class:`Node`; hyperedges connect the nodes that touch). Each
agent drives the actuators of its nodes and observes, for ``obsk = k``: its own nodes' ``qpos`` and
``qvel`` (depth 0), the ``qpos`` of the nodes 1…k hyperedges away (each depth's new nodes, sorted by
label), then the global nodes' ``qpos`` of all of them and their ``qvel`` (category-major); a partition
may observe more categories (Humanoid's: ``qfrc_actuator`` and its nodes' bodies' ``cinert``, ``cvel`` and
``cfrc_ext``, each body once per category). A node says what each category reads (:class:`Read`: an index
into ``qpos``, ``qvel``, ``qfrc_actuator`` or a flattened per-body array, counted from the end where
negative, optionally clipped), so a scenario table declares the quirks of its source (a suppressed root
coordinate, clipped velocities, a root velocity read twice) as data.

:class:`PartitionedEnv` runs the single-agent env underneath, one physics step for all agents: the agents'
actions are scattered into the body's action vector, every observation is gathered from the physics data's
arrays, concatenated, with one index table (no loop over agents or nodes in the traced step), the single-agent observation is
``info["global_state"]`` and the single-agent reward and cost go to every agent (a team reward and cost).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np

from crax.core import physics
from crax.core.env import Env, State
from crax.core.multi_agent import MultiAgentEnv

LOCAL_CATEGORIES = (("qpos", "qvel"), ("qpos",))
"""What an agent observes of the nodes at depth 0, and at every depth ≥ 1 (MaMuJoCo's default)."""
GLOBAL_CATEGORIES = ("qpos", "qvel")
"""What every agent observes of the global nodes, category-major (MaMuJoCo's default)."""
BODY_CATEGORIES = {"cinert": 10, "cvel": 6, "cfrc_ext": 6}
"""Per-body arrays a node's ``bodies`` are read from, with their widths."""
SOURCES = ("qpos", "qvel", "qfrc_actuator", *BODY_CATEGORIES)
"""The physics data's arrays an observation gathers from, in the order they are concatenated."""


@dataclasses.dataclass(frozen=True)
class Read:
    """One observed number: ``array[index]`` (``array`` one of :data:`SOURCES`, a per-body array flattened;
    a negative index counts from the end), clipped to ``[-clip, clip]`` when ``clip`` is set."""

    array: str
    index: int
    clip: float | None = None


@dataclasses.dataclass(frozen=True)
class Node:
    """A joint of the body's graph: what its ``qpos``, ``qvel`` and ``qfrc_actuator`` categories read, the
    bodies its body categories read (:data:`BODY_CATEGORIES`), and the index of the actuator it drives in
    the single-agent action vector (None for a global node)."""

    label: str
    qpos: tuple[Read, ...]
    qvel: tuple[Read, ...]
    actuator: int | None = None
    qfrc_actuator: tuple[Read, ...] = ()
    bodies: tuple[int, ...] = ()


def joint(label: str, index: int, actuator: int | None = None, *, clip_qvel: float | None = None,
          bodies: tuple[int, ...] = ()) -> Node:
    """A node reading ``qpos[index]``, ``qvel[index]`` (clipped to ±``clip_qvel``) and ``qfrc_actuator[index]``."""
    return Node(label, (Read("qpos", index),), (Read("qvel", index, clip_qvel),), actuator,
                (Read("qfrc_actuator", index),), bodies)


@dataclasses.dataclass(frozen=True)
class Partition:
    """A body's graph and one split of its nodes into agents.

    Args:
      nodes: every node by label.
      edges: hyperedges, each a tuple of labels whose nodes are all adjacent.
      globals: labels of the global nodes every agent observes (a label may repeat: it is then read twice).
      parts: one tuple of labels per agent; the agent's action entry j drives the j-th node's actuator.
      local_categories: what the agent observes of its nodes at depth 0, 1, … (the last for every deeper one).
      global_categories: what it observes of the global nodes.
    """

    nodes: Mapping[str, Node]
    edges: tuple[tuple[str, ...], ...]
    globals: tuple[str, ...]
    parts: tuple[tuple[str, ...], ...]
    local_categories: tuple[tuple[str, ...], ...] = LOCAL_CATEGORIES
    global_categories: tuple[str, ...] = GLOBAL_CATEGORIES

    def depths(self, agent: int, obsk: int) -> list[list[Node]]:
        """The agent's nodes by graph distance 0…``obsk``, each depth's new nodes sorted by label."""
        explored = set(self.parts[agent])
        frontier, depths = set(explored), [sorted(explored)]
        for _ in range(obsk):
            frontier = {n for e in self.edges if frontier & set(e) for n in e} - explored
            explored |= frontier
            depths.append(sorted(frontier))
        return [[self.nodes[label] for label in depth] for depth in depths]

    def reads(self, agent: int, obsk: int) -> list[Read]:
        """The agent's observation, number by number (module docstring)."""
        local, seen = [], {c: set() for c in BODY_CATEGORIES}
        for depth, nodes in enumerate(self.depths(agent, obsk)):
            categories = self.local_categories[min(depth, len(self.local_categories) - 1)]
            local += [r for node in nodes for category in categories for r in _category(node, category, seen)]
        seen = {c: set() for c in BODY_CATEGORIES}  # the global nodes' bodies are read again
        return local + [r for category in self.global_categories for label in self.globals
                        for r in _category(self.nodes[label], category, seen)]

    def actuators(self, agent: int) -> list[int]:
        """The single-agent action indices the agent's action entries drive, in order."""
        found = [self.nodes[label].actuator for label in self.parts[agent]]
        if any(a is None for a in found):
            raise ValueError(f"agent {agent}'s part {self.parts[agent]} holds a node with no actuator")
        return [int(a) for a in found if a is not None]


POST_CONSTRAINT = frozenset({"cinert", "cfrc_ext"})
"""Sources read from :func:`crax.core.physics.post_constraint`'s fields (MJX keeps them out of ``Data``'s own)."""


def _array(data: Any, name: str) -> Any:
    """``data``'s array ``name``, from its implementation fields where MJX keeps it there."""
    impl = getattr(data, "_impl", None)
    return getattr(impl, name) if name in POST_CONSTRAINT and impl is not None else getattr(data, name)


def _category(node: Node, category: str, seen: dict[str, set[int]]) -> list[Read]:
    """What ``node`` reads of ``category``: its own reads, or for a body category each of its bodies not in
    ``seen`` yet (which it then joins), all its components."""
    if category not in BODY_CATEGORIES:
        return list(getattr(node, category))
    width, reads = BODY_CATEGORIES[category], []
    for body in node.bodies:
        if body not in seen[category]:
            seen[category].add(body)
            reads += [Read(category, body * width + j) for j in range(width)]
    return reads


class PartitionedEnv(MultiAgentEnv):
    """A single-agent MuJoCo env seen as ``len(partition.parts)`` agents (module docstring).

    Args:
      env: the single-agent env (its ``state.data`` holds the arrays of :data:`SOURCES`).
      partition: the body's graph and split.
      obsk: the graph depth each agent observes beyond its own nodes.
      agents: the agents' names; default ``agent_0``, ``agent_1``, …
    """

    def __init__(self, env: Env, partition: Partition, obsk: int = 1, agents: Sequence[str] | None = None):
        super().__init__(env)
        if obsk < 0:
            raise ValueError(f"obsk must be >= 0, got {obsk}")
        n = len(partition.parts)
        self.partition, self.obsk = partition, obsk
        self.agents = tuple(agents) if agents is not None else tuple(f"agent_{i}" for i in range(n))
        if len(self.agents) != n:
            raise ValueError(f"{len(self.agents)} agent names for {n} parts")
        actuators = [partition.actuators(i) for i in range(n)]
        flat = sorted(a for part in actuators for a in part)
        if flat != list(range(env.action_size)):
            raise ValueError(f"the parts' actuators {actuators} must cover each of the env's {env.action_size} "
                             "action entries exactly once")
        self.action_sizes = tuple(len(part) for part in actuators)
        width = max(self.action_sizes)
        # entry j of the env's action is entry j_pos of agent j_agent's row: its index in the flattened (A, a) actions
        source = {a: i * width + j for i, part in enumerate(actuators) for j, a in enumerate(part)}
        self._action_index = np.asarray([source[a] for a in range(env.action_size)], np.int32)

        reads = [partition.reads(i, obsk) for i in range(n)]
        self.observation_sizes = tuple(len(r) for r in reads)
        shapes: Any = env.state_shapes.data
        size = {name: int(np.prod(_array(shapes, name).shape)) for name in SOURCES}
        offset = dict(zip(SOURCES, np.cumsum([0, *size.values()])[:-1].tolist(), strict=True))
        rows = max(self.observation_sizes)
        self._obs_index = np.zeros((n, rows), np.int32)
        self._obs_bound = np.full((n, rows), np.inf, np.float32)
        for i, agent_reads in enumerate(reads):
            for j, r in enumerate(agent_reads):
                if not -size[r.array] <= r.index < size[r.array]:
                    raise ValueError(f"{r} is outside {r.array} of size {size[r.array]}")
                self._obs_index[i, j] = offset[r.array] + r.index % size[r.array]
                self._obs_bound[i, j] = np.inf if r.clip is None else r.clip
        self._obs_mask = self.observation_mask()
        self._reads = frozenset(r.array for agent_reads in reads for r in agent_reads)
        # cinert and cfrc_ext as MuJoCo's mj_rnePostConstraint leaves them (Gymnasium's Humanoid reads them so)
        self._post_constraint = None
        if self._reads & POST_CONSTRAINT:
            model = getattr(env.unwrapped, "mjx_model", None)
            if model is None:
                raise ValueError(f"reading {sorted(self._reads & POST_CONSTRAINT)} needs an env with an mjx_model (a TaskEnv)")
            self._post_constraint = functools.partial(physics.post_constraint, model)

    @property
    def global_state_size(self) -> int:
        """The single-agent observation's size (read from the single-agent env's shapes, no trace)."""
        return int(cast(jax.ShapeDtypeStruct, self.env.state_shapes.obs).shape[-1])

    def observe(self, data: Any) -> jax.Array:
        """Every agent's observation row ``(A, o)`` of one env's physics ``data``, zero-padded."""
        fields = self._post_constraint(data) if self._post_constraint is not None else data
        return self.gather({name: _array(fields if name in POST_CONSTRAINT else data, name) for name in self._reads})

    def gather(self, arrays: Mapping[str, Any]) -> jax.Array:
        """Every agent's observation row ``(A, o)`` from the source arrays by name (:data:`SOURCES`; those
        no agent reads may be left out), zero-padded."""
        shapes: Any = self.env.state_shapes.data
        source = jnp.concatenate([jnp.ravel(jnp.asarray(arrays[name], jnp.float32)) if name in self._reads
                                  else jnp.zeros(int(np.prod(_array(shapes, name).shape)), jnp.float32)
                                  for name in SOURCES])
        bound = jnp.asarray(self._obs_bound)
        rows = jnp.clip(source[jnp.asarray(self._obs_index)], -bound, bound)
        return jnp.where(jnp.asarray(self._obs_mask), rows, 0.0).astype(jnp.float32)

    def _agents_view(self, inner: State) -> State:
        """The single-agent state ``inner`` (its physics ``Data``) as the agents see it."""
        n = self.num_agents
        return inner.replace(obs=self.observe(cast(Any, inner.data)), reward=jnp.broadcast_to(inner.reward, (n,)),
                             cost=jnp.broadcast_to(inner.cost, (n,)),
                             info={**inner.info, "global_state": inner.obs})

    def reset(self, key: jax.Array) -> State:
        return self._agents_view(self.env.reset(key))

    def step(self, state: State, action: jax.Array) -> State:
        if tuple(action.shape) != self.action_shape:
            raise ValueError(f"action has shape {tuple(action.shape)}; expected {self.action_shape} "
                             f"(agents {list(self.agents)}, action entries {self.action_sizes} padded to {self.action_size})")
        inner = self.team_state(state)
        body_action = action.reshape(-1)[jnp.asarray(self._action_index)]
        return self._agents_view(self.env.step(inner, body_action))
