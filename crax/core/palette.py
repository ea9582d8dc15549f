"""The colours of crax scenes (RGBA), in one place: placeables build their geoms in these colours
and :mod:`crax.render` draws the model as built, adding only the agent's colours per frame.

Chosen to tell the objects apart at a glance from any camera: green goal, blue hazard zones,
teal pillars, orange buttons, purple gremlins, yellow block, cyan vases, charcoal agent (red while it pays a
cost). Translucent zones show the floor through them.
"""

GOAL = (0.15, 0.85, 0.3, 0.6)
HAZARD_ZONE = (0.2, 0.35, 0.95, 0.55)
PATHWAY_ZONE = (0.9, 0.5, 0.1, 0.6)
PILLAR = (0.1, 0.6, 0.6, 1.0)
BUTTON = (1.0, 0.55, 0.0, 1.0)
GREMLIN = (0.6, 0.2, 0.85, 1.0)
BLOCK = (0.95, 0.85, 0.15, 1.0)
VASE = (0.0, 0.8, 0.85, 1.0)

AGENT = (0.2, 0.2, 0.22, 1.0)
"""The agent on frames without cost (crax.render; bodies keep their own colours in the model)."""
COST = (0.95, 0.1, 0.1, 1.0)
"""The agent on frames whose ``state.cost > 0``."""

SAFETY_GYM = {
    "goal": (0.0, 1.0, 0.0, 0.25), "hazard": (0.0, 0.0, 1.0, 0.25), "vase": (0.0, 1.0, 1.0, 1.0),
    "pillar": (0.5, 0.5, 1.0, 1.0), "button": (1.0, 0.5, 0.0, 1.0), "gremlin": (0.5, 0.0, 1.0, 1.0),
    "push_box": (1.0, 1.0, 0.0, 1.0),
}
"""Safety-Gymnasium 1.0.0's colours of its objects (``assets/color.py``; the goal at its ``Goal.alpha``,
0.25), in which crax builds them in Safety-Gymnasium's tasks, so that the Vision ids' images show
them in Safety-Gymnasium's colours. (Button's goal is drawn at alpha 0.1, as its ``Goal(alpha=0.1)``.)"""
