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
