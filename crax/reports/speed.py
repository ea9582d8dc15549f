"""Tables of speed: env steps/s against bare physics, C MuJoCo and Warp, the Gymnasium vector face,
Safety-Gymnasium's own rate and XLA's flags (each from its JSON-lines file in ``benchmarks/results/``)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from crax.reports.rows import bench_rows, cpu, minute, read_rows


def bench_envs_table(results: Path) -> str:
    rows: dict[tuple[str, int], dict] = {}
    for r in bench_rows(results, "bench_envs.jsonl"):
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


def relative_table(results: Path, base: str, n: int, source: str = "bench_envs.jsonl") -> str:
    rows = bench_rows(results, source)
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
    lines.append(f"\nOne sitting ({minute(sittings[-1])} UTC, {same[base]['devices']}{cpu(same[base])}), "
                 f"load {min(loads):.1f}–{max(loads):.1f}.")
    return "\n".join(lines)


def ceiling_table(results: Path, n: int, source: str = "bench_envs.jsonl") -> str:
    rows = [r for r in bench_rows(results, source, optional=True) if r["num_envs"] == n and "ceiling_steps_per_s" in r and r.get("sitting")]
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
    lines.append(f"\nOne sitting ({minute(sitting)} UTC, crax on {any_row['devices']}{cpu(any_row)}, C MuJoCo on "
                 f"{'/'.join(map(str, threads))} CPU threads), load {min(loads):.1f}–{max(loads):.1f}.")
    return "\n".join(lines)


def warp_table(results: Path, n: int, source: str = "bench_envs.jsonl") -> str:
    """The latest sitting with ``physics="warp"`` rows at N envs: each env on MJX's JAX and Warp
    implementations, side by side (the JAX row of the same sitting, where it measured one)."""
    warp = [r for r in bench_rows(results, source, "warp", optional=True) if r["num_envs"] == n and r.get("sitting")]
    if not warp:
        out = "" if source == "bench_envs.jsonl" else f" --out benchmarks/results/{source}"
        return (f"No sitting in `{source}` has measured `physics=\"warp\"` at N={n} yet; "
                f"`{WARP_COMMAND.format(n=n, out=out)}` fills this table.")
    sitting = max(r["sitting"] for r in warp)
    same_warp = {r["env"]: r for r in warp if r["sitting"] == sitting}
    same_jax = {r["env"]: r for r in bench_rows(results, source) if r.get("sitting") == sitting and r["num_envs"] == n}
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
    lines.append(f"\nOne sitting ({minute(sitting)} UTC{cpu(rows[0])}; Warp on {next(iter(same_warp.values()))['devices']}"
                 + (f", JAX on {'/'.join(jax_devices)}" if jax_devices else "") + f"), load {min(loads):.1f}–{max(loads):.1f}.")
    return "\n".join(lines)


def gym_vector_table(results: Path) -> str:
    rows: dict[tuple[str, int], dict] = {}
    for r in read_rows(results, "gym_vector.jsonl"):
        rows[(r["env"], r["num_envs"])] = r
    lines = ["| env | N | Gymnasium vector env steps/s | crax native steps/s | Gymnasium / native | load (1 min) |",
             "|---|---|---|---|---|---|"]
    for (env, n), r in sorted(rows.items()):
        lines.append(f"| {env} | {n} | {r['gym_steps_per_s']:,} | {r['native_steps_per_s']:,} | {r['ratio']:.2f}× | "
                     f"{r['load_1min']:.1f} |")
    return "\n".join(lines)


def sg_speed_table(results: Path) -> str:
    """Safety-Gymnasium's steps/s (one env, one core) against crax's for the same ids, each id's latest
    sitting: the state-based ids, then the Vision ids, a row per image size (``vision_size``: both
    halves render an N×N image every step)."""
    rows = read_rows(results, "sg_speed.jsonl")
    latest = {(r["id"], r.get("vision_size")): r for r in rows}  # each id's (and image size's) latest sitting
    rows = list(latest.values())
    labels = {sitting: chr(ord("A") + i) for i, sitting in enumerate(dict.fromkeys(r["sitting"] for r in rows))}
    state = [r for r in rows if "vision_size" not in r]
    vision = [r for r in rows if "vision_size" in r]
    lines = _sg_speed_rows(state, labels, "id") if state else []
    if vision:
        lines += [""] * bool(lines) + _sg_speed_rows(vision, labels, "Vision id (image)", vision=True)
    lines.append("")
    for sitting, label in labels.items():
        group = [r for r in rows if r["sitting"] == sitting]
        loads = [x for r in group for x in r["load_1min"]]
        lines.append(f"Sitting {label}: {minute(sitting)} UTC, {group[0]['cpu_count']} cores, "
                     f"{group[0].get('cpu', '')}, crax on one CPU device, load {min(loads):.1f}–{max(loads):.1f}.  ")
    lines.append("Each row's rates were taken in one sitting; compare rows of different sittings by their ratios only. "
                 "\"On all cores\" counts one Safety-Gymnasium process per core, each at the one-core rate.")
    if vision:
        renderers = sorted({r.get("sg_renderer", "not recorded") for r in vision})
        lines[-1] += (" A Vision row's rates include rendering its image every step (a step is a frame), "
                      f"Safety-Gymnasium's drawn by {', '.join(renderers)}; its \"on all cores\" is crax's "
                      "steps/s per core over Safety-Gymnasium's per core.")
    return "\n".join(lines)


def _sg_speed_rows(rows: list[dict], labels: dict[str, str], first: str, vision: bool = False) -> list[str]:
    """The head and rows of one block of :func:`sg_speed_table` (``vision``: the Vision ids')."""
    sizes = sorted({int(n) for r in rows for n in r["crax_steps_per_s"]})
    physics = any("crax_physics_steps_per_s" in r for r in rows)
    sg_budget = any("crax_sg_budget_steps_per_s" in r for r in rows)
    lines = [f"| {first} | Safety-Gymnasium steps/s (1 env, 1 core) | " + " | ".join(f"crax steps/s N={n}" for n in sizes)
             + (f" | crax bare physics{' (no image)' * vision}, largest N" if physics else "")
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
        name = r["id"] + (f" ({r['vision_size']}×{r['vision_size']})" if "vision_size" in r else "")
        lines.append(f"| {name} | {r['sg_steps_per_s']:,} | {cells} | {best / r['sg_steps_per_s']:.2g}× "
                     f"| {best / (r['sg_steps_per_s'] * r['cpu_count']):.2g}× | {labels[r['sitting']]} |")
    return lines


def xla_flags_table(results: Path) -> str:
    rows = read_rows(results, "xla_flags.jsonl", optional=True)
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
    lines.append(f"\nOne sitting ({minute(sitting)} UTC, {r0['cpu']}, {r0['cpu_count']} cores), best of "
                 f"{r0['rounds']} alternating rounds, load {r0['load_1min'][0]:.1f}–{r0['load_1min'][1]:.1f}.")
    return "\n".join(lines)


CEILING_COMMAND = ("python benchmarks/bench_envs.py --envs PointGoal1 AntGoal1 HalfCheetahVelocity1 "
                   "HopperVelocity1 HumanoidGoal1 ReacherReach1 SpiderGoal1 Walker2dVelocity1 --num-envs {n} --repeats 3")

WARP_COMMAND = ("python benchmarks/bench_envs.py --envs PointCircle1 AntVelocity1 HopperVelocity1 --num-envs {n} "
                "--physics jax warp --no-ceiling{out}")
