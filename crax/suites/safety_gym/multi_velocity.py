"""Safety-Gymnasium 1.0.0's Safe Multi-Agent MuJoCo velocity tasks (``safety_gymnasium.make_ma``).

``make_ma(scenario, agent_conf)`` splits a Gymnasium MuJoCo v4 body into agents by joint partition
(gymnasium-robotics 1.2.2's MaMuJoCo tables, ``obsk.py``) and gives every agent the v4 reward and one
shared cost, ``float(v > τ)`` with τ per (scenario, partition) and ``v`` measured as its
``safe_mujoco_multi.py`` does from the v4 info: the planar speed for Ant and Humanoid, ``|v_x|`` for
HalfCheetah, Hopper and Walker2d (running backwards costs too), the signed ``v_x`` for Swimmer.
The graphs below are MaMuJoCo's (docs/reference/safety_gymnasium_multi_agent.md lists them with their
oddities: Walker2d's global root x read twice, Hopper's clipped velocities, Swimmer's joint velocities
paired with the root's slide velocities, Humanoid's per-body ``cinert``, ``cvel`` and ``cfrc_ext``).
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp

from crax.bodies.safety_locomotion import SafetyGymLocomotion
from crax.core.partition import GLOBAL_CATEGORIES, LOCAL_CATEGORIES, Node, Partition, Read, joint
from crax.suites.safety_gym.velocity import SafetyVelocity


@dataclasses.dataclass(frozen=True)
class Scenario:
    """One MaMuJoCo body: its graph's nodes, edges and global nodes, its partitions by name (each a tuple
    of agents' node labels), τ per partition, and how its cost measures the speed."""

    nodes: tuple[Node, ...]
    edges: tuple[tuple[str, ...], ...]
    globals: tuple[str, ...]
    parts: dict[str, tuple[tuple[str, ...], ...]]
    thresholds: dict[str, float]
    speed: str
    """``"planar"`` (the norm of the planar velocity), ``"abs_x"`` (|v_x|) or ``"x"`` (v_x)."""
    local_categories: tuple[tuple[str, ...], ...] = LOCAL_CATEGORIES
    global_categories: tuple[str, ...] = GLOBAL_CATEGORIES

    def partition(self, conf: str) -> Partition:
        return Partition({n.label: n for n in self.nodes}, self.edges, self.globals, self.parts[conf],
                         self.local_categories, self.global_categories)


def _root(label: str, index: int, *, observe_qpos: bool = True, clip_qvel: float | None = None) -> Node:
    """A root slide or hinge coordinate as a global node (its qpos suppressed where MaMuJoCo suppresses it)."""
    node = joint(label, index, clip_qvel=clip_qvel)
    return node if observe_qpos else dataclasses.replace(node, qpos=())


_CHEETAH = ("bthigh", "bshin", "bfoot", "fthigh", "fshin", "ffoot")
_HOPPER = ("thigh_joint", "leg_joint", "foot_joint")
_WALKER = ("thigh_joint", "leg_joint", "foot_joint", "thigh_left_joint", "leg_left_joint", "foot_left_joint")
_ANT = ("hip4", "ankle4", "hip1", "ankle1", "hip2", "ankle2", "hip3", "ankle3")  # actuators 0-7, as Ant-v4's
_TORSO, _LWAIST, _PELVIS, _R_THIGH, _R_SHIN, _R_FOOT, _L_THIGH, _L_SHIN, _L_FOOT = range(1, 10)
_R_UPPER_ARM, _R_LOWER_ARM, _L_UPPER_ARM, _L_LOWER_ARM = range(10, 14)
_HUMANOID = {  # joint: the bodies its body categories read, in actuator (and qpos) order
    "abdomen_y": (_TORSO, _LWAIST, _PELVIS), "abdomen_z": (_TORSO, _LWAIST, _PELVIS),
    "abdomen_x": (_PELVIS, _R_THIGH, _L_THIGH), "right_hip_x": (_R_THIGH, _R_SHIN), "right_hip_z": (_R_THIGH, _R_SHIN),
    "right_hip_y": (_R_THIGH, _R_SHIN), "right_knee": (_R_SHIN, _R_FOOT), "left_hip_x": (_L_THIGH, _L_SHIN),
    "left_hip_z": (_L_THIGH, _L_SHIN), "left_hip_y": (_L_THIGH, _L_SHIN), "left_knee": (_L_SHIN, _L_FOOT),
    "right_shoulder1": (_TORSO, _R_UPPER_ARM, _R_LOWER_ARM), "right_shoulder2": (_TORSO, _R_UPPER_ARM, _R_LOWER_ARM),
    "right_elbow": (_R_LOWER_ARM,), "left_shoulder1": (_TORSO, _L_UPPER_ARM, _L_LOWER_ARM),
    "left_shoulder2": (_TORSO, _L_UPPER_ARM, _L_LOWER_ARM), "left_elbow": (_L_LOWER_ARM,),
}
_ABDOMEN = ("abdomen_x", "abdomen_y", "abdomen_z")

SCENARIOS: dict[str, Scenario] = {
    "HalfCheetah": Scenario(
        nodes=(*(joint(label, i - 6, i) for i, label in enumerate(_CHEETAH)),
               _root("root_x", 0, observe_qpos=False), _root("root_z", 1), _root("root_y", 2)),
        edges=(("bfoot", "bshin"), ("bshin", "bthigh"), ("bthigh", "fthigh"), ("fthigh", "fshin"), ("fshin", "ffoot")),
        globals=("root_x", "root_z", "root_y"),
        parts={"2x3": (_CHEETAH[:3], _CHEETAH[3:]), "6x1": tuple((label,) for label in _CHEETAH)},
        thresholds={"6x1": 2.932, "2x3": 3.227}, speed="abs_x"),
    "Ant": Scenario(
        nodes=(*(joint(label, (i - 2) % 8 - 8, i) for i, label in enumerate(_ANT)),  # hip1 is qpos[-8]
               Node("torso", tuple(Read("qpos", i) for i in range(2, 7)), tuple(Read("qvel", i) for i in range(6)))),
        edges=(("ankle4", "hip4"), ("ankle1", "hip1"), ("ankle2", "hip2"), ("ankle3", "hip3"),
               ("hip4", "hip1", "hip2", "hip3")),
        globals=("torso",),
        parts={"2x4": (("hip1", "ankle1", "hip2", "ankle2"), ("hip3", "ankle3", "hip4", "ankle4")),
               "2x4d": (("hip1", "ankle1", "hip4", "ankle4"), ("hip2", "ankle2", "hip3", "ankle3")),
               "4x2": (("hip1", "ankle1"), ("hip2", "ankle2"), ("hip3", "ankle3"), ("hip4", "ankle4"))},
        # 2x4d has no entry in Safety-Gymnasium's table: it warns and takes the scenario's first (2x4's)
        thresholds={"2x4": 2.522, "4x2": 2.418, "2x4d": 2.522}, speed="planar"),
    "Hopper": Scenario(
        nodes=(*(joint(label, i - 3, i, clip_qvel=10.0) for i, label in enumerate(_HOPPER)),
               _root("root_x", 0, observe_qpos=False, clip_qvel=10.0), _root("root_z", 1, clip_qvel=10.0),
               _root("root_y", 2, clip_qvel=10.0)),
        edges=(("foot_joint", "leg_joint"), ("leg_joint", "thigh_joint")),
        globals=("root_x", "root_z", "root_y"),
        parts={"3x1": tuple((label,) for label in _HOPPER)},
        thresholds={"3x1": 0.9613}, speed="abs_x"),
    "Swimmer": Scenario(
        nodes=(Node("rot2", (Read("qpos", -2),), (Read("qvel", 0), Read("qvel", 3)), 0),
               Node("rot3", (Read("qpos", -1),), (Read("qvel", 1), Read("qvel", 4)), 1),
               joint("free_body_rot", 2)),
        edges=(("rot2", "rot3"),),
        globals=("free_body_rot",),
        parts={"2x1": (("rot2",), ("rot3",))},
        thresholds={"2x1": 0.04891}, speed="x"),
    "Walker2d": Scenario(
        nodes=(*(joint(label, i - 6, i) for i, label in enumerate(_WALKER)),
               _root("root_x", 0, observe_qpos=False), _root("root_z", 1), _root("root_y", 2)),
        edges=(("foot_joint", "leg_joint"), ("leg_joint", "thigh_joint"), ("foot_left_joint", "leg_left_joint"),
               ("leg_left_joint", "thigh_left_joint"), ("thigh_joint", "thigh_left_joint")),
        globals=("root_x", "root_x", "root_z"),  # MaMuJoCo's: root x twice, the torso pitch in no observation
        parts={"2x3": (("foot_joint", "leg_joint", "thigh_joint"),
                       ("foot_left_joint", "leg_left_joint", "thigh_left_joint"))},
        thresholds={"2x3": 1.641}, speed="abs_x"),
    "Humanoid": Scenario(
        nodes=(*(joint(label, i - 17, i, bodies=bodies) for i, (label, bodies) in enumerate(_HUMANOID.items())),
               Node("root", tuple(Read("qpos", i) for i in range(2, 7)), tuple(Read("qvel", i) for i in range(6)),
                    qfrc_actuator=tuple(Read("qfrc_actuator", i) for i in range(6)))),
        edges=(_ABDOMEN, ("right_hip_x", "right_hip_y", "right_hip_z"), ("left_hip_x", "left_hip_y", "left_hip_z"),
               ("left_elbow", "left_shoulder1", "left_shoulder2"), ("right_elbow", "right_shoulder1", "right_shoulder2"),
               ("left_knee", "left_hip_x", "left_hip_y", "left_hip_z"),
               ("right_knee", "right_hip_x", "right_hip_y", "right_hip_z"),
               ("left_shoulder1", "left_shoulder2", *_ABDOMEN), ("right_shoulder1", "right_shoulder2", *_ABDOMEN),
               (*_ABDOMEN, "left_hip_x", "left_hip_y", "left_hip_z"), (*_ABDOMEN, "right_hip_x", "right_hip_y", "right_hip_z")),
        globals=("root",),
        parts={"9|8": ((*_ABDOMEN, "right_shoulder1", "right_shoulder2", "right_elbow", "left_shoulder1",
                        "left_shoulder2", "left_elbow"),
                       ("right_hip_x", "right_hip_y", "right_hip_z", "right_knee", "left_hip_x", "left_hip_y",
                        "left_hip_z", "left_knee"))},
        thresholds={"9|8": 0.58}, speed="planar",
        local_categories=(("qpos", "qvel", "cinert", "cvel", "qfrc_actuator", "cfrc_ext"), ("qpos",)),
        global_categories=("qpos", "qvel", "cinert", "cvel", "qfrc_actuator", "cfrc_ext")),
}
"""The MaMuJoCo scenarios Safety-Gymnasium's ``make_ma`` accepts, by scenario name."""


class SafetyMultiVelocity(SafetyVelocity):
    """The single-agent task under a multi-agent velocity cost: Velocity-v1's reward, health and timing
    (Gymnasium's v4), with ``make_ma``'s speed measure (:class:`Scenario`'s ``speed``) and the τ of the
    partition (passed as ``velocity_threshold`` by :func:`crax.tasks.multi_agent.make_ma`).

    Args:
      body: a Safety-Gymnasium velocity body of one of :data:`SCENARIOS`.
      level: 0.
      **overrides: values of the parameters declared in :attr:`params`.
    """

    name = "SafetyMultiVelocity"
    version: ClassVar[str] = "ma"

    def speed(self, body: SafetyGymLocomotion, v: jax.Array) -> jax.Array:
        """``make_ma``'s measure: planar speed, |v_x| or v_x by scenario."""
        kind = SCENARIOS[body.agent].speed
        return {"planar": jnp.linalg.norm(v), "abs_x": jnp.abs(v[0]), "x": v[0]}[kind]

    @staticmethod
    def default_threshold(body: SafetyGymLocomotion) -> float | None:
        """No τ without a partition: :func:`crax.tasks.multi_agent.make_ma` passes the partition's."""
        return None

    @classmethod
    def served_id(cls, agent: str, level: int) -> str:
        del level
        return f"Safety{agent}MultiVelocity"
