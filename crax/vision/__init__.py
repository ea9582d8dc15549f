"""Pixels: camera images rendered inside the jitted env step.

:class:`~crax.vision.camera.Camera` says what an image holds (size, field of view, outputs, which
geoms it sees); :func:`crax.vision.raycast.render` draws one by casting a ray per pixel through
``mjx.ray``, on any device. Import the submodules; this package imports nothing itself.
"""
