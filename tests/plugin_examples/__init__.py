"""A third-party crax plugin, one component of each kind, as docs/plugins.md quotes it.

A real plugin is its own installed package (``my_robots`` say); this one lives in the test tree
as ``tests.plugin_examples`` and tests/test_plugin_guide.py installs it through an entry point in
the group ``crax.plugins``, exactly as ``pip install`` of a package declaring one would.
"""
