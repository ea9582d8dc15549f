"""The camera sensor: the image of the body's own camera, rendered inside the jitted step."""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

from crax.core.batch import any_in_batch
from crax.core.context import Context
from crax.core.params import POSITIVE, Choice, Range
from crax.sensors.base import ImageSensor
from crax.vision import raycast
from crax.vision.camera import Camera as CameraSettings

CHANNELS = {"rgb": 3, "depth": 1, "rgbd": 4, "segmentation": 1}
"""What an image holds, and its channels: colour, depth, both, or which geom each pixel sees."""

VISIBLE_GROUPS = (1, 1, 1, 0, 0, 0)
"""The geom groups seen by default: those MuJoCo's renderer draws by default (``mjvOption.geomgroup``)."""
ALL_GROUPS = (1,) * mujoco.mjNGROUP
"""Every geom group (Safety-Gymnasium's vision render turns every group on)."""

NEAR = 0.01
"""The default near plane (m): a camera on a robot sees what is a centimetre in front of it. Not the
model's own (``visual/map/znear`` times its extent): crax parks its mocap bodies 10 m below the floor
when it compiles, which makes the extent of a navigation scene about 11 m, and its near plane 11 cm."""

CAMERA = "vision"
"""The name of the camera a body declares in its MJCF where the agent sees from (Safety-Gymnasium's agents')."""


class CameraSensor(ImageSensor):
    """A ``height × width`` uint8 image from the body's camera, observed under ``key`` in a dict
    observation (:mod:`crax.core.observation`).

    The camera is the body's MJCF camera named ``camera`` (``vision`` by default: where
    Safety-Gymnasium's agents see from); it follows the body. The image is ray cast through the
    scene's geoms as they are posed after the step (:mod:`crax.vision.raycast`: pure JAX, so it runs
    batched inside the jitted step on any device), seeing the geom groups ``geomgroup`` shows (by
    default those MuJoCo's renderer shows by default) and nothing nearer than the near plane. Geoms
    of alpha 0 (crax's ray-only and collision-only proxies) are never seen. Channels:

    - ``rgb``: the geoms' colours with a headlight's shading;
    - ``depth``: z-depth mapped linearly from [0, ``depth_range``] metres to [0, 255], farther clipped;
    - ``rgbd``: both, depth last;
    - ``segmentation``: 1 + the id of the geom each pixel sees, 0 where none (a model with more than 254
      geoms is refused).

    Args:
      width, height: image size in pixels.
      channels: one of :data:`CHANNELS`.
      fovy: vertical field of view in degrees; None: the camera's own (MuJoCo's ``camera/fovy``).
      depth_range: the depth, in metres, that maps to 255.
      key: the observation's key for this image.
      camera: the camera's name in the body's MJCF.
      geomgroup: which geom groups are seen, one 0/1 entry per group (MuJoCo's ``mjvOption.geomgroup``);
        default :data:`VISIBLE_GROUPS`, :data:`ALL_GROUPS` for every group.
      near: the near plane's distance from the camera along its optical axis in metres (default
        :data:`NEAR`); None: the model's own, ``visual/map/znear`` times its extent (MuJoCo's renderer's;
        Safety-Gymnasium's Vision twins set their model's extent to Safety-Gymnasium's and use it).
      period: render every ``period``-th step of an episode (its reset, then steps ``period``, ``2·period``,
        …) and hold the last frame between (action-repeat papers' frame skip for the camera alone). A
        batch skips the ray cast on the steps where none of its envs is due: envs that start their
        episodes together (evaluation; training with ``desync_episodes`` off) save ``period``×; desynced
        envs are each still rendered only when due, but the batch casts its rays nearly every step.
    """

    name = "camera"
    params = {
        "width": Range(1, 1024, integer=True), "height": Range(1, 1024, integer=True),
        "channels": Choice(tuple(CHANNELS)), "fovy": Range(0.0, 180.0, lo_open=True, hi_open=True, optional=True),
        "depth_range": POSITIVE, "near": Range(0.0, None, optional=True),
        "period": Range(1, None, integer=True),
    }

    def __init__(self, width: int = 64, height: int = 64, channels: str = "rgb", *, fovy: float | None = None,
                 depth_range: float = 5.0, key: str = "camera", camera: str = CAMERA,
                 geomgroup: Sequence[int] = VISIBLE_GROUPS, near: float | None = NEAR, period: int = 1):
        if channels not in CHANNELS:
            raise ValueError(f"unknown camera channels {channels!r}; the choices are {', '.join(CHANNELS)}")
        geomgroup = tuple(int(g) for g in geomgroup)
        if len(geomgroup) != mujoco.mjNGROUP or not set(geomgroup) <= {0, 1}:
            raise ValueError(f"geomgroup needs one 0 or 1 per geom group ({mujoco.mjNGROUP}), got {geomgroup}")
        if near is not None and not near >= 0:
            raise ValueError(f"near must be a distance >= 0 (m) or None, got {near!r}")
        self.width, self.height, self.channels = int(width), int(height), channels
        self.fovy, self.depth_range, self.key, self.camera = fovy, float(depth_range), key, camera
        self.geomgroup, self.near = geomgroup, None if near is None else float(near)
        if not (isinstance(period, int | np.integer) and period >= 1):
            raise ValueError(f"the camera's period must be an integer >= 1 (render every period-th step), got {period!r}")
        self.period = int(period)
        self.shape = (self.height, self.width, CHANNELS[channels])

    def bind(self, m: mujoco.MjModel) -> None:
        name = f"agent/{self.camera}"
        camera_id = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_CAMERA, name)
        if camera_id < 0:
            names = [m.camera(i).name for i in range(m.ncam)]
            raise ValueError(f"the body has no camera {self.camera!r} (the model's cameras: {', '.join(names) or 'none'}); "
                             f"bodies that declare one: {', '.join(bodies_with_camera(self.camera)) or 'none'}")
        if self.channels == "segmentation" and m.ngeom > 254:
            raise ValueError(f"a segmentation image holds 254 geom ids in uint8; this model has {m.ngeom} geoms")
        self.camera_id = int(camera_id)
        fovy = float(m.cam_fovy[camera_id]) if self.fovy is None else float(self.fovy)
        # the near plane in units of the model's extent, as the ray cast (and MuJoCo's renderer) takes it
        znear = float(m.vis.map.znear) if self.near is None else self.near / float(m.stat.extent)
        self.settings = CameraSettings(
            self.width, self.height, fovy, rgb=self.channels in ("rgb", "rgbd"),
            depth=self.channels in ("depth", "rgbd"), segmentation=self.channels == "segmentation",
            geomgroup=self.geomgroup, znear=znear, zfar=float(m.vis.map.zfar))

    def observe_every(self, ctx: Context, held: jax.Array, steps: jax.Array) -> jax.Array:
        """The image after an episode's ``steps``-th step, given the one ``held`` since: :meth:`observe`
        when ``steps`` is a multiple of ``period``, else ``held``. The ray cast runs only when some env of
        the batch is due (:func:`crax.core.batch.any_in_batch`)."""
        if self.period == 1:
            return self.observe(ctx)
        due = steps % self.period == 0
        return jax.lax.cond(any_in_batch(due), lambda: jnp.where(due, self.observe(ctx), held), lambda: held)

    def observe(self, ctx: Context) -> jax.Array:
        out = raycast.render(ctx.model, ctx.data, self.settings, self.camera_id)
        parts = []
        if "rgb" in out:
            parts.append(out["rgb"])
        if "depth" in out:
            scaled = jnp.clip(out["depth"] / self.depth_range, 0.0, 1.0) * 255.0
            parts.append(jnp.round(scaled).astype(jnp.uint8)[..., None])
        if "segmentation" in out:
            parts.append((out["segmentation"] + 1).astype(jnp.uint8)[..., None])
        return jnp.concatenate(parts, axis=-1)


def bodies_with_camera(camera: str = CAMERA) -> tuple[str, ...]:
    """Names of the loaded body classes whose MJCF asset declares the camera ``camera`` (read as text,
    nothing compiled)."""
    from crax.bodies.base import Body

    found, classes = set(), [Body]
    while classes:
        cls = classes.pop()
        classes.extend(cls.__subclasses__())
        asset = vars(cls).get("asset")
        if isinstance(asset, str) and cls.asset_file().is_file() and f'<camera name="{camera}"' in cls.asset_file().read_text():
            found.add(cls.name)
    return tuple(sorted(found))
