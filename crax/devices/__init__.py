"""Process-wide JAX and device settings (:mod:`~crax.devices.startup`), the LAPACK batch split
(:mod:`~crax.devices.lapack`), sharding over local devices and multi-host setup
(:mod:`~crax.devices.distributed`). Applied where crax starts work, never at import."""
