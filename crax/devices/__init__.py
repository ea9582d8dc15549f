"""Process-wide JAX and device settings (:mod:`~crax.devices.startup`), the XLA options of crax's own
programs (:mod:`~crax.devices.xla_options`), the LAPACK batch split (:mod:`~crax.devices.lapack`),
sharding over local devices and multi-host setup (:mod:`~crax.devices.distributed`). Applied where
crax starts work, never at import."""
