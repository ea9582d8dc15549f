"""Tasks: env ids, ``crax.make`` and ``crax.parameters`` (:mod:`~crax.tasks.catalog`), and components added
to a task by name (:mod:`~crax.tasks.compose`). Reads the plugin registry; below runs, studies and the CLI."""
