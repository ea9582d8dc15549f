"""Writing frames to video files: the path checked before any rendering work, H.264 through the ffmpeg
that imageio-ffmpeg ships, or a GIF."""

from __future__ import annotations

import math
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np

VIDEO_SUFFIXES = (".mp4", ".gif")
"""The file kinds :func:`write_video` writes."""


def video_path(path: str | Path) -> Path:
    """``path`` as a Path; ValueError unless it ends in a suffix of :data:`VIDEO_SUFFIXES` and its
    folder exists or can be made (checked before any rendering work)."""
    path = Path(path)
    if path.suffix.lower() not in VIDEO_SUFFIXES:
        raise ValueError(f"video path {str(path)!r} must end in one of {', '.join(VIDEO_SUFFIXES)}")
    if path.is_dir():
        raise ValueError(f"video path {str(path)!r} is a folder; give a file name ending in "
                         f"{' or '.join(VIDEO_SUFFIXES)}")
    for folder in path.parents:
        if folder.exists():
            if not folder.is_dir():
                raise ValueError(f"cannot write the video {str(path)!r}: {str(folder)!r} is a file, not a folder")
            break
    return path


def write_video(path: str | Path, frames: np.ndarray, fps: float) -> Path:
    """Writes ``frames`` (T, H, W, 3) uint8 to ``path`` (``.mp4``: H.264 through the ffmpeg that
    imageio-ffmpeg ships; ``.gif``). Odd sizes are padded by one edge pixel (H.264 needs even ones).
    Returns the path."""
    path = video_path(path)
    frames = np.asarray(frames)
    if frames.ndim != 4 or frames.shape[-1] != 3 or frames.shape[0] < 1 or frames.dtype != np.uint8:
        raise ValueError(f"frames must be a (T, H, W, 3) uint8 array with T >= 1, got {frames.dtype} {frames.shape}")
    if not (isinstance(fps, int | float) and math.isfinite(fps) and fps > 0):
        raise ValueError(f"fps must be a positive number, got {fps!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".gif":
        import imageio.v3 as iio3

        iio3.imwrite(path, frames, duration=1000.0 / fps, loop=0)
        return path
    pad = ((0, 0), (0, frames.shape[1] % 2), (0, frames.shape[2] % 2), (0, 0))
    _write_h264(path, np.pad(frames, pad, mode="edge"), fps)
    return path


def _write_h264(path: Path, frames: np.ndarray, fps: float) -> None:
    """Pipes raw RGB frames into the ffmpeg that imageio-ffmpeg ships (H.264, yuv420p, CRF 15).

    Not through imageio's writer: imageio-ffmpeg starts ffmpeg with ``preexec_fn=os.setpgrp``, and a
    ``preexec_fn`` makes ``subprocess`` fork with Python's fork hooks and run Python code in the
    child, which JAX (its threads running) warns "will likely lead to a deadlock". Without one,
    ``subprocess`` starts ffmpeg by vfork/exec with no Python code in between.
    """
    import imageio_ffmpeg

    _, height, width, _ = frames.shape
    cmd = [imageio_ffmpeg.get_ffmpeg_exe(), "-y", "-v", "error", "-f", "rawvideo", "-pix_fmt", "rgb24",
           "-s", f"{width}x{height}", "-r", str(Fraction(fps).limit_denominator()), "-i", "-", "-an",
           "-c:v", "libx264", "-pix_fmt", "yuv420p", "-crf", "15", str(path)]
    # numpy's stubs give ndarray the buffer protocol (__buffer__) only for Python >= 3.12
    done = subprocess.run(cmd, input=memoryview(np.ascontiguousarray(frames)).cast("B"),  # pyright: ignore[reportArgumentType]
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    if done.returncode:
        raise RuntimeError(f"ffmpeg could not write {path} (exit code {done.returncode}): "
                           f"{done.stderr.decode(errors='replace').strip()[-2000:]}")
