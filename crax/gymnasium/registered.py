"""Importing this module registers every crax env with Gymnasium (:func:`crax.gymnasium.register_envs`).

It exists for tools that take only an id string: ``gymnasium.make("crax.gymnasium.registered:crax/PointGoal1")``
imports it before looking the id up. Nothing in crax imports it; call ``crax.gymnasium.register_envs()``
in your own code instead.
"""

from crax.gymnasium.registration import register_envs

register_envs()
