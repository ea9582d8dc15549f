"""Tables of training: learners' results, sample efficiency, τ, training throughput, the update's
FLOP/s, CPO's step checks and constraint values, off-policy layouts and the Safety-Gymnasium policy transfer."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from crax.reports.rows import minute, read_rows


def learning_table(results: Path, env: str) -> str:
    data = json.loads((results / f"learning_{env}.json").read_text())
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


def sample_efficiency_table(results: Path, env: str) -> str:
    path = results / f"sample_efficiency_{env}.json"
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


def tau_table(results: Path) -> str:
    lines = ["| body | PPO steps | mean speed reached (m/s) | base τ = 50% (m/s) | τ at levels 1 / 2 / 3 |",
             "|---|---|---|---|---|"]
    for path in sorted(results.glob("tau_*.json")):
        r = json.loads(path.read_text())
        tau = r["tau"]
        lines.append(f"| {r['body']} | {r['total_steps']:,} | {r['mean_speed']:.3f} | {tau:.3f} | "
                     f"{tau:.3f} / {0.75 * tau:.3f} / {0.5 * tau:.3f} |")
    return "\n".join(lines)


def throughput_table(results: Path, tag: str) -> str:
    rows = read_rows(results, "throughput.jsonl")
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


def update_flops_table(results: Path) -> str:
    rows = read_rows(results, "update_flops.jsonl", optional=True)
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
        chunk = r.get("critic_chunk", r["minibatch"])  # older rows took the whole minibatch
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


def cpo_step_check_table(results: Path) -> str:
    checks = sorted((json.loads(f.read_text()) for f in results.glob("cpo_step_check*.json")),
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


def cpo_constraint_value_table(results: Path) -> str:
    from crax.learners.trust_region.family import LinearizedConfig
    from crax.studies.collect import find_runs, read_result
    from crax.studies.stats import mean_interval

    folders = [results / "cpo_constraint_value"] + sorted(results.glob("trust_region_sweep/tr-*-cpo"))
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


def off_policy_layouts_table(results: Path, env: str) -> str:
    rows = [r for r in read_rows(results, "off_policy_layouts.jsonl", optional=True) if r["env"] == env]
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
    lines.append(f"\n`{r0['learner']}` on {env}, one sitting ({minute(sitting)} UTC, {r0['cpu']}, {r0['cpu_count']} "
                 f"cores, load {min(loads):.1f}–{max(loads):.1f}): {r0['budget_s']:g} s of training per layout (compile "
                 f"and evaluations excluded), {r0['num_seeds']} seeds trained together, everything else at the learner's "
                 f"defaults. Env steps are per seed; return and cost are the last evaluation's ({r0['eval_policy']} "
                 f"policy), the mean over seeds with their range; the bound is {r0['safety_bound']:g}.")
    return "\n".join(lines)


def sg_transfer_table(results: Path) -> str:
    data = json.loads((results / "sg_policy_transfer.json").read_text())
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

            result = ks_2samp(*(data[k][metric]["per_episode"] for k in ("crax", "safety_gymnasium")))
            return f"{result.pvalue:.2f}"  # pyright: ignore[reportAttributeAccessIssue]  (scipy's result is a tuple-bunch its stubs leave untyped)
        lines[-1] += (f" Safety-Gymnasium's mean minus crax's: return {diff('return')}, cost {diff('cost')} (95%). "
                      f"Two-sample Kolmogorov-Smirnov test of the episodes: p = {ks('return')} (returns), "
                      f"{ks('cost')} (costs).")
    return "\n".join(lines)
