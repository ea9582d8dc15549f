"""The ``crax`` command line: ``list``, ``bench``, ``render``, ``train``, ``eval``.

``train`` and ``eval`` are documented by ``crax train --help`` and ``crax eval --help``.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Annotated, Any, Literal

import tyro

from crax.devices import startup
from crax.devices.settings import PHYSICS_HELP, Physics

USAGE = """crax: safe reinforcement learning on MuJoCo MJX.

commands:
  crax list                       bodies, suites, levels, env ids and learners
  crax params PointGoal1          what crax.make accepts for an id: defaults, valid values, meaning
  crax bench --env PointGoal1     env steps/s against bare physics steps/s and the C MuJoCo ceiling
  crax train <learner> --env ID   train a learner (crax train --help)
  crax train --resume RUN_DIR     continue an interrupted run; --total-steps N extends a finished one
  crax render ID --out OUT.mp4    video of one episode with random actions (crax render --help)
  crax eval RUN_DIR               evaluate a trained run (crax eval --help); --video OUT.mp4 films one episode
  crax sweep --out DIR ...        grid of learners × envs × bounds × seeds (crax sweep --help)
  crax table DIRS...              summary table of runs/sweeps with 95% intervals (crax table --help)
  crax plot DIRS... --out FIG     return and cost curves of runs/sweeps with 95% bands
  crax curriculum <learner> --env PointGoal   levels 1 -> 2 -> 3 in one run, all state carried
  crax transfer <learner> --env PointGoal3    PPO for half the budget, then the safe learner from it
"""


@dataclasses.dataclass(frozen=True)
class ListCmd:
    """Prints the registry: bodies, suites with their levels, env ids (by catalogue, then the multi-agent ones) and
    learners (single- and multi-agent)."""

    def run(self) -> None:
        import crax
        from crax.suites.catalogue import supports

        reg = crax.registry()
        print("bodies:")
        for name, cls in sorted(reg.bodies.items()):
            suites = sorted(s for s, sc in reg.suites.items() if supports(sc, cls))
            print(f"  {name:<14} kinds: {', '.join(sorted(cls.kinds)):<24} suites: {', '.join(suites) or '(none)'}")
        print("suites:")
        for name, cls in sorted(reg.suites.items()):
            bodies = sorted(b for b, bc in reg.bodies.items() if supports(cls, bc))
            print(f"  {name:<14} levels: {', '.join(map(str, cls.levels))}   bodies: {', '.join(bodies)}")
        for name, catalogue in reg.catalogues.items():  # every id, by the catalogue that lists it
            print(f"{catalogue.title}:")
            print("  " + (" ".join(reg.env_ids(name)) or "(none)"))
        from crax.tasks.multi_agent import ma_ids

        print("Safety-Gymnasium's multi-agent velocity tasks (make_ma), by id:")
        print("  " + " ".join(ma_ids()))
        for kind in ("sensors", "hazards", "constraints"):
            print(f"{kind}: {', '.join(sorted(reg.table(kind)))}")
        single = sorted(n for n, c in reg.learners.items() if not getattr(c, "multi_agent", False))
        multi = sorted(n for n, c in reg.learners.items() if getattr(c, "multi_agent", False))
        print(f"learners: {', '.join(single) or '(none)'}")
        print(f"multi-agent learners: {', '.join(multi) or '(none)'}")


@dataclasses.dataclass(frozen=True)
class ParamsCmd:
    """Prints the task parameters of an env id: default at its level, valid values, meaning (crax.parameters)."""

    env: Annotated[tyro.conf.Positional[str], tyro.conf.arg(metavar="ENV_ID")]
    """Env id, e.g. PointGoal1."""

    def run(self) -> None:
        from crax.tasks.parameter_table import id_table

        print(id_table(self.env), end="")


@dataclasses.dataclass(frozen=True)
class BenchCmd:
    """Env steps/s (random actions, auto-reset included) against the bare physics the env steps (its
    scene without the bodies that take no part in the dynamics: goals, zones) and against the C MuJoCo
    ceiling (mujoco.rollout of that model from the same states, one thread per core)."""

    env: str = "PointGoal1"
    """Env id."""
    num_envs: tuple[int, ...] = (1, 64, 256, 1024, 4096)
    """Numbers of parallel envs to measure."""
    steps: int | None = None
    """Steps per timed call (default: about 200k env steps, between 20 and 1000)."""
    repeats: int = 3
    """Timed calls per N; the best is reported."""
    physics: Annotated[Physics, tyro.conf.arg(help=f"{PHYSICS_HELP}.")] = "jax"
    ceiling: bool = True
    """Measure the C MuJoCo ceiling; --no-ceiling skips it (it rolls every env out on the CPU's cores)."""
    env_param: Annotated[tyro.conf.UseAppendAction[tuple[str, ...]], tyro.conf.arg(
        help="Set a task parameter: NAME=VALUE, once per parameter (e.g. --env-param vision_size=64).")] = ()

    def run(self) -> None:
        import crax
        from crax.bench import bench, check_counts, format_table, physics_note
        from crax.bench_ceiling import unavailable
        from crax.core import observation
        from crax.tasks.compose import parse_env_params

        if not self.num_envs:
            raise ValueError("--num-envs needs at least one value, e.g. --num-envs 64 256")
        for n in self.num_envs:  # before crax.make: a bad count must not wait for a model compile
            check_counts(prefix="--", num_envs=n)
        check_counts(prefix="--", steps=self.steps, repeats=self.repeats)
        ceiling = self.ceiling
        if ceiling and (why := unavailable()):
            print(f"crax: no C MuJoCo ceiling: {why}; its columns read '-' (--no-ceiling skips it)", file=sys.stderr)
            ceiling = False
        env = crax.make(self.env, physics=self.physics, **parse_env_params(self.env_param))
        rows = []
        for n in self.num_envs:
            rows.append(bench(env, n, steps=self.steps, repeats=self.repeats, ceiling=ceiling))
            c = rows[-1].ceiling_steps_per_s
            c_note = "" if c is None else f", C MuJoCo {c:,.0f}"
            print(f"  N={n}: {rows[-1].env_steps_per_s:,.0f} env steps/s{c_note}", file=sys.stderr, flush=True)
        print(format_table(self.env, rows, self.physics))
        if images := observation.images(env.observation_spec):
            shapes = ", ".join(f"{key} {'x'.join(map(str, s.shape))}" for key, s in images.items())
            print(f"Rendered frames/s ({shapes}; rendering is inside the env step): " + ", ".join(
                f"N={r.num_envs}: {len(images) * r.env_steps_per_s:,.0f}" for r in rows))
        if note := physics_note(env):
            print(note)


@dataclasses.dataclass(frozen=True)
class RenderCmd:
    """Renders one episode of an env with uniform random actions to a video (crax.render)."""

    env: Annotated[tyro.conf.Positional[str], tyro.conf.arg(metavar="ENV_ID")]
    """Env id, e.g. PointGoal1."""
    out: str
    """Video file to write: .mp4 (H.264) or .gif."""
    steps: int | None = None
    """Steps to film (default: one episode, episode_length steps or until it ends)."""
    camera: Literal["track", "top"] = "track"
    """track follows the agent; top looks down on the arena (or on the agent off-arena)."""
    seed: int = 0
    """Seed of the layout and the random actions."""
    width: int = 480
    """Frame width in pixels."""
    height: int = 480
    """Frame height in pixels."""

    def run(self) -> None:
        import jax

        import crax
        from crax import render, video

        path = video.video_path(self.out)
        if self.steps is not None and self.steps < 1:
            raise ValueError(f"--steps must be >= 1, got {self.steps}")
        for name in ("width", "height"):
            if not 1 <= getattr(self, name) <= 4096:
                raise ValueError(f"--{name} must be in [1, 4096] pixels, got {getattr(self, name)}")
        env = crax.make(self.env)
        states = render.rollout(env, None, jax.random.key(self.seed), self.steps or env.episode_length)
        if self.steps is None:
            states = render.first_episode(states)
        try:
            render.save_video(env, states, path, camera=self.camera, width=self.width, height=self.height)
        except render.RenderingUnavailable as e:
            print(f"crax: error: {e}", file=sys.stderr)
            raise SystemExit(1) from None
        print(path)


def _studies():
    from crax.cli import studies

    return studies


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``crax`` console script."""
    with startup.command_line():  # XLA's log kept off the console; says when a compile starts
        _main(argv)


def _main(argv: list[str] | None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        startup.configure_jax()  # before anything starts JAX's backends (host devices), errors reported below
        if argv and argv[0] in ("train", "eval"):
            from crax.cli import eval as eval_cli
            from crax.cli import train as train_cli

            (train_cli.train_main if argv[0] == "train" else eval_cli.eval_main)(argv[1:])
            return
        if argv and argv[0] == "curriculum":
            from crax.cli.studies import curriculum_main

            curriculum_main(argv[1:])
            return
        if argv and argv[0] == "transfer":
            from crax.cli.studies import transfer_main

            transfer_main(argv[1:])
            return
        if not argv or argv[0] in ("-h", "--help"):
            print(USAGE)
            return
        subcommands: dict[str, Any] = {  # tyro reads the Annotated form too; its signature wants callables
            "list": Annotated[ListCmd, tyro.conf.arg(name="list")],
            "params": ParamsCmd,
            "bench": BenchCmd,
            "render": RenderCmd,
            "sweep": _studies().SweepCmd,
            "table": _studies().TableCmd,
            "plot": _studies().PlotCmd,
        }
        cmd = tyro.extras.subcommand_cli_from_dict(
            subcommands,
            args=argv,
            prog="crax",
        )
        cmd.run()
    except ValueError as e:
        print(f"crax: error: {e}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
