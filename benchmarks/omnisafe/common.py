"""What every OmniSafe recorder shares: where the recorded data goes and how it is written.

The recorders run OmniSafe 0.5's own classes (in a Python 3.10 environment with ``omnisafe==0.5.0``
and torch from the package index, never a crax dependency) on small fixed inputs and write what
OmniSafe computes from them, for crax's ``test_*omnisafe*`` tests (``tests/learners/omnisafe_data.py``
reads it back). Make the environment and run a recorder from the repository root::

    ~/.pyenv/versions/3.10.13/bin/python -m venv /work/omnisafe-venv
    /work/omnisafe-venv/bin/pip install omnisafe==0.5.0 "numpy<2"
    /work/omnisafe-venv/bin/python benchmarks/omnisafe/<recorder>.py
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import numpy as np

DATA = pathlib.Path(__file__).resolve().parents[2] / "tests" / "learners" / "data" / "omnisafe"
"""Where the recorded files go, one JSON file per recorder topic."""


def plain(value: Any) -> Any:
    """``value`` with tensors and arrays as nested lists of floats (JSON's numbers), recursively."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray | np.generic):
        return value.tolist()
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def save(name: str, data: dict[str, Any], *, source: str) -> pathlib.Path:
    """Writes ``data`` to ``DATA/<name>.json`` with the versions it was recorded with and ``source``
    (the recorder's path), and returns the path."""
    import omnisafe
    import torch

    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"{name}.json"
    record = {"omnisafe": omnisafe.__version__, "torch": torch.__version__, "source": source, **plain(data)}
    path.write_text(json.dumps(record, indent=1) + "\n")
    return path


class Logger:
    """What OmniSafe's algorithms call on their logger, for an algorithm object made without one:
    ``store`` keeps the last value of each scalar key (in ``stored``), ``log`` and ``register_key`` do
    nothing, ``get_stats("Metrics/EpCost")`` gives the episode cost an update reads."""

    def __init__(self, ep_cost: float = 0.0):
        self.ep_cost = ep_cost
        self.stored: dict[str, Any] = {}

    def store(self, data: dict[str, Any]) -> None:
        for key, value in data.items():
            if hasattr(value, "numel"):
                if value.numel() != 1:
                    continue
                value = float(value.detach())
            self.stored[key] = value

    def log(self, *_: Any, **__: Any) -> None:
        pass

    def register_key(self, *_: Any, **__: Any) -> None:
        pass

    def get_stats(self, key: str) -> tuple[float]:
        assert key == "Metrics/EpCost", key
        return (self.ep_cost,)


def on_policy_algorithm(cls: type, yaml: str, actor: Any, ep_cost: float = 0.0) -> Any:
    """An OmniSafe on-policy algorithm object without an environment: its yaml's defaults, ``actor``
    as its actor-critic's actor, a :class:`Logger` that reports ``ep_cost``."""
    import torch
    from omnisafe.utils.config import get_default_kwargs_yaml

    algo = object.__new__(cls)
    algo._cfgs = get_default_kwargs_yaml(yaml, None, "on-policy")
    algo._actor_critic = torch.nn.Module()
    algo._actor_critic.actor = actor
    algo._logger = Logger(ep_cost)
    algo._device = torch.device("cpu")
    return algo


def policy_batch(actor: Any, n: int, obs_size: int, action_size: int, logp_noise: float) -> dict[str, Any]:
    """``n`` states, actions sampled from ``actor``, stored log-probabilities ``logp_noise`` off the actor's
    (so the ratios are not all 1), standardized reward advantages and centred cost advantages partly along
    them (reward and cost rise together, so a constraint binds)."""
    import torch

    gen = torch.Generator().manual_seed(1)
    obs = torch.randn(n, obs_size, generator=gen)
    with torch.no_grad():
        dist = actor(obs)
        act = dist.mean + dist.stddev * torch.randn(n, action_size, generator=gen)
        logp = dist.log_prob(act).sum(-1) + logp_noise * torch.randn(n, generator=gen)
    adv_r = torch.randn(n, generator=gen)
    adv_r = (adv_r - adv_r.mean()) / (adv_r.std() + 1e-8)
    adv_c = 0.3 * torch.relu(adv_r + 0.5 * torch.randn(n, generator=gen))
    return {"obs": obs, "act": act, "logp": logp, "adv_r": adv_r, "adv_c": adv_c - adv_c.mean()}
