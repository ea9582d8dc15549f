"""Hand-made run folders for study tests: config.json, results.json and metrics.jsonl as crax writes them."""

from __future__ import annotations

import json
from pathlib import Path


def write_run(run_dir: Path, learner: str, env: str, bound: float, returns=None, costs=None, *,
              curves=None, env_steps: int = 1000, tails=None) -> Path:
    """A run folder. ``returns``/``costs`` (per seed) give a results.json (none: an unfinished run);
    ``curves`` maps seed → [(step, return, cost), ...] for metrics.jsonl; ``tails`` (per seed,
    ``(over_bound, cost_cvar, cost_rate)``) the statistics a current evaluation adds (none: an older run)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    record = {"learner": learner, "env": env, "env_kwargs": {}, "config": {"safety_bound": bound}}
    (run_dir / "config.json").write_text(json.dumps(record))
    if returns is not None:
        final = [{"return": r, "cost": c, "length": 100.0, "policy": "stochastic", "safe": c < bound,
                  "stochastic": {"return": r, "cost": c}, "deterministic": {"return": r + 100, "cost": c + 100}}
                 for r, c in zip(returns, costs, strict=True)]
        for record, (over, cvar, rate) in zip(final, tails or [], strict=False):
            record["stochastic"].update(over_bound=over, cost_cvar=cvar)
            record["cost_rate"] = rate
        results = {"learner": learner, "env": env, "env_steps": env_steps, "safety_bound": bound,
                   "eval_policy": "stochastic", "final": final, "evals": []}
        (run_dir / "results.json").write_text(json.dumps(results))
    if curves is not None:
        lines = [json.dumps({"step": step, "seed": seed, "episode/return": r, "episode/cost": c, "train/loss": 0.0})
                 for seed, points in curves.items() for step, r, c in points]
        (run_dir / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    return run_dir
