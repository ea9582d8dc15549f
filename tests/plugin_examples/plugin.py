"""The hooks crax calls: this module is the package's entry point in the group ``crax.plugins``.

Each hook imports its classes inside the function, so crax loads a component's module only when
it collects that kind.
"""

from crax import hookimpl


@hookimpl
def crax_register_bodies():
    from tests.plugin_examples.disk import Disk

    return [Disk]


@hookimpl
def crax_register_sensors():
    from tests.plugin_examples.beacon import Beacon

    return [Beacon]


@hookimpl
def crax_register_hazards():
    from tests.plugin_examples.puddles import Puddles

    return [Puddles]


@hookimpl
def crax_register_constraints():
    from tests.plugin_examples.thrust_limit import ThrustLimit

    return [ThrustLimit]


@hookimpl
def crax_register_suites():
    from tests.plugin_examples.drift import Drift

    return [Drift]


@hookimpl
def crax_register_learners():
    from tests.plugin_examples.learner import SquaredCostPPO

    return [SquaredCostPPO]
