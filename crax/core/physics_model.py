"""The physics model: an env's scene without its inert bodies, which MJX need not step.

A task's scene carries many mocap bodies that take no part in the dynamics: hazard zones, goals,
their ray-cast proxies, drawn only and read by sensors and costs. MJX's step still runs every body
and geom through its kinematics, inertia and velocity passes at every physics substep: PointGoal1's
13 zone and goal bodies (26 geoms) made most of its physics step (docs/DECISIONS.md, decision 71,
has the measurement). :class:`PhysicsModel` steps a copy of the model without them and writes the result
back into the scene's ``Data``, so an env's state keeps every field at the scene model's size and
ids.

A body is *inert* when it is a named mocap body of the world with no child, no geom that can collide
(``contype`` and ``conaffinity`` both 0, in no explicit contact pair) and nothing else that refers
to it or its geoms and sites (equality constraints, tendons, actuators, sensors, cameras, lights,
contact exclusions). Removing such bodies leaves the degrees of freedom, constraints and contact
pairs as they were, in the same order: the stepped arithmetic is the scene model's.

After the physics, :meth:`PhysicsModel.from_physics` puts the inert bodies' positions, orientations
and inertias (``xpos``, ``xquat``, ``xmat``, ``xipos``, ``ximat``, their geoms' and sites'
``*_xpos``/``*_xmat``, ``subtree_com``, ``cinert``, ``crb``) where MuJoCo's forward pass would: from
``mocap_pos`` and ``mocap_quat``, once an env step instead of once a substep. Their other per-body
fields (``cvel``, ``cacc``, ``cfrc_*``, ``subtree_linvel``, ``subtree_angmom``) keep the values a
forward pass gives a mocap body of the world, those of ``mjx.make_data`` (nothing in a forward pass
moves them); the world body's ``subtree_com`` counts them again.

:class:`PackedData` is the physics model's ``Data`` plus the inert bodies' mocap poses: all an env's
scene ``Data`` is made of (:meth:`PhysicsModel.pack`, :meth:`PhysicsModel.unpack`), a third of its
size for PointGoal1. The training stack carries it (:class:`crax.core.env.PackedState`), with only
MuJoCo's state (:data:`STATE_FIELDS`) and the fields the env's step reads of the physics model's
``Data``: a step computes every other field again, which costs less than moving it (docs/DECISIONS.md,
decisions 73 and 74).
"""

from __future__ import annotations

import warnings
from collections.abc import Collection
from typing import TYPE_CHECKING, Any, Self

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
from flax import struct

from crax.core.mjx import mjx, mjx_math, mjx_support

# mjData's per-entity fields, by the entity whose count is their leading axis
_KINDS = ("body", "geom", "site", "mocap", "cam", "light")
_CONTACT_GEOM_FIELDS = ("geom1", "geom2", "geom")
# mjtState's components whose mjData field is not named after them
_STATE_FIELD = {"WARMSTART": "qacc_warmstart", "PLUGIN": "plugin_state"}


def _state_fields() -> frozenset[str]:
    whole = int(mujoco.mjtState.mjSTATE_INTEGRATION)
    parts = [(name.removeprefix("mjSTATE_"), int(bit)) for name, bit in mujoco.mjtState.__members__.items()
             if name.startswith("mjSTATE_")]
    names = {_STATE_FIELD.get(name) or name.lower() for name, bit in parts if bit and bit & (bit - 1) == 0 and bit & whole}
    return frozenset(names & set(mjx.Data.__annotations__))  # MJX has no flex plasticity


STATE_FIELDS = _state_fields()
"""MuJoCo's state (``mjSTATE_INTEGRATION``) as MJX's ``Data`` holds it: the fields a physics step reads
(``qpos``, ``qvel``, ``act``, ``qacc_warmstart``, ``ctrl``, ``mocap_pos``...); it computes every other
field from them (tests/test_physics_model.py steps a scene with the others set to NaN)."""


def field_name(path: tuple) -> str:
    """A ``Data`` leaf's field name from its tree path: ``qpos``, ``_impl.cacc``, ``_impl.contact.dist``."""
    return jax.tree_util.keystr(path).removeprefix(".")


def _runs(ids: np.ndarray) -> list[tuple[int, int]]:
    """``ids`` (increasing) as half-open ranges of consecutive ids."""
    runs: list[tuple[int, int]] = []
    for i in (int(i) for i in ids):
        if runs and runs[-1][1] == i:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    return runs


class _Rows:
    """Static rows of a leading axis, taken and put by slices: XLA's CPU code runs a gather or a
    scatter of constant indices several times slower than the slices and concatenations of the
    same rows (their consecutive runs; docs/DECISIONS.md, decision 71)."""

    def __init__(self, ids: np.ndarray):
        self.ids = np.asarray(ids, np.int32)
        self.runs = _runs(self.ids)

    def take(self, x: jax.Array) -> jax.Array:
        if len(self.runs) == 1 and self.runs[0] == (0, x.shape[0]):
            return x
        return jnp.concatenate([x[a:b] for a, b in self.runs]) if self.runs else x[:0]

    def put(self, x: jax.Array, rows: jax.Array) -> jax.Array:
        """``x`` with its rows ``ids`` replaced by ``rows`` (in order)."""
        parts, at, k = [], 0, 0
        for a, b in self.runs:
            parts += [x[at:a], rows[k:k + b - a]]
            at, k = b, k + b - a
        parts.append(x[at:])
        return jnp.concatenate([p for p in parts if p.shape[0]]) if self.runs else x


def inert_bodies(m: mujoco.MjModel) -> tuple[int, ...]:
    """Ids of ``m``'s inert bodies (the module docstring says which)."""
    children = set(int(p) for p in m.body_parentid[1:])
    referred: set[int] = set()

    def refer(objtype: int, objid: int) -> None:
        if objid < 0:
            return
        if objtype == mujoco.mjtObj.mjOBJ_BODY or objtype == mujoco.mjtObj.mjOBJ_XBODY:
            referred.add(int(objid))
        elif objtype == mujoco.mjtObj.mjOBJ_GEOM:
            referred.add(int(m.geom_bodyid[objid]))
        elif objtype == mujoco.mjtObj.mjOBJ_SITE:
            referred.add(int(m.site_bodyid[objid]))

    for i in range(m.neq):
        for objid in (m.eq_obj1id[i], m.eq_obj2id[i]):
            refer(int(m.eq_objtype[i]), int(objid))
    for i in range(m.nwrap):
        refer(int({mujoco.mjtWrap.mjWRAP_SITE: mujoco.mjtObj.mjOBJ_SITE, mujoco.mjtWrap.mjWRAP_SPHERE:
                   mujoco.mjtObj.mjOBJ_GEOM, mujoco.mjtWrap.mjWRAP_CYLINDER: mujoco.mjtObj.mjOBJ_GEOM}
                  .get(m.wrap_type[i], mujoco.mjtObj.mjOBJ_UNKNOWN)), int(m.wrap_objid[i]))
    trn = {mujoco.mjtTrn.mjTRN_SITE: mujoco.mjtObj.mjOBJ_SITE, mujoco.mjtTrn.mjTRN_BODY: mujoco.mjtObj.mjOBJ_BODY}
    for i in range(m.nu):
        for objid in m.actuator_trnid[i]:
            refer(int(trn.get(m.actuator_trntype[i], mujoco.mjtObj.mjOBJ_UNKNOWN)), int(objid))
    for i in range(m.nsensor):
        refer(int(m.sensor_objtype[i]), int(m.sensor_objid[i]))
        refer(int(m.sensor_reftype[i]), int(m.sensor_refid[i]))
    for g in (*m.pair_geom1, *m.pair_geom2):
        refer(mujoco.mjtObj.mjOBJ_GEOM, int(g))
    for signature in m.exclude_signature:
        referred.update({int(signature) >> 16, int(signature) & 0xFFFF})
    referred.update(int(b) for b in m.cam_bodyid)
    referred.update(int(b) for b in m.light_bodyid)
    referred.update(int(b) for b in m.cam_targetbodyid if b >= 0)
    referred.update(int(b) for b in m.light_targetbodyid if b >= 0)

    collides = np.zeros(m.nbody, bool)
    np.logical_or.at(collides, m.geom_bodyid, (m.geom_contype != 0) | (m.geom_conaffinity != 0))
    return tuple(b for b in range(1, m.nbody)
                 if m.body_mocapid[b] >= 0 and m.body_parentid[b] == 0 and b not in children
                 and b not in referred and not collides[b] and m.body(b).name)


def _kept(m_full: mujoco.MjModel, m_phys: mujoco.MjModel, kind: str, removed_bodies: set[int]) -> np.ndarray:
    """Ids in ``m_full`` of the ``kind`` entities ``m_phys`` keeps, in order."""
    if kind == "body":
        ids = [b for b in range(m_full.nbody) if b not in removed_bodies]
    elif kind == "mocap":
        ids = [int(m_full.body_mocapid[b]) for b in range(m_full.nbody)
               if b not in removed_bodies and m_full.body_mocapid[b] >= 0]
        ids.sort()
    else:
        owner = getattr(m_full, f"{kind}_bodyid")
        ids = [i for i in range(len(owner)) if int(owner[i]) not in removed_bodies]
    kept = np.asarray(ids, np.int32)
    if len(kept) != getattr(m_phys, f"n{kind}"):
        raise AssertionError(f"the physics model keeps {getattr(m_phys, f'n{kind}')} {kind} entities, expected {len(kept)}")
    return kept


@struct.dataclass
class PackedData:
    """An env's scene ``Data`` as the training stack carries it: the physics model's ``Data`` and the
    inert bodies' mocap poses, from which :meth:`PhysicsModel.unpack` builds every field of the scene's.

    Attributes:
      physics: the physics model's ``Data`` (its ids: ``physics.xpos[i]`` is the physics model's body
        ``i``, :meth:`PhysicsModel.kept` maps them to the scene's; its contacts name its geoms), but for
        the world body's ``subtree_com``, which is the scene's (it counts the inert bodies). Packed with
        ``fields``, the fields left out are None (:meth:`PhysicsModel.pack`).
      mocap_pos: the inert bodies' ``mocap_pos`` rows, in the scene's mocap order, shape ``(n_inert, 3)``.
      mocap_quat: their ``mocap_quat`` rows, shape ``(n_inert, 4)``.
    """

    physics: mjx.Data
    mocap_pos: jax.Array
    mocap_quat: jax.Array

    if TYPE_CHECKING:  # flax.struct.dataclass adds replace() at runtime; pyright cannot see it
        def replace(self, **updates: Any) -> Self: ...


class PhysicsModel:
    """The model an env's physics steps: its scene's model without the inert bodies.

    Attributes:
      mj_model: the compiled physics model (the scene's model itself when nothing is inert).
      mjx_model: its MJX model.
      inert: ids of the scene's bodies left out (empty when the two models are one).
      is_jax: whether it runs MJX's JAX implementation (inert bodies are left out of that one only, and
        only its ``Data`` may be packed without some fields: :meth:`pack`).
    """

    def __init__(self, spec: mujoco.MjSpec, mj_model: mujoco.MjModel, mjx_model: mjx.Model):
        self.is_jax = isinstance(mjx_model._impl, mjx.ModelJAX)
        self.inert = inert_bodies(mj_model) if self.is_jax else ()
        self.mj_model, self.mjx_model = mj_model, mjx_model
        self._scene_mjx = mjx_model
        if not self.inert:
            return
        physics_spec = spec.copy()
        for b in self.inert:
            physics_spec.delete(physics_spec.body(mj_model.body(b).name))
        try:
            physics_model = physics_spec.compile()
        except Exception as e:  # noqa: BLE001  (MuJoCo raises bare ValueError/RuntimeError) the scene is stepped whole
            warnings.warn(f"{spec.modelname}: stepping the whole scene; MuJoCo could not compile it without its "
                          f"inert bodies ({type(e).__name__}: {e})", stacklevel=2)
            self.inert = ()
            return
        self.mj_model, self.mjx_model = physics_model, mjx.put_model(physics_model, impl="jax")
        removed = set(self.inert)
        self._kept = {kind: _kept(mj_model, self.mj_model, kind, removed) for kind in _KINDS}
        self._geom_to_physics = np.full(mj_model.ngeom, -1, np.int32)
        self._geom_to_physics[self._kept["geom"]] = np.arange(self.mj_model.ngeom, dtype=np.int32)
        self._leaf_kinds = self._classify(mj_model, mjx_model)
        self._rows = {kind: _Rows(self._kept[kind]) for kind in _KINDS}
        bodies = np.asarray(self.inert, np.int32)
        mocap = np.asarray(mj_model.body_mocapid[bodies], np.int32)
        if np.any(np.diff(mocap) <= 0):
            raise AssertionError("the scene's mocap ids do not follow its body order")
        self._inert_rows = {"body": _Rows(bodies), "mocap": _Rows(mocap)}
        self._body_local = (mj_model.body_ipos[bodies], mj_model.body_iquat[bodies])
        self._body_mass = mj_model.body_mass[bodies]
        self._body_inertia = mj_model.body_inertia[bodies]
        self._physics_mass = float(self.mj_model.body_mass.sum())
        self._parts: dict[str, tuple[_Rows, np.ndarray, tuple[np.ndarray, np.ndarray]]] = {}
        for kind in ("geom", "site"):  # the inert bodies' geoms and sites: ids, owners (rows of ``bodies``), local poses
            owner = getattr(mj_model, f"{kind}_bodyid")
            ids = np.flatnonzero(np.isin(owner, bodies)).astype(np.int32)
            local = (getattr(mj_model, f"{kind}_pos")[ids], getattr(mj_model, f"{kind}_quat")[ids])
            self._parts[kind] = (_Rows(ids), np.searchsorted(bodies, owner[ids]), local)

    def kept(self, kind: str) -> np.ndarray:
        """Ids in the scene model of the ``kind`` entities (``body``, ``geom``, ``site``, ``mocap``, ``cam``,
        ``light``) the physics model keeps, in the physics model's order."""
        if kind not in _KINDS:
            raise ValueError(f"kind must be one of {', '.join(_KINDS)}, got {kind!r}")
        if not self.inert:
            return np.arange(getattr(self.mj_model, f"n{kind}"), dtype=np.int32)
        return self._kept[kind]

    def _classify(self, m_full: mujoco.MjModel, mjx_full: mjx.Model) -> list[str | None]:
        """For each leaf of a ``Data`` (flattened): the entity kind of its leading axis where the
        two models' data differ in it, else None (the physics model's leaf is the whole field)."""
        full = jax.eval_shape(mjx.make_data, mjx_full)
        phys = jax.eval_shape(mjx.make_data, self.mjx_model)
        full_leaves, tree = jax.tree_util.tree_flatten_with_path(full)
        phys_leaves = jax.tree.leaves(phys)
        if len(full_leaves) != len(phys_leaves) or tree != jax.tree.structure(phys):
            raise AssertionError("the physics model's Data differs in structure from the scene model's")
        kinds: list[str | None] = []
        for (path, f), p in zip(full_leaves, phys_leaves, strict=True):
            if f.shape == p.shape:
                kinds.append(None)
                continue
            name = jax.tree_util.keystr(path)
            fits = [k for k in _KINDS if f.shape[1:] == p.shape[1:]
                    and (f.shape[0], p.shape[0]) == (getattr(m_full, f"n{k}"), getattr(self.mj_model, f"n{k}"))]
            if len(fits) > 1:  # equal counts: the field's name says (geom_xpos, site_xmat, mocap_pos...)
                fits = [k for k in fits if name.split(".")[-1].startswith(f"{k}_")] or ["body"]
            if len(fits) != 1:
                raise AssertionError(f"cannot tell which entities Data field {name} is indexed by "
                                     f"({f.shape} in the scene model, {p.shape} in the physics model)")
            kinds.append(fits[0])
        return kinds

    def to_physics(self, data: mjx.Data) -> mjx.Data:
        """The physics model's ``Data`` for a scene ``data``."""
        if not self.inert:
            return data
        out = [leaf if kind is None else self._rows[kind].take(leaf)
               for leaf, kind in zip(jax.tree.leaves(data), self._leaf_kinds, strict=True)]
        return self._map_contact_geoms(jax.tree.unflatten(jax.tree.structure(data), out), self._geom_to_physics)

    def from_physics(self, data: mjx.Data, physics: mjx.Data, *, kinematics: bool = True) -> mjx.Data:
        """``data`` with the physics model's fields written back; with ``kinematics``, the inert bodies'
        positions and orientations computed from their mocap poses (the module docstring says which)."""
        if not self.inert:
            return physics
        physics = self._map_contact_geoms(physics, self._kept["geom"])
        out = [phys if kind is None else self._rows[kind].put(full, phys)
               for full, phys, kind in zip(jax.tree.leaves(data), jax.tree.leaves(physics), self._leaf_kinds, strict=True)]
        data = jax.tree.unflatten(jax.tree.structure(data), out)
        return self._inert_kinematics(data) if kinematics else data

    def pack(self, data: mjx.Data, fields: Collection[str] | None = None) -> PackedData:
        """The :class:`PackedData` of a scene ``data`` (one env's; vmap it for a batch); with ``fields``
        (names as :func:`field_name` gives them), the physics model's ``Data`` keeps only those, the
        others None (:meth:`physics_data` fills them in)."""
        physics = self.to_physics(data)
        if fields is not None:
            if not self.is_jax:
                raise ValueError("only a JAX physics model's Data packs without some fields (Warp keeps its buffers)")
            keep = frozenset(fields)
            paths, tree = jax.tree_util.tree_flatten_with_path(physics)
            physics = jax.tree.unflatten(tree, [leaf if field_name(p) in keep else None for p, leaf in paths])
        if not self.inert:
            return PackedData(physics, data.mocap_pos[:0], data.mocap_quat[:0])
        mocap = self._inert_rows["mocap"]
        return PackedData(physics, mocap.take(data.mocap_pos), mocap.take(data.mocap_quat))

    def physics_data(self, packed: PackedData) -> mjx.Data:
        """The physics model's whole ``Data`` of ``packed``: the fields its pack left out at
        ``mjx.make_data``'s values (one env's; vmap it for a batch)."""
        leaves = jax.tree.leaves(packed.physics, is_leaf=lambda x: x is None)
        if all(leaf is not None for leaf in leaves):
            return packed.physics
        initial = mjx.make_data(self.mjx_model)
        if len(leaves) != len(jax.tree.leaves(initial)):
            raise ValueError(f"packed.physics has {len(leaves)} fields; this physics model's Data has "
                             f"{len(jax.tree.leaves(initial))}")
        return jax.tree.map(lambda init, leaf: init if leaf is None else leaf, initial, packed.physics,
                            is_leaf=lambda x: x is None)

    def unpack(self, packed: PackedData, forward: bool = False) -> mjx.Data:
        """The scene's ``Data`` of ``packed``: the physics model's fields, the inert bodies' mocap poses and
        what a forward pass makes of them (the module docstring says which). Fields the pack left out
        hold ``mjx.make_data``'s values; with ``forward``, MJX's forward pass computes every field
        from the packed state instead (positions, contacts, forces: what a reader of a training stack's
        state wants, one forward pass a call). Inside a jitted step, XLA computes only the fields the
        step reads."""
        physics = self.physics_data(packed)
        if not self.inert:
            data = physics
        else:
            scene = mjx.make_data(self._scene_mjx)  # the rows nothing in a forward pass moves (constants)
            mocap = self._inert_rows["mocap"]
            scene = scene.replace(mocap_pos=mocap.put(scene.mocap_pos, packed.mocap_pos),
                                  mocap_quat=mocap.put(scene.mocap_quat, packed.mocap_quat))
            # packed.physics came from a scene's Data: its world subtree_com already counts the inert bodies
            data = self._inert_kinematics(self.from_physics(scene, physics, kinematics=False), world=False)
        return mjx.forward(self._scene_mjx, data) if forward else data

    def scene_mocap(self, packed: PackedData) -> tuple[np.ndarray, np.ndarray]:
        """The scene's ``mocap_pos`` and ``mocap_quat`` of ``packed`` as host arrays (any leading axes)."""
        phys_pos, phys_quat, pos, quat = (np.asarray(x) for x in jax.device_get(
            (packed.physics.mocap_pos, packed.physics.mocap_quat, packed.mocap_pos, packed.mocap_quat)))
        if not self.inert:
            return phys_pos, phys_quat
        lead, n = pos.shape[:-2], self._scene_mjx.nmocap
        out_pos, out_quat = np.empty((*lead, n, 3), pos.dtype), np.empty((*lead, n, 4), quat.dtype)
        out_pos[..., self._kept["mocap"], :], out_quat[..., self._kept["mocap"], :] = phys_pos, phys_quat
        out_pos[..., self._inert_rows["mocap"].ids, :], out_quat[..., self._inert_rows["mocap"].ids, :] = pos, quat
        return out_pos, out_quat

    @staticmethod
    def _map_contact_geoms(data: mjx.Data, table: np.ndarray) -> mjx.Data:
        """``data`` with its contacts' geom ids looked up in ``table`` (from one model's ids to the other's)."""
        impl = data._impl
        contact = getattr(impl, "contact", None)
        if contact is None:
            return data
        ids = jnp.asarray(table)

        def look_up(g: jax.Array) -> jax.Array:  # -1 (no geom: an empty contact slot) stays -1
            return jnp.where(g >= 0, ids[jnp.maximum(g, 0)], g)

        mapped = {f: look_up(getattr(contact, f)) for f in _CONTACT_GEOM_FIELDS}
        return data.replace(_impl=impl.replace(contact=contact.replace(**mapped)))

    def _inert_kinematics(self, d: mjx.Data, world: bool = True) -> mjx.Data:
        """What MuJoCo's kinematics, ``subtree_com`` and inertias give the inert bodies (mocap bodies of the
        world); with ``world``, the world body's ``subtree_com`` too, from the physics model's."""
        bodies = self._inert_rows["body"]
        mocap = self._inert_rows["mocap"]
        pos = mocap.take(d.mocap_pos)
        quat = jax.vmap(mjx_math.normalize)(mocap.take(d.mocap_quat))
        local = jax.vmap(mjx_support.local_to_global)
        xipos, ximat = local(pos, quat, *(jnp.asarray(v) for v in self._body_local))
        mass = jnp.asarray(self._body_mass, xipos.dtype)[:, None]
        com = jnp.where(mass < mujoco.mjMINVAL, xipos, xipos * mass / jnp.maximum(mass, mujoco.mjMINVAL))
        # the world's subtree holds every body: the physics model's centre of mass and theirs
        total = self._physics_mass + float(self._body_mass.sum())
        world_com = d.subtree_com[0]
        if world:
            world_com = ((world_com * self._physics_mass + jnp.sum(xipos * mass, axis=0)) / total
                         if total >= mujoco.mjMINVAL else d.xipos[0])
        # a mocap body of the world is its own root and has no child: its cinert is about its own centre
        # of mass, and its composite inertia (crb) is its cinert
        inertia = jnp.asarray(self._body_inertia, xipos.dtype)
        cinert = jax.vmap(_cinert)(inertia, ximat, xipos - com, mass[:, 0])
        impl = d._impl
        assert isinstance(impl, mjx.DataJAX)  # inert bodies are left out of JAX physics only
        impl = impl.replace(cinert=bodies.put(impl.cinert, cinert), crb=bodies.put(impl.crb, cinert))
        d = d.replace(xpos=bodies.put(d.xpos, pos), xquat=bodies.put(d.xquat, quat),
                      xmat=bodies.put(d.xmat, jax.vmap(mjx_math.quat_to_mat)(quat)),
                      xipos=bodies.put(d.xipos, xipos), ximat=bodies.put(d.ximat, ximat),
                      subtree_com=bodies.put(d.subtree_com, com).at[0].set(world_com), _impl=impl)
        for kind, (rows, owner, (lpos, lquat)) in self._parts.items():
            if len(rows.ids):
                xpos, xmat = local(_expand(pos, owner), _expand(quat, owner), jnp.asarray(lpos), jnp.asarray(lquat))
                d = d.replace(**{f"{kind}_xpos": rows.put(getattr(d, f"{kind}_xpos"), xpos),
                                 f"{kind}_xmat": rows.put(getattr(d, f"{kind}_xmat"), xmat)})
        return d


def _cinert(inertia: jax.Array, ximat: jax.Array, offset: jax.Array, mass: jax.Array) -> jax.Array:
    """A body's ``cinert`` as MJX's ``com_pos`` computes it: its inertia turned into the world frame and
    moved by ``offset`` (from its root's subtree centre of mass), the upper triangle, mass × offset, mass."""
    h = jnp.cross(offset, -jnp.eye(3))
    inert = mjx_math.matmul_unroll(ximat * inertia, ximat.T)
    inert += mjx_math.matmul_unroll(h, h.T) * mass
    inert = inert[([0, 1, 2, 0, 0, 1], [0, 1, 2, 1, 2, 2])]
    return jnp.concatenate([inert, offset * mass, mass[None]])


def _expand(x: jax.Array, owner: np.ndarray) -> jax.Array:
    """``x[owner]`` for a non-decreasing static ``owner``, by broadcasts of ``x``'s rows (no gather)."""
    rows, counts = np.unique(owner, return_counts=True)
    groups: list[list[int]] = []  # consecutive rows repeated equally often: one broadcast each
    for k in range(len(rows)):
        if groups and rows[k] == rows[groups[-1][-1]] + 1 and counts[k] == counts[groups[-1][0]]:
            groups[-1].append(k)
        else:
            groups.append([k])
    pieces = []
    for g in groups:
        first, n, count = int(rows[g[0]]), len(g), int(counts[g[0]])
        pieces.append(jnp.broadcast_to(x[first:first + n, None], (n, count, *x.shape[1:])).reshape(n * count, *x.shape[1:]))
    return jnp.concatenate(pieces) if len(pieces) > 1 else pieces[0]
