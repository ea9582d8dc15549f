"""``crax eval RUN_DIR``: return and cost of a trained run's policies, safe or not, optionally a video."""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated, Literal

import tyro

from crax.cli.common import fail
from crax.devices.settings import PHYSICS_HELP, Physics
from crax.learners.shared.config import EVAL_POLICIES, EvalPolicy
from crax.runs.evaluation import eval_video, evaluate
from crax.runs.results import CVAR_ALPHA


@dataclasses.dataclass(frozen=True)
class EvalArgs:
    """Evaluate the latest checkpoint of a run: the stochastic and the deterministic policy."""

    run_dir: Annotated[tyro.conf.Positional[str], tyro.conf.arg(metavar="RUN_DIR")]
    """Run folder written by crax train."""
    episodes: int = 128
    """Episodes per trained seed and policy (run in parallel)."""
    seed: int = 0
    """Random seed of the evaluation episodes."""
    policy: EvalPolicy | None = None
    """Policy the safe verdict is taken on (default: the run's eval_policy, stochastic unless changed)."""
    json: bool = False
    """Print the result as JSON."""
    video: Annotated[str | None, tyro.conf.arg(metavar="OUT.mp4|OUT.gif")] = None
    """Also write a video (.mp4 or .gif) of one evaluation episode of seed 0's learner with the judged policy."""
    camera: Literal["track", "top"] = "track"
    """Camera of the video: track follows the agent, top looks down on the arena."""
    width: int = 480
    """Video width in pixels."""
    height: int = 480
    """Video height in pixels."""
    physics: Annotated[Physics | None, tyro.conf.arg(help=f"{PHYSICS_HELP}; default: the run's.")] = None


def eval_main(argv: list[str]) -> None:
    """``crax eval RUN_DIR [--episodes N] [--policy P]``: return and cost of both policies, safe or not safe."""
    prog = "crax eval"
    args = tyro.cli(EvalArgs, args=argv, prog=prog)
    from crax.render import RenderingUnavailable
    from crax.video import video_path

    try:
        if args.video is not None:
            video_path(args.video)  # a bad suffix fails before the evaluation runs
        res = evaluate(args.run_dir, args.episodes, seed=args.seed, policy=args.policy, physics=args.physics)
        if args.video is not None:
            res["video"] = str(eval_video(args.run_dir, args.video, seed=args.seed, policy=res["policy"],
                                          camera=args.camera, width=args.width, height=args.height,
                                          physics=args.physics))
    except (ValueError, RenderingUnavailable) as e:
        fail(prog, e)
    if args.json:
        print(json.dumps(res, indent=2))
        return
    print(f"{res['learner']} on {res['env']} after {res['env_steps']:,} steps, {res['episodes']} episodes per seed "
          "and policy (mean ± std over episodes)")
    for mode in EVAL_POLICIES:
        for s, p in enumerate(res["per_seed"]):
            m = p[mode]
            print(f"  {mode:<13} seed {s}: return {m['return']:.3f} ± {m['return_std']:.3f}  "
                  f"cost {m['cost']:.3f} ± {m['cost_std']:.3f}  length {m['length']:.1f}  {_tail(m)}")
    verdict = "safe" if res["safe"] else "not safe"
    print(f"{res['policy']} policy: mean return {res['return']:.3f}  mean cost {res['cost']:.3f}  -> {verdict} "
          f"(cost {'<' if res['safe'] else '>='} bound {res['safety_bound']:g}); {_tail(res[res['policy']])}")
    if "video" in res:
        print(f"video: {res['video']}")


def _tail(m: dict) -> str:
    """What a mean cost hides: the share of episodes over the bound, the worst tenth's mean, costly steps."""
    return (f"over bound {m['over_bound']:.0%}  CVaR{CVAR_ALPHA:g} {m['cost_cvar']:.3f}  "
            f"costly steps {m['costly_step_fraction']:.1%}")
