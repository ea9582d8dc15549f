"""Checkpoints written in an older layout, read into today's (``load_checkpoint``'s ``upgrade``).

Since the training stack stopped carrying the inert scene bodies (docs/DECISIONS.md, decision 73), it
carries each env's physics state as a
:class:`~crax.core.physics_model.PackedData` (``env/data/physics/qpos``, ``env/data/mocap_pos``...), where
checkpoints written before it hold the scene's ``Data`` (``env/data/qpos``...). :func:`packed_data`
packs those as the stack would have (:meth:`~crax.core.physics_model.PhysicsModel.pack`, which an unpack
inverts to the bit), so a run interrupted before the change resumes where it stopped. Since then the
stack carries only MuJoCo's state and the fields its step reads of the physics model's ``Data``, to
keep it small (docs/DECISIONS.md, decision 74); a checkpoint holding more (every field, as the first packed stacks and an
upgraded one do) is read for those, the template naming what it takes.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import jax
import numpy as np

from crax.core.env import Env
from crax.core.physics_model import PhysicsModel
from crax.runs.checkpoint import Upgrade, leaf_name

_PROBE = "qpos"  # a field every Data has: where it is stored, a Data is


def packed_data(envs: Sequence[Env]) -> Upgrade | None:
    """The upgrade of checkpoints holding the scene's ``Data`` of one of ``envs`` (a run's envs, one
    per curriculum stage) to :class:`~crax.core.physics_model.PackedData`; None when no env has a physics
    model (nothing was ever packed). A stored ``Data`` is packed with the env whose scene it fits;
    one that fits none is left for the template's check to name."""
    models = [(env, model) for env in envs
              if isinstance(model := getattr(env.unwrapped, "physics_model", None), PhysicsModel)]
    if not models:
        return None

    @functools.cache
    def scenes():  # traced only for a checkpoint of the old layout
        out = []
        for env, model in models:
            data = jax.eval_shape(env.unwrapped.reset, jax.random.key(0)).data
            paths, treedef = jax.tree_util.tree_flatten_with_path(data)
            out.append((model, [leaf_name(p) for p, _ in paths], [leaf.shape for _, leaf in paths], treedef))
        return out

    def upgrade(stored: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        if any(k.endswith(f"/physics/{_PROBE}") for k in stored):
            return stored  # today's layout
        prefixes = [k[: -len(_PROBE)] for k in stored if k.endswith(f"/{_PROBE}")]
        for prefix in prefixes:
            for model, names, shapes, treedef in scenes():
                if any(prefix + n not in stored or stored[prefix + n].shape[stored[prefix + n].ndim - len(s):] != s
                       for n, s in zip(names, shapes, strict=True)):
                    continue
                leaves = [stored[prefix + n] for n in names]
                lead = leaves[0].shape[: leaves[0].ndim - len(shapes[0])]  # seeds, envs
                batch = int(np.prod(lead))
                data = jax.tree.unflatten(treedef, [x.reshape(batch, *s) for x, s in zip(leaves, shapes, strict=True)])
                packed = jax.jit(jax.vmap(model.pack))(data)
                for n in names:
                    del stored[prefix + n]
                for path, leaf in jax.tree_util.tree_flatten_with_path(packed)[0]:
                    stored[prefix + leaf_name(path)] = np.asarray(leaf).reshape(*lead, *leaf.shape[1:])
                break
        return stored

    return upgrade


__all__ = ["packed_data"]
