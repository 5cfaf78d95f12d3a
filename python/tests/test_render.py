"""sapsim.render and python -m sapsim.replay: MuJoCo's renderer draws sapsim states.
Checks: a frame is not blank, it changes with the pose (the robot's joints), the pixels
that change lie where the robot is (the image centre, where the camera looks); a
trajectory written by the CLI replays to an MP4 and a GIF with the expected frame
count. Skips, naming the reason, when MuJoCo's bindings or OSMesa are missing
(make test installs both: python/requirements-test.txt, libosmesa6 in make deps)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import sapsim

from conftest import ROOT, SCENES, run_cli


def _render():
    try:
        from sapsim import render

        render.import_mujoco()
        # a 1-frame smoke render: OSMesa or EGL present and working
        render.render_frames(SCENES / "pendulum.xml", np.zeros(1), 32, 24)
    except Exception as e:  # noqa: BLE001 - the reason goes into the skip message
        pytest.skip(f"MuJoCo offscreen rendering unavailable: {type(e).__name__}: {e}")
    return render


def test_frame_shows_the_robot_and_follows_the_pose():
    render = _render()
    sim = sapsim.Sim(SCENES / "ant.xml", nworld=2, keyframe="init")
    q = sim.get("qpos")
    q[1, 7:] = [0.5, 0.3, -0.5, -0.3, 0.5, -0.3, -0.5, 0.3]  # other hip and ankle angles
    sim.set("qpos", q)
    frames = render.render_frames(SCENES / "ant.xml", sim.qpos, 160, 120)
    assert frames.shape == (2, 120, 160, 3) and frames.dtype == np.uint8
    for f in frames:
        assert f.std() > 10, "a blank frame"
    diff = np.abs(frames[0].astype(int) - frames[1].astype(int)).sum(-1) > 30
    assert diff.mean() > 0.01, "the frame does not change with the pose"
    ys, xs = np.nonzero(diff)
    assert abs(ys.mean() - 60) < 30 and abs(xs.mean() - 80) < 40, "the change is not where the robot is"
    # the cartpole's pole tilts in the image as qpos[1] changes
    cp = render.render_frames(SCENES / "cartpole.xml", [[0, 0], [0, 0.6]], 160, 120)
    assert np.abs(cp[0].astype(int) - cp[1].astype(int)).sum(-1).astype(bool).mean() > 0.005
    with pytest.raises(ValueError, match="nq = 15"):
        render.render_frames(SCENES / "ant.xml", np.zeros((1, 3)))


def test_replay_cli_writes_videos(tmp_path, cli):
    render = _render()
    import imageio.v2 as imageio

    traj = tmp_path / "traj.csv"
    run_cli(cli, "run", str(SCENES / "cartpole.xml"), "--steps", "60", "--worlds", "2", "--out", str(traj))
    times, qpos = render.load_trajectory_csv(traj, world=1)
    assert qpos.shape == (61, 2) and times[-1] == pytest.approx(0.3)
    for name in ("out.mp4", "out.gif"):
        out = tmp_path / name
        proc = subprocess.run([sys.executable, "-m", "sapsim.replay", str(SCENES / "cartpole.xml"), str(traj),
                               "--video", str(out), "--world", "1", "--fps", "40", "--size", "96x64"],
                              capture_output=True, text=True, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr
        if name.endswith(".gif"):
            frames = imageio.mimread(out)
            count, first = len(frames), frames[0]
        else:
            with imageio.get_reader(out) as reader:
                count, first = reader.count_frames(), reader.get_data(0)
        assert count == 13, (name, count)  # 0.3 s at 40 fps, both ends
        assert np.asarray(first).shape[:2] == (64, 96) and np.asarray(first).std() > 5
    bad = subprocess.run([sys.executable, "-m", "sapsim.replay", str(SCENES / "ant.xml"), str(traj), "--video",
                          str(tmp_path / "x.mp4")], capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 1 and "nq = 15" in bad.stderr


def test_replay_reads_binary_frames(tmp_path, cli):
    """The binary frames of the same run replay to the same video frames as its CSV (the
    states are equal bit for bit: test_simloop.py)."""
    _render()
    import imageio.v2 as imageio

    videos = []
    for fmt, name in (("csv", "traj.csv"), ("binary", "traj.sapf")):
        traj = tmp_path / name
        run_cli(cli, "run", str(SCENES / "cartpole.xml"), "--steps", "60", "--worlds", "2", "--out", str(traj),
                "--format", fmt)
        out = tmp_path / (name + ".gif")
        proc = subprocess.run([sys.executable, "-m", "sapsim.replay", str(SCENES / "cartpole.xml"), str(traj),
                               "--video", str(out), "--world", "1", "--fps", "40", "--size", "96x64"],
                              capture_output=True, text=True, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr
        videos.append(np.asarray(imageio.mimread(out)))
    assert videos[0].shape[0] == 13 and np.array_equal(videos[0], videos[1])
