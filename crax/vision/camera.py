"""What a camera image holds: :class:`Camera`, and the rays through its pixels."""

from __future__ import annotations

import dataclasses
import math

import mujoco
import numpy as np


@dataclasses.dataclass(frozen=True)
class Camera:
    """A pinhole camera's image settings (hashable: pass it to ``jax.jit`` as a static argument).

    Attributes:
      width, height: image size in pixels.
      fovy: vertical field of view in degrees (MuJoCo's ``camera/fovy``); the horizontal one follows
        from the aspect ratio ``width / height``.
      rgb, depth, segmentation: which images to return (at least one).
      geomgroup: MuJoCo's geom group mask, one entry per group (``mujoco.mjNGROUP``): geoms of a group
        whose entry is 0 are not seen. Empty: every group is seen.
      bodyexclude: a body id, or several, whose geoms are not seen (the agent's own body, for a
        camera on it); -1: none.
      znear: the near plane, in units of the model's extent (MuJoCo's ``visual/map/znear``, default
        0.01): surfaces nearer than it along the optical axis are not seen, and a ray sees what lies
        behind them (as MuJoCo's OpenGL renderer clips them).
      zfar: the far plane, in units of the model's extent (MuJoCo's ``visual/map/zfar``, default 50):
        geoms farther along the optical axis are not seen, and a pixel that sees nothing reads this depth.
      background: the RGB colour, in [0, 1], of a pixel that sees nothing.
      rays_per_chunk: rays cast at once per image; a larger image is cast in chunks of this many
        pixels one after another, which bounds the memory of a big batch of images.
    """

    width: int
    height: int
    fovy: float = 45.0
    rgb: bool = True
    depth: bool = True
    segmentation: bool = False
    geomgroup: tuple[int, ...] = ()
    bodyexclude: int | tuple[int, ...] = -1
    znear: float = 0.01
    zfar: float = 50.0
    background: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rays_per_chunk: int = 16384

    def __post_init__(self):
        if self.width < 1 or self.height < 1:
            raise ValueError(f"Camera size must be positive, got {self.width}x{self.height}")
        if not 0 < self.fovy < 180:
            raise ValueError(f"Camera fovy must be in (0, 180) degrees, got {self.fovy}")
        if not (self.rgb or self.depth or self.segmentation):
            raise ValueError("Camera must return at least one of rgb, depth and segmentation")
        if self.geomgroup and len(self.geomgroup) != mujoco.mjNGROUP:
            raise ValueError(f"Camera geomgroup needs {mujoco.mjNGROUP} entries (or none), got {self.geomgroup}")
        if not 0 <= self.znear < self.zfar:
            raise ValueError(f"Camera needs 0 <= znear < zfar, got znear {self.znear} and zfar {self.zfar}")
        if self.rays_per_chunk < 1:
            raise ValueError(f"Camera rays_per_chunk must be positive, got {self.rays_per_chunk}")

    def rays(self) -> np.ndarray:
        """Unit directions (height, width, 3) float32 of the rays through the pixel centres, in the
        camera's frame (MuJoCo's: it looks along −z, y up, x right); row 0 is the top of the image,
        column 0 its left. A ray's z-depth is its length times ``-direction[..., 2]``."""
        half_y = math.tan(math.radians(self.fovy) / 2)
        half_x = half_y * self.width / self.height
        x = ((np.arange(self.width) + 0.5) / self.width * 2 - 1) * half_x
        y = (1 - (np.arange(self.height) + 0.5) / self.height * 2) * half_y
        grid = np.stack(np.broadcast_arrays(x[None, :], y[:, None], -np.ones((1, 1))), axis=-1)
        return (grid / np.linalg.norm(grid, axis=-1, keepdims=True)).astype(np.float32)
