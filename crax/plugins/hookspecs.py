"""Hook specifications of the ``crax`` plugin system.

A plugin is a module (or object) with functions decorated by :data:`hookimpl`. Built-in components
are registered by :mod:`crax.plugins.builtin` exactly like third-party ones; installed
distributions are found through their entry points in the group ``crax.plugins``::

    [project.entry-points."crax.plugins"]
    my_robots = "my_robots.plugin"

Every component hook returns a sequence of classes, each with a unique class attribute ``name``;
``crax_register_catalogues`` returns catalogues of env ids, the only source of the ids crax builds.
Hooks are called with keyword arguments only. docs/plugins.md describes what each kind of class
must define, with a complete example of each.
"""

from __future__ import annotations

import pluggy

PROJECT = "crax"
ENTRY_POINT_GROUP = "crax.plugins"

KINDS = ("bodies", "sensors", "hazards", "constraints", "suites", "learners")
SINGULAR = {"bodies": "body", "sensors": "sensor", "hazards": "hazard", "constraints": "constraint", "suites": "suite", "learners": "learner"}
"""The kinds of component a plugin registers, one hook each (``crax_register_<kind>``), and their singular forms."""

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def crax_register_bodies() -> list[type]:
    """Body classes (subclasses of :class:`crax.bodies.Body`)."""
    ...


@hookspec
def crax_register_sensors() -> list[type]:
    """Sensor classes (subclasses of :class:`crax.sensors.Sensor`)."""
    ...


@hookspec
def crax_register_hazards() -> list[type]:
    """Hazard / prop classes: placeables (subclasses of :class:`crax.objects.Placeable`)."""
    ...


@hookspec
def crax_register_constraints() -> list[type]:
    """Constraint (cost) term classes (subclasses of :class:`crax.costs.Constraint`)."""
    ...


@hookspec
def crax_register_suites() -> list[type]:
    """Suite classes (subclasses of :class:`crax.suites.Suite`)."""
    ...


@hookspec
def crax_register_learners() -> list[type]:
    """Learner classes (subclasses of :class:`crax.learners.Learner` through a family's base,
    ``crax.learners.ConstrainedPPO`` or ``crax.learners.OffPolicyLearner``)."""
    ...


FAMILIES = "families"
"""The hook ``crax_register_families``: not a component kind (its items are (family, trainer) pairs)."""


@hookspec
def crax_register_families() -> list:
    """Learner families as ``(family base class, trainer class)`` pairs: a learner (``crax_register_learners``)
    is trained by the trainer of the first registered family it subclasses (crax's own:
    ``crax.learners.ConstrainedPPO`` with ``crax.learners.Trainer``, ``crax.learners.OffPolicyLearner``
    with ``crax.learners.OffPolicyTrainer``). A plugin that brings a new family registers its pair here."""
    ...


CATALOGUES = "catalogues"
"""The hook ``crax_register_catalogues``: not a component kind (its items are catalogue objects, not classes)."""


@hookspec
def crax_register_catalogues() -> list:
    """Catalogues of env ids (instances of ``crax.suites.catalogue.Catalogue``, e.g. a
    ``TableCatalogue``), each with a unique ``name``: every id ``crax.make`` builds, ``crax.env_ids()``
    and ``crax list`` give comes from one (crax's own: the paper's ``{Body}{Suite}{Level}`` and
    Safety-Gymnasium's ``Safety<Agent><Task><Level>-v<N>``)."""
    ...
