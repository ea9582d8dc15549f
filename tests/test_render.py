"""crax.render: frames of states, cameras, the cost tint, videos, `crax render` and `crax eval --video`.

Most frames here come from states built by hand (the env's model pose with the agent moved), so
only two MJX programs compile: one 3-step PointGoal1 rollout (shared with the `crax render` test
through the persistent compilation cache: same env, steps and seed) and the tiny run's evaluation.
"""

import os

os.environ.setdefault("MUJOCO_GL", "egl")  # before any GL context exists; respected by crax.render

import dataclasses  # noqa: E402
import functools  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import imageio.v3 as iio  # noqa: E402
import jax  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from flax import nnx  # noqa: E402

import crax  # noqa: E402
from crax import (
    cli,
    render,
    runs,  # noqa: E402
    video,
)
from crax.cli import eval as eval_cli  # noqa: E402
from crax.learners import PPOLag  # noqa: E402
from crax.learners.on_policy.trainer import Trainer  # noqa: E402
from crax.runs import checkpoint as ckpt  # noqa: E402
from tests import trees  # noqa: E402
from tests.learners.conftest import tiny  # noqa: E402
from tests.learners.toy_env import ToyEnv  # noqa: E402

STEPS = 3
W, H = 64, 48


@functools.cache
def point():
    """PointGoal1 (default episode length, as `crax render PointGoal1` makes it) and a 3-step random rollout."""
    env = crax.make("PointGoal1")
    return env, render.rollout(env, None, jax.random.key(0), STEPS)


@functools.cache
def ant():
    return crax.make("AntVelocity1")


def posed(env, qpos=None, cost=0.0):
    """A State of ``env`` without running it: the model's rest pose (or ``qpos``), zero velocity."""
    m = env.unwrapped.mj_model
    shapes = env.state_shapes
    data = jax.tree.map(lambda x: np.zeros(x.shape, x.dtype), shapes.data)
    data = data.replace(qpos=np.array(m.qpos0 if qpos is None else qpos, np.float32),
                        mocap_pos=np.array(m.body_pos[m.body_mocapid >= 0] if m.nmocap else data.mocap_pos, np.float32),
                        mocap_quat=np.tile(np.array([1.0, 0, 0, 0], np.float32), (m.nmocap, 1)))
    return shapes.replace(data=data, cost=np.float32(cost))


def red(frame):
    """Mask of the cost-tinted agent's pixels."""
    f = frame.astype(int)
    return (f[..., 0] > 100) & (f[..., 0] > 2.5 * f[..., 1]) & (f[..., 0] > 2.5 * f[..., 2])


def centroid(mask):
    rows, cols = np.nonzero(mask)
    return cols.mean(), rows.mean()


def frame0(states):
    return trees.take(states, 0)


# ---- frames ---------------------------------------------------------------------------------------


def charcoal(frame):
    """Mask of the cost-free agent's pixels: dark and grey (palette.AGENT, shaded)."""
    f = frame.astype(int)
    return (f.max(axis=-1) < 90) & (f.max(axis=-1) - f.min(axis=-1) < 15)


def zone_blue(frame):
    """Mask of the hazard zones' pixels (palette.HAZARD_ZONE over the floor): blue well above red and green."""
    f = frame.astype(int)
    return (f[..., 2] > 100) & (f[..., 2] > 1.4 * f[..., 0]) & (f[..., 2] > 1.4 * f[..., 1])


def test_frame_has_the_size_asked_and_shows_a_scene():
    """The tracking view of the reset state: the charcoal agent at the centre (the camera looks at its
    torso), on the light grey floor, with blue hazard zones in view."""
    env, states = point()
    img = render.render(env, frame0(states), width=W, height=H)
    assert img.shape == (H, W, 3) and img.dtype == np.uint8
    centre = np.zeros((H, W), bool)
    centre[H // 2 - 4: H // 2 + 4, W // 2 - 4: W // 2 + 4] = True
    agent = charcoal(img) & centre
    assert agent.sum() >= 6  # the 0.1 m sphere from 3 m: about 4 x 4 px at 64 x 48
    cx, cy = centroid(agent)
    assert abs(cx - (W - 1) / 2) < 1.5 and abs(cy - (H - 1) / 2) < 1.5, (cx, cy)
    # around the agent, the floor: light and grey
    f = img.astype(int)
    floor = (f.min(axis=-1) > 110) & (f.max(axis=-1) - f.min(axis=-1) < 25)
    assert floor[centre & ~charcoal(img)].mean() > 0.6
    assert zone_blue(img).sum() >= 20  # a hazard zone is 0.2-0.3 m across: tens of pixels each
    assert not red(img).any()  # no cost at reset: nothing is red


def test_trajectory_list_and_single_states_give_the_same_frames():
    env, states = point()
    assert states.obs.shape[0] == STEPS + 1  # the reset state, then one per step
    np.testing.assert_array_equal(np.asarray(states.info["steps"]), np.arange(STEPS + 1))
    frames = render.render(env, states, camera="top", width=W, height=H)
    assert frames.shape == (STEPS + 1, H, W, 3)
    as_list = render.render(env, [trees.take(states, t) for t in range(STEPS + 1)],
                            camera="top", width=W, height=H)
    np.testing.assert_array_equal(frames, as_list)
    np.testing.assert_array_equal(frames[2], render.render(env, trees.take(states, 2),
                                                           camera="top", width=W, height=H))
    # the training stack's packed states (crax.core.env.PackedState) draw the same scene
    packed = states.replace(data=jax.jit(jax.vmap(env.physics_model.pack))(states.data))
    np.testing.assert_array_equal(render.render(env, packed, camera="top", width=W, height=H), frames)
    np.testing.assert_array_equal(render.render(env, [trees.take(packed, t) for t in range(STEPS + 1)],
                                                camera="top", width=W, height=H), frames)


def test_top_view_puts_the_agent_where_it_is():
    """Top view of the 3 m walled arena: lookat (0, 0), half width 3.5 m framed at 1.05 × 3.5 m, so
    the 120 px height spans 7.35 m (16.3 px/m) and x, y show at (80 + 16.3 x, 60 − 16.3 y)."""
    env, _ = point()
    w, h = 160, 120  # the Point's 0.1 m sphere is 3 px across
    px_per_m = h / (2 * 1.05 * 3.5)
    spots = []
    for x, y in ((0.0, 0.0), (1.5, 0.0), (0.0, -2.0)):
        img = render.render(env, posed(env, [x, y, 0.0], cost=1.0), camera="top", width=w, height=h)
        spots.append(centroid(red(img)))
        assert abs(spots[-1][0] - (w / 2 + px_per_m * x)) < 1.5
        assert abs(spots[-1][1] - (h / 2 - px_per_m * y)) < 1.5
    assert spots[1][0] - spots[0][0] == pytest.approx(1.5 * px_per_m, abs=1.0)


def test_cost_tints_only_the_agent_red():
    env, _ = point()
    state = posed(env, [0.5, 0.5, 0.0])
    calm = render.render(env, state, width=W, height=H)
    hurt = render.render(env, state.replace(cost=np.float32(1.0)), width=W, height=H)
    assert not red(calm).any()  # nothing else in the scene is red
    assert red(hurt).sum() >= 5  # the 0.1 m sphere seen from 3 m
    changed = np.any(calm != hurt, axis=-1)
    # every changed pixel is the agent's: inside the tinted blob's bounding box, grown by a pixel
    rows, cols = np.nonzero(red(hurt))
    r, c = np.nonzero(changed)
    assert r.min() >= rows.min() - 1 and r.max() <= rows.max() + 1
    assert c.min() >= cols.min() - 1 and c.max() <= cols.max() + 1


def test_a_fading_goal_is_drawn_with_the_tasks_alpha():
    """Safety-Gymnasium's Fading: ``info["task"]["alpha"]`` scales the goal's own alpha in the frame.
    Faded out, the frame is the frame without the goal (moved out of view); half faded, it differs
    from both; the model keeps its colours."""
    env = crax.make("SafetyPointFadingEasy0-v0")
    m = env.unwrapped.mj_model
    goal = env.unwrapped.suite.objects["goal"]
    state = posed(env, [0.0, 0.0, 0.0])

    def at(xy, alpha):
        mocap = np.array(state.data.mocap_pos)
        mocap[goal.mocap_ids[0]] = [*xy, goal.z]  # the model parks it under the floor
        task = {**state.info["task"], "alpha": {"goal": np.float32(alpha)}}
        s = state.replace(data=state.data.replace(mocap_pos=mocap), info={**state.info, "task": task})
        return render.render(env, s, camera="top", width=W, height=H)

    full, half, gone, away = at([0.5, 0.0], 1.0), at([0.5, 0.0], 0.5), at([0.5, 0.0], 0.0), at([50.0, 50.0], 1.0)
    np.testing.assert_array_equal(gone, away)
    assert np.any(full != half) and np.any(half != gone)
    rgba = render._scene(env).model.geom_rgba[goal.geom_ids[0]]
    np.testing.assert_array_equal(rgba, m.geom_rgba[goal.geom_ids[0]])


def test_cameras_differ_and_unknown_ones_are_rejected():
    env, states = point()
    s = frame0(states)
    track = render.render(env, s, camera="track", width=W, height=H)
    top = render.render(env, s, camera="top", width=W, height=H)
    assert np.mean(np.abs(track.astype(int) - top.astype(int))) > 10
    with pytest.raises(ValueError, match="unknown camera 'side'; valid choices: track, top"):
        render.render(env, s, camera="side")
    with pytest.raises(ValueError, match="width must be an integer in"):
        render.render(env, s, width=0)


def test_both_cameras_follow_a_locomotion_body():
    """AntVelocity1 has no arena: the top view and the tracking view keep the torso at the centre."""
    env = ant()
    qpos = np.array(env.unwrapped.mj_model.qpos0)
    for x in (0.0, 4.0):
        qpos[:2] = (x, -1.0)
        for camera in ("top", "track"):
            img = render.render(env, posed(env, qpos, cost=1.0), camera=camera, width=W, height=W)
            cx, cy = centroid(red(img))
            assert red(img).sum() > 30
            assert abs(cx - W / 2) < 3, (camera, x, cx)
            if camera == "top":
                assert abs(cy - W / 2) < 3, (camera, x, cy)


def test_bad_states_are_clear_errors():
    env, states = point()
    batched = jax.tree.map(lambda x: x[None], states)
    with pytest.raises(ValueError, match="one unbatched State or a trajectory"):
        render.render(env, batched)
    other = ant()
    with pytest.raises(ValueError, match="were they produced by this env"):
        render.render(other, frame0(states))
    with pytest.raises(ValueError, match="empty sequence"):
        render.render(env, [])


def test_first_episode_ends_at_the_first_done():
    _, states = point()
    done = np.array([0.0, 0.0, 1.0, 1.0], np.float32)
    cut = render.first_episode(states.replace(done=done))
    assert cut.obs.shape[0] == 3  # reset state, step 1, step 2 (done)
    assert render.first_episode(states.replace(done=np.zeros(4, np.float32))).obs.shape[0] == 4


# ---- videos ---------------------------------------------------------------------------------------


def test_video_round_trip(tmp_path):
    env, states = point()
    frames = render.render(env, states, camera="top", width=W, height=H)
    path = video.write_video(tmp_path / "v.mp4", frames, fps=12.5)
    back = iio.imread(path, index=None)
    assert back.shape == frames.shape
    assert np.mean(np.abs(back.astype(int) - frames.astype(int))) < 8  # lossy, but the same pictures
    assert iio.immeta(path)["fps"] == pytest.approx(12.5)
    gif = video.write_video(tmp_path / "v.gif", frames, fps=10)
    assert iio.imread(gif, index=None).shape == frames.shape
    odd = video.write_video(tmp_path / "odd.mp4", frames[:, :47, :63], fps=10)
    assert iio.imread(odd, index=None).shape == (STEPS + 1, 48, 64, 3)  # padded to even sizes


def test_save_video_runs_in_real_time_by_default(tmp_path):
    env, states = point()
    path = render.save_video(env, states, tmp_path / "v.mp4", width=W, height=H)
    assert iio.immeta(path)["fps"] == pytest.approx(1 / env.dt)
    assert iio.imread(path, index=None).shape == (STEPS + 1, H, W, 3)


@pytest.mark.parametrize(("args", "message"), [
    (("v.avi", np.zeros((2, 8, 8, 3), np.uint8), 10), "must end in one of .mp4, .gif"),
    (("v.mp4", np.zeros((2, 8, 8), np.uint8), 10), "frames must be a \\(T, H, W, 3\\) uint8 array"),
    (("v.mp4", np.zeros((2, 8, 8, 3), np.uint8), 0), "fps must be a positive number"),
])
def test_write_video_bad_input(tmp_path, args, message):
    with pytest.raises(ValueError, match=message):
        video.write_video(tmp_path / args[0], *args[1:])


# ---- command line ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_render_command_writes_the_rollout(tmp_path, capsys):
    env, states = point()
    out = tmp_path / "ep.mp4"
    cli.main(["render", "PointGoal1", "--out", str(out), "--steps", str(STEPS), "--camera", "top",
              "--width", str(W), "--height", str(H)])
    assert capsys.readouterr().out.strip() == str(out)
    frames_read = iio.imread(out, index=None)
    expected = render.render(env, states, camera="top", width=W, height=H)  # same env, seed and steps
    assert frames_read.shape == expected.shape
    assert np.mean(np.abs(frames_read.astype(int) - expected.astype(int))) < 8


@pytest.mark.parametrize(("args", "message"), [
    (["render", "PointGoal9", "--out", "x.mp4"], "valid levels: 1, 2, 3"),
    (["render", "PointGoal1", "--out", "x.avi"], "must end in one of .mp4, .gif"),
    (["render", "PointGoal1", "--out", "x.mp4", "--width", "0"], "--width must be in [1, 4096]"),
])
def test_render_command_bad_input(args, message, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(args)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def _filled(x):
    """A concrete stand-in for an abstract array: zeros, or keys for key arrays."""
    if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        return jax.random.split(jax.random.key(0), int(np.prod(x.shape))).reshape(x.shape)
    return np.zeros(x.shape, x.dtype)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """An untrained PPO-Lag run on 4-step PointGoal1 episodes: its config and a checkpoint holding a
    freshly built learner (the env part of the state, which evaluation never reads, is zeros: no
    MJX program compiles here)."""
    run_dir = tmp_path_factory.mktemp("run")
    config = tiny(PPOLag.Config, num_seeds=1, total_steps=64)
    env_kwargs = {"episode_length": 4}
    ckpt.write_config(run_dir, learner=PPOLag.name, env_id="PointGoal1", env_kwargs=env_kwargs, config=config)
    trainer = Trainer(PPOLag, config, crax.make("PointGoal1", **env_kwargs))
    model = jax.tree.map(lambda x: np.asarray(x)[None], nnx.state(trainer._build(jax.random.key(0))))
    state = jax.tree.map(_filled, trainer.abstract_state()).replace(model=model)
    ckpt.save_checkpoint(run_dir, state, env_steps=0, iteration=0)
    return run_dir


@pytest.mark.slow
def test_eval_video_films_one_episode(tiny_run, tmp_path, capsys, monkeypatch):
    """``crax eval RUN --video``: the evaluation (tested with the learners, faked here to spare two
    MJX compiles) and then one filmed episode of the run's judged policy."""
    calls = []

    def evaluate(run_dir, episodes, *, seed, policy, physics):
        calls.append((run_dir, episodes, seed, policy, physics))
        return {"policy": "stochastic", "learner": "ppo-lag"}

    monkeypatch.setattr(eval_cli, "evaluate", evaluate)
    out = tmp_path / "eval.mp4"
    eval_cli.eval_main([str(tiny_run), "--episodes", "1", "--video", str(out), "--camera", "top", "--width", "96",
                      "--height", "64", "--json"])
    assert calls == [(str(tiny_run), 1, 0, None, None)]
    assert json.loads(capsys.readouterr().out)["video"] == str(out)
    frames_read = iio.imread(out, index=None)
    assert frames_read.shape == (5, 64, 96, 3)  # the reset frame and 4 steps: one whole episode
    assert frames_read.std() > 10


def test_eval_video_bad_path_fails_before_evaluating(tiny_run, capsys, monkeypatch):
    monkeypatch.setattr(eval_cli, "evaluate", lambda *a, **k: pytest.fail("evaluated"))
    with pytest.raises(SystemExit) as e:
        eval_cli.eval_main([str(tiny_run), "--video", "out.avi"])
    assert e.value.code == 2 and "must end in one of .mp4, .gif" in capsys.readouterr().err


class _Captured(Exception):
    pass


@pytest.mark.parametrize("judged", ["stochastic", "deterministic"])
@pytest.mark.slow
def test_eval_video_acts_with_the_judged_policy(tiny_run, tmp_path, monkeypatch, judged):
    """The video's policy is the run's judged one: the mean action (deterministic) ignores the key."""
    run = shutil.copytree(tiny_run, tmp_path / "run")
    record = ckpt.read_config(run)
    config = dataclasses.replace(ckpt.config_from_dict(PPOLag.Config, record["config"]), eval_policy=judged)
    ckpt.write_config(run, learner=record["learner"], env_id=record["env"], env_kwargs=record["env_kwargs"],
                      config=config)
    seen = {}

    def capture(env, policy, key, steps):
        seen.update(env=env, policy=policy, steps=steps)
        raise _Captured

    monkeypatch.setattr(render, "rollout", capture)
    with pytest.raises(_Captured):
        runs.eval_video(run, tmp_path / "v.mp4")
    obs = np.linspace(-1, 1, seen["env"].observation_size).astype(np.float32)
    a, b = (np.asarray(seen["policy"](obs, jax.random.key(k))) for k in (1, 2))
    assert seen["steps"] == 4 and a.shape == (2,) and np.all(np.abs(a) <= 1)
    assert np.array_equal(a, b) == (judged == "deterministic")


# ---- no OpenGL ------------------------------------------------------------------------------------


def test_unknown_backend_names_the_choices(monkeypatch):
    env, states = point()
    monkeypatch.setattr(render, "_backend", None)
    monkeypatch.setenv("MUJOCO_GL", "bogus")
    with pytest.raises(render.RenderingUnavailable, match="MUJOCO_GL='bogus'.*one of egl, osmesa, glfw"):
        render.render(env, frame0(states), width=8, height=6)  # a size no renderer has yet


NO_GL = """
import jax, numpy as np, crax
from crax import render
env = crax.make("PointGoal1")
shapes = env.state_shapes
state = shapes.replace(data=jax.tree.map(lambda x: np.zeros(x.shape, x.dtype), shapes.data), cost=np.float32(0))
try:
    render.render(env, state, width=8, height=8)
except render.RenderingUnavailable as e:
    print("RenderingUnavailable:", e)
"""


@pytest.mark.slow  # a fresh process per case: the GL backend is chosen once per process
@pytest.mark.parametrize(("env_vars", "expected"), [
    ({"MUJOCO_GL": "glfw"}, "(MUJOCO_GL=glfw): glfw: "),
    ({"PYOPENGL_PLATFORM": "glx"}, "(MUJOCO_GL unset, tried egl then osmesa): egl: ImportError"),
])
def test_no_working_backend_is_one_clear_error(env_vars, expected):
    """No display for glfw; a PyOpenGL platform that neither headless backend can use."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "MUJOCO_GL",
                                                            "PYOPENGL_PLATFORM")}
    out = subprocess.run([sys.executable, "-c", NO_GL], env={**env, **env_vars}, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert expected in out.stdout
    assert "Set MUJOCO_GL to one of egl, osmesa, glfw" in out.stdout
    assert "Traceback" not in out.stderr


def test_render_needs_a_task_env():
    with pytest.raises(ValueError, match="render needs a crax task env .* got ToyEnv"):
        render.render(ToyEnv(), None)


def test_observed_images_are_placed_beside_the_frame():
    frames = np.zeros((2, 40, 30, 3), np.uint8)
    rgb = np.full((2, 16, 16, 3), 200, np.uint8)
    depth = np.full((2, 8, 8, 1), 7, np.uint8)
    out = render.beside(frames, {"camera": rgb, "depth": depth})
    # 16 px scaled by 2 to 32 of 40 rows, centred; 8 px by 5 to 40
    assert out.shape == (2, 40, 30 + 32 + 40, 3)
    assert np.all(out[:, 4:36, 30:62] == 200) and np.all(out[:, :4, 30:62] == 0) and np.all(out[:, 36:, 30:62] == 0)
    assert np.all(out[:, :, 62:] == 7)


def test_a_camera_tasks_render_shows_what_it_saw():
    env = crax.make("PointGoal1", sensors={"camera": {"width": 8, "height": 8}})
    state = jax.jit(env.reset)(jax.random.key(0))
    plain = render.render(env, state, width=W, height=H, views=False)
    both = render.render(env, state, width=W, height=H)
    scale = H // 8
    assert plain.shape == (H, W, 3) and both.shape == (H, W + 8 * scale, 3)
    np.testing.assert_array_equal(both[:, :W], plain)
    np.testing.assert_array_equal(both[: 8 * scale: scale, W::scale], np.asarray(state.obs["camera"]))
