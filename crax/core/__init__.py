"""The env core, the lowest layer: :class:`~crax.core.env.Env` and :class:`~crax.core.env.State` with
their wrappers, the :class:`~crax.core.context.Context` components read, task and config parameters
(:mod:`~crax.core.params`), MJCF scene helpers (:mod:`~crax.core.scene`), colours and the MJX import.
Nothing here imports another crax package."""
