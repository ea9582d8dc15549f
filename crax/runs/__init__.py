"""Runs: training and evaluating a learner on an env, with run folders, checkpoints and results.

    from crax import runs
    result = runs.train("ppo-lag", PPOLag.Config(total_steps=2_000_000), "PointGoal1")
    runs.evaluate(result.run_dir, episodes=64)
    act = runs.load_policy(result.run_dir)

Modules: :mod:`~crax.runs.training` (which run: new, resumed, a curriculum; its folder and lock),
:mod:`~crax.runs.loop` (the loop that dispatches compiled iterations), :mod:`~crax.runs.transfer` (a
run started from another's learner parts), :mod:`~crax.runs.evaluation`, :mod:`~crax.runs.results`,
:mod:`~crax.runs.guards` (how a run stops), :mod:`~crax.runs.envs` (learners and envs by name),
:mod:`~crax.runs.checkpoint` (the run folder's files), :mod:`~crax.runs.files` (atomic writes, JSON
records read with a clear error), :mod:`~crax.runs.lock`, :mod:`~crax.runs.metrics` (metrics.jsonl,
TensorBoard, progress).
"""

from crax.runs.envs import env_class, get_learner, learners, make_env
from crax.runs.evaluation import eval_video, evaluate, load_policy
from crax.runs.guards import RunComplete, StorageFailed, Terminated, TrainingDiverged, check_memory, memory_estimate
from crax.runs.results import RESULTS_FILE, TrainResult
from crax.runs.training import complete_run, train

__all__ = [
    "RESULTS_FILE", "RunComplete", "StorageFailed", "Terminated", "TrainResult", "TrainingDiverged", "check_memory",
    "complete_run", "env_class", "eval_video", "evaluate", "get_learner", "learners", "load_policy", "make_env",
    "memory_estimate", "train",
]
