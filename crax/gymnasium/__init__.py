"""Gymnasium and Safety-Gymnasium faces of crax envs.

    import crax.gymnasium

    env = crax.gymnasium.make("PointGoal1")                    # a gymnasium.Env
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    info["cost"], info["cost/contact"]                          # the step's cost and its terms

    envs = crax.gymnasium.make("PointGoal1", num_envs=1024)    # a gymnasium.vector.VectorEnv
    envs = crax.gymnasium.make("PointGoal1", safety_gymnasium=True)   # step -> (obs, r, cost, term, trunc, info)

:class:`CraxEnv` and :class:`CraxVectorEnv` wrap any crax :class:`crax.Env` (e.g. one with a
:class:`crax.learners.shared.budget_envs.SauteBudget`); the vector env autoresets on the next step, as Gymnasium's own
vector envs, or on the same step (``autoreset_mode=AutoresetMode.SAME_STEP``; its docstring has
the ``final_obs``/``final_info`` layout). :mod:`crax.gymnasium.safety` is the one-import-change
replacement for ``safety_gymnasium``; :mod:`crax.gymnasium.sb3` is a Stable-Baselines3 ``VecEnv``
(the ``sb3`` extra). :func:`register_envs` puts every crax id in Gymnasium's registry as
``crax/<id>`` (``gymnasium.make("crax/PointGoal1")``, ``gymnasium.make_vec(..., num_envs=1024)``).
"""

from crax.gymnasium.autoreset import AUTORESET_MODES
from crax.gymnasium.env import RENDER_MODES, CraxEnv
from crax.gymnasium.factory import make, make_vector
from crax.gymnasium.registration import gymnasium_id, register_envs
from crax.gymnasium.safety.wrappers import SafetyGymnasiumVectorWrapper, SafetyGymnasiumWrapper
from crax.gymnasium.vector import CraxVectorEnv

__all__ = [
    "AUTORESET_MODES", "RENDER_MODES", "CraxEnv", "CraxVectorEnv", "SafetyGymnasiumVectorWrapper", "SafetyGymnasiumWrapper",
    "gymnasium_id", "make", "make_vector", "register_envs",
]
