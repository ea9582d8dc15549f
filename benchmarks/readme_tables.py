"""Regenerates the result tables of README.md and the docs pages from the files in ``benchmarks/results/``.

Usage::

    python benchmarks/readme_tables.py                            # rewrite README.md and docs/*.md in place
    python benchmarks/readme_tables.py --check                    # exit 1 if any of them is out of date
    python benchmarks/readme_tables.py --file docs/results.md     # only the pages named (repeatable)

Each generated table sits between ``<!-- table:NAME -->`` and ``<!-- /table:NAME -->`` in a page;
everything between the markers is replaced, and the same table may appear on several pages. Tables
are never typed by hand. Tables:

- ``bench-envs``: ``bench_envs.jsonl`` (latest row per env id and N), env steps/s and the ratio to bare
  physics, one row per env id.
- ``learning-<ENV>``: ``learning_<ENV>.json`` written by ``benchmarks/learning.py``.
- ``tau``: ``tau_<Body>.json`` written by ``benchmarks/measure_tau.py``.
- ``md-<STEM>``: ``<STEM>.md`` as written (``crax table``'s Markdown of a sweep, ``budgets.py``'s table);
  ``md-head-<STEM>``: the same file up to the end of its first table (``crax table``'s per-cell table).
- ``gym-vector``: ``gym_vector.jsonl`` (latest row per env and N) written by ``benchmarks/gym_vector.py``.
- ``relative-<BASE>-<N>``: from ``bench_envs.jsonl``, the latest sitting that measured ``BASE`` at N
  envs: every other env of that sitting at N, its steps/s and its env-step cost relative to BASE's.
- ``sg-speed``: ``sg_speed.jsonl`` (each id's latest sitting) written by ``benchmarks/sg_speed.py``: Safety-Gymnasium's
  steps/s against crax's for the same ids.
- ``throughput-<TAG>``: ``throughput.jsonl`` rows written by ``benchmarks/train_throughput.py --tag TAG``: each
  learner's iteration time against the first row's.
- ``gpu-relative-<BASE>-<N>``: the same from ``bench_envs_gpu.jsonl``, rows that ``benchmarks/bench_envs.py
  --out benchmarks/results/bench_envs_gpu.jsonl`` took on a GPU.
- ``ceiling-<N>``: from ``bench_envs.jsonl``, the latest sitting with C MuJoCo ceiling rows at N envs:
  each env's steps/s in crax and in C MuJoCo (``mujoco.rollout``, one thread per core), and crax / C.
  Without such a sitting it says so and names the command that fills it. ``gpu-ceiling-<N>``: the same from
  ``bench_envs_gpu.jsonl``. These and ``bench-envs`` read the rows of MJX's JAX implementation.
- ``warp-<N>``: from ``bench_envs.jsonl``, the latest sitting with ``physics="warp"`` rows at N envs
  (``bench_envs.py --physics jax warp``): each env's steps/s on MJX's JAX and Warp implementations and
  Warp / JAX. ``gpu-warp-<N>``: the same from ``bench_envs_gpu.jsonl``.
- ``cpo-step-check``: ``cpo_step_check.json`` written by ``benchmarks/cpo_step_check.py``: what CPO's
  linearized cost model predicted for its steps against the change measured in rollouts.
- ``cpo-constraint-value``: the CPO runs under ``cpo_constraint_value/`` and ``trust_region_sweep/tr-*-cpo``:
  final return and cost for each measure of CPO's constraint value.
- ``xla-flags``: ``xla_flags.jsonl`` (the latest sitting) written by ``benchmarks/xla_flags.py``: env and
  training steps/s under each XLA flag set against XLA's defaults.
- ``update-flops``: ``update_flops.jsonl`` (the latest day's row per learner and env) written by
  ``benchmarks/update_flops.py``: one PPO minibatch step's FLOP/s against a matmul peak in the same process.
- ``off-policy-layouts-<ENV>``: ``off_policy_layouts.jsonl`` (the latest sitting on ENV) written by
  ``benchmarks/off_policy_layouts.py``: each layout's steps/s and its final return and cost after the
  same wall-clock budget of training.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def pages() -> list[Path]:
    """Every page whose tables this tool fills: README.md and the Markdown pages of docs/."""
    return [README, *sorted(DOCS.glob("*.md"))]


def _rows(name: str, *, optional: bool = False) -> list[dict]:
    """The rows of ``benchmarks/results/<name>`` (JSON lines), oldest first; ``[]`` for a missing
    ``optional`` file (a table that says no sitting has filled it yet)."""
    path = RESULTS / name
    if optional and not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _bench_rows(source: str, physics: str = "jax", *, optional: bool = False) -> list[dict]:
    """``bench_envs.py`` rows of one MJX implementation (rows from before ``--physics`` ran on ``jax``)."""
    return [r for r in _rows(source, optional=optional) if r.get("physics", "jax") == physics]


def _minute(sitting: str) -> str:
    """A sitting's ISO time stamp to the minute, as the tables print it (``2026-11-29 14:36``)."""
    return sitting[:16].replace("T", " ")


def bench_envs_table() -> str:
    rows: dict[tuple[str, int], dict] = {}
    for r in _bench_rows("bench_envs.jsonl"):
        rows[(r["env"], r["num_envs"])] = r  # the latest measurement wins
    by_env: dict[str, dict[int, dict]] = defaultdict(dict)
    for (env, n), r in rows.items():
        by_env[env][n] = r
    sizes = sorted({n for _, n in rows})
    head = " | ".join(f"N={n}" for n in sizes)
    lines = [
        f"| body | env | env steps/s at {head} | env / physics cost at {head} | load (1 min) | CPU |",
        "|---|---|" + "---|" * (2 * len(sizes) + 2),
    ]
    order = sorted(by_env, key=lambda e: (next(iter(by_env[e].values()))["body"], e))
    for env in order:
        per_n = by_env[env]
        first = next(iter(per_n.values()))
        sps = " | ".join(f"{per_n[n]['env_steps_per_s']:,}" if n in per_n else "–" for n in sizes)
        ratio = " | ".join(f"{per_n[n]['ratio']:.2f}×" if n in per_n else "–" for n in sizes)
        loads = [per_n[n]["load_1min"] for n in sizes if n in per_n]
        cpus = sorted({per_n[n].get("cpu", "not recorded") for n in sizes if n in per_n})
        lines.append(f"| {first['body']} | {env} | {sps} | {ratio} | {min(loads):.1f}–{max(loads):.1f} | {', '.join(cpus)} |")
    lines[0] = lines[0].replace(f"env steps/s at {head}", " | ".join(f"steps/s N={n}" for n in sizes))
    lines[0] = lines[0].replace(f"env / physics cost at {head}", " | ".join(f"env/physics N={n}" for n in sizes))
    return "\n".join(lines)


def _cpu(row: dict) -> str:
    """`, <CPU model>` where the row recorded it (rows from before 2026-11-28 did not)."""
    return f", {row['cpu']}" if "cpu" in row else ""


def learning_table(env: str) -> str:
    data = json.loads((RESULTS / f"learning_{env}.json").read_text())
    bound = data.get("safety_bound", 25)
    steps = data["args"]["total_steps"]
    lines = [f"| learner | steps | judged policy | return R | cost C | safe (C < {bound:g}) | deterministic R / C | minutes "
             "| device | load (1 min) at end |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        spread = lambda k, r=r: f" ± {r[k + '_std']:.2f}" if k + "_std" in r else ""  # noqa: E731
        det = (f"{r['deterministic_return']:.2f} / {r['deterministic_cost']:.2f}" if "deterministic_return" in r
               else "(judged)")
        lines.append(f"| {r['learner']} | {steps:,} | {r.get('policy', 'deterministic')} | {r['return']:.2f}{spread('return')} | "
                     f"{r['cost']:.2f}{spread('cost')} | {'yes' if r['safe'] else 'no'} | {det} | {r['minutes']:.1f} | "
                     f"{r.get('device', 'CPU (2 cores)')} | {r['load_1min_at_end'] if 'load_1min_at_end' in r else '–'} |")
    return "\n".join(lines)


def sample_efficiency_table(env: str) -> str:
    path = RESULTS / f"sample_efficiency_{env}.json"
    if not path.exists():
        return (f"No sitting on {env} yet; `python benchmarks/sample_efficiency.py --env {env}` fills this table.")
    data = json.loads(path.read_text())
    ci = lambda r, k: (f" ({r[k + '_ci'][0]:.1f} to {r[k + '_ci'][1]:.1f})" if r[k + "_ci"] else "")  # noqa: E731
    lines = ["| learner | env steps per seed | training minutes | return (95% CI) | cost (95% CI) | safe | reaches the "
             "reference's return under the bound at | finished (load) |", "|---|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        hit = r["reaches_reference"]
        at = f"{hit['steps']:,} steps, {hit['minutes']:.1f} min" if hit else "not reached"
        lines.append(f"| {r['learner']} | {r['env_steps']:,} | {r['minutes']:.1f} | {r['return']:.1f}{ci(r, 'return')} | "
                     f"{r['cost']:.1f}{ci(r, 'cost')} | {'yes' if r['safe'] else 'no'} | {at} | "
                     + (f"{r['finished'].replace('T', ' ')} ({r['load_1min_now']:g}) |" if r["finished"]
                        else "not recorded (trained elsewhere) |"))
    a = data["args"]
    lines.append(f"\n{a['num_seeds']} seeds per learner on {data['rows'][0]['device']}; return and cost are the final evaluation's "
                 f"({data['rows'][0]['policy']} policy), the bound {data['safety_bound']:g}. The reference is "
                 f"`{a['reference']}`: its training-episode return averaged over its last {a['window_steps']:,.0f} "
                 f"steps, {data['target_return']:.1f}.")
    return "\n".join(lines)


def tau_table() -> str:
    lines = ["| body | PPO steps | mean speed reached (m/s) | base τ = 50% (m/s) | τ at levels 1 / 2 / 3 |",
             "|---|---|---|---|---|"]
    for path in sorted(RESULTS.glob("tau_*.json")):
        r = json.loads(path.read_text())
        tau = r["tau"]
        lines.append(f"| {r['body']} | {r['total_steps']:,} | {r['mean_speed']:.3f} | {tau:.3f} | "
                     f"{tau:.3f} / {0.75 * tau:.3f} / {0.5 * tau:.3f} |")
    return "\n".join(lines)


def gym_vector_table() -> str:
    rows: dict[tuple[str, int], dict] = {}
    for r in _rows("gym_vector.jsonl"):
        rows[(r["env"], r["num_envs"])] = r
    lines = ["| env | N | Gymnasium vector env steps/s | crax native steps/s | Gymnasium / native | load (1 min) |",
             "|---|---|---|---|---|---|"]
    for (env, n), r in sorted(rows.items()):
        lines.append(f"| {env} | {n} | {r['gym_steps_per_s']:,} | {r['native_steps_per_s']:,} | {r['ratio']:.2f}× | "
                     f"{r['load_1min']:.1f} |")
    return "\n".join(lines)


def relative_table(base: str, n: int, source: str = "bench_envs.jsonl") -> str:
    rows = _bench_rows(source)
    sittings = [r["sitting"] for r in rows if r.get("sitting") and r["env"] == base and r["num_envs"] == n]
    if not sittings:
        raise ValueError(f"{source} has no sitting that measured {base} at N={n}")
    same = {r["env"]: r for r in rows if r.get("sitting") == sittings[-1] and r["num_envs"] == n}
    ref, ref_physics = same[base]["env_steps_per_s"], same[base]["physics_steps_per_s"]
    loads = [r["load_1min"] for r in same.values()]
    lines = [f"| env (N={n}) | env steps/s | env step cost relative to {base} | bare physics cost relative to "
             f"{base}'s | env/physics |", "|---|---|---|---|---|"]
    for env, r in sorted(same.items(), key=lambda kv: (kv[0] != base, kv[0])):
        lines.append(f"| {env} | {r['env_steps_per_s']:,} | {ref / r['env_steps_per_s']:.2f}× | "
                     f"{ref_physics / r['physics_steps_per_s']:.2f}× | {r['ratio']:.2f}× |")
    lines.append(f"\nOne sitting ({_minute(sittings[-1])} UTC, {same[base]['devices']}{_cpu(same[base])}), "
                 f"load {min(loads):.1f}–{max(loads):.1f}.")
    return "\n".join(lines)


CEILING_COMMAND = ("python benchmarks/bench_envs.py --envs PointGoal1 AntGoal1 HalfCheetahVelocity1 "
                   "HopperVelocity1 HumanoidGoal1 ReacherReach1 SpiderGoal1 Walker2dVelocity1 --num-envs {n} --repeats 3")


def ceiling_table(n: int, source: str = "bench_envs.jsonl") -> str:
    rows = [r for r in _bench_rows(source, optional=True) if r["num_envs"] == n and "ceiling_steps_per_s" in r and r.get("sitting")]
    if not rows:
        return (f"No sitting in `{source}` has measured the C MuJoCo ceiling at N={n} yet; "
                f"`{CEILING_COMMAND.format(n=n)}` on a quiet machine fills this table.")
    sitting = max(r["sitting"] for r in rows)
    same = {r["env"]: r for r in rows if r["sitting"] == sitting}  # the latest row of an env wins
    loads = [r["load_1min"] for r in same.values()]
    threads = sorted({r["ceiling_threads"] for r in same.values()})
    lines = [f"| body | env (N={n}) | crax env steps/s | C MuJoCo env steps/s | crax / C MuJoCo |", "|---|---|---|---|---|"]
    for env, r in sorted(same.items(), key=lambda kv: (kv[1]["body"], kv[0])):
        stopped = f" ({r['ceiling_stopped']} C rollouts stopped early)" if r.get("ceiling_stopped") else ""
        lines.append(f"| {r['body']} | {env} | {r['env_steps_per_s']:,} | {r['ceiling_steps_per_s']:,}{stopped} | "
                     f"{r['ceiling_ratio']:.2f}× |")
    any_row = next(iter(same.values()))
    lines.append(f"\nOne sitting ({_minute(sitting)} UTC, crax on {any_row['devices']}{_cpu(any_row)}, C MuJoCo on "
                 f"{'/'.join(map(str, threads))} CPU threads), load {min(loads):.1f}–{max(loads):.1f}.")
    return "\n".join(lines)


def throughput_table(tag: str) -> str:
    rows = _rows("throughput.jsonl")
    rows = [r for r in rows if r.get("tag") == tag]
    if not rows:
        raise ValueError(f"throughput.jsonl has no rows tagged {tag!r} (benchmarks/train_throughput.py --tag {tag})")
    def label(r: dict) -> str:  # a learner, and its critics' gradient chunk / XLA options where the rows differ in them
        same = [x for x in rows if x["learner"] == r["learner"]]
        out = r["learner"]
        if len({x.get("critic_chunk_rows") for x in same}) > 1:
            out += f" (critic chunk {r['critic_chunk_rows']:,} rows)"
        if len({json.dumps(x.get("xla_options"), sort_keys=True) for x in same}) > 1:
            out += " (crax's XLA options)" if r.get("xla_options") else " (XLA's defaults)"
        return out

    latest = {label(r): r for r in rows}  # the last row of each learner (and chunk)
    base = next(iter(latest.values()))
    updates = all("updates_per_s" in r for r in latest.values())  # the off-policy family's gradient steps
    lines = [f"| learner | iteration (s) | relative to {next(iter(latest))} | env steps/s | "
             + ("gradient updates/s | " if updates else "") + "rollout (s) | update (s) | load (1 min) |",
             "|---|---|---|---|" + ("---|" if updates else "") + "---|---|---|"]
    for name, r in latest.items():
        lines.append(f"| {name} | {r['iteration_s']:.2f} | {r['iteration_s'] / base['iteration_s']:.2f}× | "
                     f"{r['train_steps_per_s']:,} | " + (f"{r['updates_per_s']:,.1f} | " if updates else "")
                     + f"{r['rollout_s']:.2f} | {r['update_s']:.2f} | {r['load_1min']:.1f} |")
    lines.append(f"\n{base['env']}, {base['num_envs']} envs, {base['env_steps_per_iteration']:,} steps per iteration, "
                 + ("one device" if base.get("sharding") is None else f"sharded over {base['devices']} devices")
                 + f" ({base['device']}); {base.get('date', '')}.")
    return "\n".join(lines)


def sg_speed_table() -> str:
    rows = _rows("sg_speed.jsonl")
    latest = {r["id"]: r for r in rows}  # each id's latest sitting; its ratios are within that sitting
    rows = list(latest.values())
    labels = {sitting: chr(ord("A") + i) for i, sitting in enumerate(dict.fromkeys(r["sitting"] for r in rows))}
    sizes = sorted({int(n) for r in rows for n in r["crax_steps_per_s"]})
    physics = any("crax_physics_steps_per_s" in r for r in rows)
    sg_budget = any("crax_sg_budget_steps_per_s" in r for r in rows)
    lines = ["| id | Safety-Gymnasium steps/s (1 env, 1 core) | " + " | ".join(f"crax steps/s N={n}" for n in sizes)
             + (" | crax bare physics, largest N" if physics else "")
             + (" | crax, largest N, at Safety-Gymnasium's solver budget" if sg_budget else "")
             + " | crax at its largest N / Safety-Gymnasium on 1 core | on all cores | sitting |",
             "|---|---|" + "---|" * (len(sizes) + 3 + physics + sg_budget)]
    for r in rows:
        rates = r["crax_steps_per_s"]
        top = str(max(int(n) for n in rates))
        cells = " | ".join(f"{rates[str(n)]:,}" if str(n) in rates else "–" for n in sizes)
        if physics:
            bare = r.get("crax_physics_steps_per_s", {}).get(top)
            cells += f" | {bare:,}" if bare else " | –"
        if sg_budget:
            full = r.get("crax_sg_budget_steps_per_s", {}).get(top)
            cells += f" | {full:,}" if full else (" | (its own)" if r.get("crax_budget") == [100, 50] else " | –")
        best = rates[top]
        lines.append(f"| {r['id']} | {r['sg_steps_per_s']:,} | {cells} | {best / r['sg_steps_per_s']:.2g}× "
                     f"| {best / (r['sg_steps_per_s'] * r['cpu_count']):.2g}× | {labels[r['sitting']]} |")
    lines.append("")
    for sitting, label in labels.items():
        group = [r for r in rows if r["sitting"] == sitting]
        loads = [x for r in group for x in r["load_1min"]]
        lines.append(f"Sitting {label}: {_minute(sitting)} UTC, {group[0]['cpu_count']} cores, "
                     f"{group[0].get('cpu', '')}, crax on one CPU device, load {min(loads):.1f}–{max(loads):.1f}.  ")
    lines.append("Each row's rates were taken in one sitting; compare rows of different sittings by their ratios only. "
                 "\"On all cores\" counts one Safety-Gymnasium process per core, each at the one-core rate.")
    return "\n".join(lines)


def sg_transfer_table() -> str:
    data = json.loads((RESULTS / "sg_policy_transfer.json").read_text())
    lines = ["| engine | episodes | episode return | episode cost | median cost | largest cost | episodes without cost |",
             "|---|---|---|---|---|---|---|"]
    for key, label in (("crax", "crax"), ("safety_gymnasium", f"Safety-Gymnasium {data['safety_gymnasium']['version']}")):
        r, c = data[key]["return"], data[key]["cost"]
        free, top = ((f"{sum(v == 0 for v in c['per_episode'])}", f"{max(c['per_episode']):.0f}") if "per_episode" in c
                     else ("–", "–"))
        median = f"{c['median']:.1f}" if "median" in c else "–"
        lines.append(f"| {label} | {c['episodes']} | {r['mean']:.1f} ± {r['ci95']:.1f} | {c['mean']:.1f} ± {c['ci95']:.1f} | "
                     f"{median} | {top} | {free} |")
    lines.append(f"\nThe policy: `{data['learner']}` after {data['env_steps']:,} env steps on `{data['env']}`.")
    if all("per_episode" in data[k][m] for k in ("crax", "safety_gymnasium") for m in ("return", "cost")):
        def diff(metric: str) -> str:  # Safety-Gymnasium's mean minus crax's, 95% interval (normal approximation)
            a, b = (np.asarray(data[k][metric]["per_episode"]) for k in ("safety_gymnasium", "crax"))
            half = 1.96 * math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
            return f"{a.mean() - b.mean():+.1f} ± {half:.1f}"
        def ks(metric: str) -> str:  # could the two engines' episodes come from one distribution?
            from scipy.stats import ks_2samp

            return f"{ks_2samp(*(data[k][metric]['per_episode'] for k in ('crax', 'safety_gymnasium'))).pvalue:.2f}"
        lines[-1] += (f" Safety-Gymnasium's mean minus crax's: return {diff('return')}, cost {diff('cost')} (95%). "
                      f"Two-sample Kolmogorov-Smirnov test of the episodes: p = {ks('return')} (returns), "
                      f"{ks('cost')} (costs).")
    return "\n".join(lines)


def cpo_step_check_table() -> str:
    checks = sorted((json.loads(f.read_text()) for f in RESULTS.glob("cpo_step_check*.json")),
                    key=lambda d: d["batch_steps"])

    def spread(rows: list[dict], step: str, key: str) -> str:
        vals = [r[step][key] for r in rows]
        return f"{np.mean(vals):+.1f} ({min(vals):+.1f} … {max(vals):+.1f})"

    lines = ["| batch (steps) | step | on the batch it was fitted to | on the other batches | measured | noise share of s |",
             "|---|---|---|---|---|---|"]
    for data in checks:
        rows = data["rows"]
        cases = sorted({r["case"] for r in rows})
        kinds = [("step", f"CPO's (`{data['constraint_value']}`, case {'/'.join(map(str, cases))})")]
        if cases != [0]:  # in case 0 CPO's step is the pure cost-reducing one
            kinds.append(("pure", "pure cost-reducing"))
        for step, label in kinds:
            lines.append(f"| {data['batch_steps']:,} | {label} | {spread(rows, step, 'in_sample')} | "
                         f"{spread(rows, step, 'held_out')} | {spread(rows, step, 'true')} | "
                         f"{100 * data['s_noise_share']:.0f} % |")
    first = checks[0]
    se = [r[s]["true_se"] for d in checks for r in d["rows"] for s in ("step", "pure")]
    envs, steps = first["eval_envs_x_steps"]
    lines.append(
        f"\nChange of the cost per episode ({first['episode_length']} steps) that one step makes, mean over "
        f"{first['batches']} independent batches (range in brackets), of `{first['learner']}` on `{first['env']}` "
        f"after {first['env_steps']:,} env steps, whose cost per episode was {first['cost_per_episode_at_theta']:.1f} "
        f"against the bound {first['bound']:g}. Measured: {envs} envs × {steps} steps of the policy before and after "
        f"the step with common random numbers (standard error {min(se):.1f}–{max(se):.1f} per batch). Noise share of "
        f"s = bᵀH⁻¹b: 1 − mean(b_jᵀH_i⁻¹b_i, i ≠ j) / mean(b_iᵀH_i⁻¹b_i) over the batches.")
    return "\n".join(lines)


def cpo_constraint_value_table() -> str:
    from crax.learners.trust_region import LinearizedConfig
    from crax.studies.collect import find_runs, read_result
    from crax.studies.stats import mean_interval

    folders = [RESULTS / "cpo_constraint_value"] + sorted(RESULTS.glob("trust_region_sweep/tr-*-cpo"))
    lines = ["| `constraint_value` | env | seeds | env steps | return | cost | d | mean cost ≤ d |", "|---|---|---|---|---|---|---|---|"]
    for run in find_runs(folders):
        res = read_result(run)
        if res is None:
            continue
        stored = json.loads((run / "config.json").read_text())["config"]
        value = stored.get("constraint_value", LinearizedConfig.stored_defaults["constraint_value"])

        def fmt(values) -> str:
            mean, ci = mean_interval(values)
            return f"{mean:.1f}" + (f" ± {(ci[1] - ci[0]) / 2:.1f}" if ci else "")

        lines.append(f"| `{value}` | {res.env} | {len(res.returns)} | {res.env_steps:,} | {fmt(res.returns)} | "
                     f"{fmt(res.costs)} | {res.safety_bound:g} | {'yes' if np.mean(res.costs) <= res.safety_bound else 'no'} |")
    lines.append("\nFinal evaluation of the run's judged policy, mean over seeds ± half-width of the 95% Student-t "
                 "interval (none for one seed); the runs' files are in `benchmarks/results/cpo_constraint_value/` and "
                 "`benchmarks/results/trust_region_sweep/`.")
    return "\n".join(lines)


def xla_flags_table() -> str:
    rows = _rows("xla_flags.jsonl", optional=True)
    if not rows:
        return "No sitting in `xla_flags.jsonl` yet; `python benchmarks/xla_flags.py` on a quiet machine fills this table."
    sitting = max(r["sitting"] for r in rows)
    same = [r for r in rows if r["sitting"] == sitting]
    flag_sets = sorted({r["xla_flags"] for r in same}, key=lambda f: (f != "", f))
    base, others = flag_sets[0], flag_sets[1:]
    by = {(r["xla_flags"], r["env"], r["num_envs"]): r.get("train_steps_per_s", r.get("env_steps_per_s")) for r in same}

    def label(flags: str) -> str:
        return f"`{flags}`" if flags else "XLA's defaults"

    lines = [f"| what | N | {label(base)} steps/s | " + " | ".join(f"{label(f)} steps/s | speed-up" for f in others) + " |",
             "|---|---|---|" + "---|---|" * len(others)]
    for env, n in sorted({(r["env"], r["num_envs"]) for r in same}, key=lambda k: (k[0].startswith("train"), k)):
        b = by.get((base, env, n))
        cells = [f"{v:,} | {v / b:.2f}×" if (v := by.get((f, env, n))) and b else "– | –" for f in others]
        lines.append(f"| {env} | {n} | {b:,} | " + " | ".join(cells) + " |")
    r0 = same[0]
    lines.append(f"\nOne sitting ({_minute(sitting)} UTC, {r0['cpu']}, {r0['cpu_count']} cores), best of "
                 f"{r0['rounds']} alternating rounds, load {r0['load_1min'][0]:.1f}–{r0['load_1min'][1]:.1f}.")
    return "\n".join(lines)


def off_policy_layouts_table(env: str) -> str:
    rows = [r for r in _rows("off_policy_layouts.jsonl", optional=True) if r["env"] == env]
    if not rows:
        return (f"No sitting on {env} in `off_policy_layouts.jsonl` yet; `python benchmarks/off_policy_layouts.py "
                f"--env {env}` fills this table.")
    sitting = max(r["sitting"] for r in rows)
    same = [r for r in rows if r["sitting"] == sitting]
    lines = ["| envs × steps | updates × batch | replay ratio | env steps/s | env steps | return | cost |",
             "|---|---|---|---|---|---|---|"]

    def spread(v: list[float]) -> str:
        return f"{sum(v) / len(v):.1f} ({min(v):.1f}–{max(v):.1f})"

    for r in same:
        lines.append(f"| {r['num_envs']} × {r['unroll_length']} | {r['updates_per_iteration']} × {r['batch_size']} | "
                     f"{r['replay_ratio']:g} | {r['steps_per_s']:,} | {r['env_steps']:,} | {spread(r['return'])} | "
                     f"{spread(r['cost'])} |")
    r0, loads = same[0], [r["load_1min"] for r in same]
    lines.append(f"\n`{r0['learner']}` on {env}, one sitting ({_minute(sitting)} UTC, {r0['cpu']}, {r0['cpu_count']} "
                 f"cores, load {min(loads):.1f}–{max(loads):.1f}): {r0['budget_s']:g} s of training per layout (compile "
                 f"and evaluations excluded), {r0['num_seeds']} seeds trained together, everything else at the learner's "
                 f"defaults. Env steps are per seed; return and cost are the last evaluation's ({r0['eval_policy']} "
                 f"policy), the mean over seeds with their range; the bound is {r0['safety_bound']:g}.")
    return "\n".join(lines)


def first_table(path: Path) -> str:
    """A Markdown file up to the end of its first table (its caption and that table, without the rest)."""
    lines = path.read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("|")), None)
    if start is None:
        raise ValueError(f"{path} has no Markdown table")
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return "\n".join(lines[:end])


def update_flops_table() -> str:
    rows = _rows("update_flops.jsonl", optional=True)
    if not rows:
        return ("No sitting has measured the update yet; `python benchmarks/update_flops.py` on a quiet machine "
                "fills this table.")
    latest = {(r["learner"], r["env"]): r for r in rows if r["date"] == rows[-1]["date"]}  # the latest day's
    lines = ["| learner | env | minibatch | critics | critics' gradient chunk | step GFLOP | step (ms) | step GFLOP/s | "
             "matmul peak GFLOP/s | critic-shaped matmul GFLOP/s | step / peak | whole minibatch: step (ms), / peak | "
             "load (1 min) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in latest.values():
        critics = f"{len(r['critic_hidden'])}×{max(r['critic_hidden'])}"
        chunk = r.get("critic_chunk", r["minibatch"])  # rows before session 33 took the whole minibatch
        whole = (f"{r['whole_minibatch_step_ms']:.1f}, {r['whole_minibatch_fraction_of_peak']:.2f}"
                 if "whole_minibatch_step_ms" in r else "–")
        lines.append(f"| {r['learner']} | {r['env']} | {r['minibatch']:,} | {critics} | {chunk:,} rows | "
                     f"{r['step_gflop']:.1f} | {r['step_ms']:.1f} | {r['step_gflops_per_s']:.1f} | "
                     f"{r['peak_gflops_per_s']:.1f} | {r['shaped_gflops_per_s']:.1f} | {r['fraction_of_peak']:.2f} | "
                     f"{whole} | {r['load_1min']:.1f} |")
    last = rows[-1]
    lines.append(f"\n{last['date']}, {last['cpu']} ({last['cpu_count']} cores), {last['devices']}; peak: a "
                 f"{last['matmul_n']}×{last['matmul_n']} f32 matmul in the same process, timed alternately with the step"
                 + ("s; a step: the update's loop over one epoch's minibatches, divided by them." if last.get("timed")
                    else " compiled and called alone."))
    return "\n".join(lines)


WARP_COMMAND = ("python benchmarks/bench_envs.py --envs PointCircle1 AntVelocity1 HopperVelocity1 --num-envs {n} "
                "--physics jax warp --no-ceiling{out}")


def warp_table(n: int, source: str = "bench_envs.jsonl") -> str:
    """The latest sitting with ``physics="warp"`` rows at N envs: each env on MJX's JAX and Warp
    implementations, side by side (the JAX row of the same sitting, where it measured one)."""
    warp = [r for r in _bench_rows(source, "warp", optional=True) if r["num_envs"] == n and r.get("sitting")]
    if not warp:
        out = "" if source == "bench_envs.jsonl" else f" --out benchmarks/results/{source}"
        return (f"No sitting in `{source}` has measured `physics=\"warp\"` at N={n} yet; "
                f"`{WARP_COMMAND.format(n=n, out=out)}` fills this table.")
    sitting = max(r["sitting"] for r in warp)
    same_warp = {r["env"]: r for r in warp if r["sitting"] == sitting}
    same_jax = {r["env"]: r for r in _bench_rows(source) if r.get("sitting") == sitting and r["num_envs"] == n}
    lines = [f"| body | env (N={n}) | JAX env steps/s | Warp env steps/s | Warp / JAX | env/physics JAX | env/physics Warp |",
             "|---|---|---|---|---|---|---|"]
    for env, w in sorted(same_warp.items(), key=lambda kv: (kv[1]["body"], kv[0])):
        j = same_jax.get(env)
        cells = ([f"{j['env_steps_per_s']:,}", f"{w['env_steps_per_s']:,}", f"{w['env_steps_per_s'] / j['env_steps_per_s']:.2f}×",
                  f"{j['ratio']:.2f}×"] if j else ["–", f"{w['env_steps_per_s']:,}", "–", "–"])
        lines.append(f"| {w['body']} | {env} | {' | '.join(cells)} | {w['ratio']:.2f}× |")
    rows = [*same_warp.values(), *same_jax.values()]
    loads = [r["load_1min"] for r in rows]
    jax_devices = sorted({r["devices"] for r in same_jax.values()})
    lines.append(f"\nOne sitting ({_minute(sitting)} UTC{_cpu(rows[0])}; Warp on {next(iter(same_warp.values()))['devices']}"
                 + (f", JAX on {'/'.join(jax_devices)}" if jax_devices else "") + f"), load {min(loads):.1f}–{max(loads):.1f}.")
    return "\n".join(lines)


def render(name: str) -> str:
    if name.startswith("off-policy-layouts-"):
        return off_policy_layouts_table(name.removeprefix("off-policy-layouts-"))
    if name == "xla-flags":
        return xla_flags_table()
    if name == "update-flops":
        return update_flops_table()
    if name == "bench-envs":
        return bench_envs_table()
    if name == "tau":
        return tau_table()
    if name == "gym-vector":
        return gym_vector_table()
    if name.startswith("throughput-"):
        return throughput_table(name.removeprefix("throughput-"))
    if name == "sg-speed":
        return sg_speed_table()
    if name == "sg-transfer":
        return sg_transfer_table()
    if name == "cpo-step-check":
        return cpo_step_check_table()
    if name == "cpo-constraint-value":
        return cpo_constraint_value_table()
    if name.startswith("learning-"):
        return learning_table(name.removeprefix("learning-"))
    if name.startswith("sample-efficiency-"):
        return sample_efficiency_table(name.removeprefix("sample-efficiency-"))
    if name.startswith("gpu-warp-"):
        return warp_table(int(name.removeprefix("gpu-warp-")), "bench_envs_gpu.jsonl")
    if name.startswith("warp-"):
        return warp_table(int(name.removeprefix("warp-")))
    if name.startswith("gpu-ceiling-"):
        return ceiling_table(int(name.removeprefix("gpu-ceiling-")), "bench_envs_gpu.jsonl")
    if name.startswith("ceiling-"):
        return ceiling_table(int(name.removeprefix("ceiling-")))
    if name.startswith("gpu-relative-"):
        base, _, n = name.removeprefix("gpu-relative-").rpartition("-")
        return relative_table(base, int(n), "bench_envs_gpu.jsonl")
    if name.startswith("relative-"):
        base, _, n = name.removeprefix("relative-").rpartition("-")
        return relative_table(base, int(n))
    if name.startswith("md-head-"):
        return first_table(RESULTS / f"{name.removeprefix('md-head-')}.md")
    if name.startswith("md-"):
        return (RESULTS / f"{name.removeprefix('md-')}.md").read_text().rstrip("\n")
    raise ValueError(f"unknown table {name!r}; valid: bench-envs, update-flops, cpo-constraint-value, cpo-step-check, xla-flags, off-policy-layouts-<ENV>, tau, gym-vector, sg-speed, sg-transfer, learning-<ENV>, sample-efficiency-<ENV>, md-<STEM>, md-head-<STEM>, throughput-<TAG>, "
                     "relative-<BASE>-<N>, gpu-relative-<BASE>-<N>, ceiling-<N>, gpu-ceiling-<N>, warp-<N>, gpu-warp-<N>")


PATTERN = re.compile(r"(<!-- table:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /table:(?P=name) -->)", re.S)


def rewrite(text: str) -> str:
    return PATTERN.sub(lambda m: m.group(1) + render(m.group("name")) + "\n" + m.group(4), text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a page is not up to date")
    parser.add_argument("--file", type=Path, action="append",
                        help="a Markdown page to rewrite (repeatable); default: README.md and docs/*.md")
    args = parser.parse_args()
    stale = []
    for path in args.file or pages():
        old = path.read_text()
        new = rewrite(old)
        if new == old:
            continue
        if args.check:
            stale.append(path)
        else:
            path.write_text(new)
    if stale:
        print("out of date: " + ", ".join(str(p) for p in stale) + "; run python benchmarks/readme_tables.py",
              file=sys.stderr)
        raise SystemExit(1)


if __name__ == "__main__":
    main()
