"""crax.video.write_video starts ffmpeg without forking JAX's threads through Python's fork hooks."""

import shutil
import warnings

import imageio.v3 as iio
import jax
import numpy as np
import pytest

from crax import video


@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")  # imageio's reader, here in the test, does fork
def test_writing_an_mp4_forks_nothing_that_jax_warns_about(tmp_path):
    jax.devices()  # JAX's backends are up: from here JAX warns on every os.fork()
    frames = np.zeros((5, 16, 24, 3), np.uint8)
    frames[:, :, :12] = (200, 40, 40)  # left half red, right half black
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        path = video.write_video(tmp_path / "v.mp4", frames, fps=12.5)
    assert not [w for w in caught if "fork" in str(w.message)], [str(w.message) for w in caught]
    back = iio.imread(path, index=None)
    assert back.shape == frames.shape
    assert np.mean(np.abs(back.astype(int) - frames.astype(int))) < 8
    assert iio.immeta(path)["fps"] == pytest.approx(12.5)


def test_an_ffmpeg_failure_names_the_file(tmp_path, monkeypatch):
    import imageio_ffmpeg

    monkeypatch.setattr(imageio_ffmpeg, "get_ffmpeg_exe", lambda: shutil.which("false"))  # an ffmpeg that fails
    with pytest.raises(RuntimeError, match=r"ffmpeg could not write .*v\.mp4 \(exit code 1\)"):
        video.write_video(tmp_path / "v.mp4", np.zeros((2, 8, 8, 3), np.uint8), fps=10)
