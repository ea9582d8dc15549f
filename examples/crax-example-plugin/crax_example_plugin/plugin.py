"""The hooks crax calls: this module is the entry point ``crax_example`` in ``crax.plugins``."""

from crax import hookimpl


@hookimpl
def crax_register_bodies():
    from crax_example_plugin.sled import Sled

    return [Sled]


@hookimpl
def crax_register_learners():
    from crax_example_plugin.learner import CappedPPOLag

    return [CappedPPOLag]


@hookimpl
def crax_register_constraints():
    from crax_example_plugin.tether import Tether

    return [Tether]


@hookimpl
def crax_register_sensors():
    from crax_example_plugin.pose import Pose

    return [Pose]


@hookimpl
def crax_register_catalogues():
    from crax_example_plugin.catalogue import SLED_CIRCUIT

    return [SLED_CIRCUIT]
