"""Sim.sensordata (MuJoCo's sensors computed by sapsim) against independent oracles:
MuJoCo's conventions applied to the state by hand (a free joint's qpos is the body pose, its
qvel the world linear and body angular velocity; hinge sensors read qpos / qvel; a motor's
force is its clamped control) on scenes/ant_sensors.xml, and the C library's sensor layout
as the CLI reports it. The MuJoCo 4.0 oracle itself runs in tests/test_sensors.c."""

from __future__ import annotations

import re

import numpy as np
import pytest

import sapsim
from conftest import SCENES, run_cli

SCENE = str(SCENES / "ant_sensors.xml")


def quat_mat(q: np.ndarray) -> np.ndarray:
    """Rotation matrices of unit quaternions (w, x, y, z), shape (n, 3, 3)."""
    w, x, y, z = q.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
    ], -2)


def expected(sim: sapsim.Sim) -> dict[str, np.ndarray]:
    q, v = np.array(sim.qpos), np.array(sim.qvel)
    quat = q[:, 3:7] / np.linalg.norm(q[:, 3:7], axis=1, keepdims=True)
    R = quat_mat(quat)
    out = {"torso_pos": q[:, :3], "torso_quat": quat, "torso_up": R[:, :, 2],
           "torso_vel": v[:, :3], "torso_angvel": np.einsum("nij,nj->ni", R, v[:, 3:6]),
           "time": np.array(sim.time)[:, None]}
    return out


@pytest.mark.parametrize("preset", ["approx32", "approx64"])
def test_ant_sensors_follow_the_state(preset):
    sim = sapsim.Sim(SCENE, nworld=3, preset=preset)
    m = sim.model
    assert m.nsensor == 32 and m.nsensordata == 47
    assert sim.sensordata.shape == (3, 47) and sim.sensordata.dtype == np.float64
    sim.reset("init")
    rng = np.random.default_rng(5)
    sim.ctrl[:] = rng.uniform(-1.5, 1.5, size=(3, m.nu))  # beyond ctrlrange: clamped
    for _ in range(3):
        sim.step(40)
        for name, want in expected(sim).items():
            np.testing.assert_allclose(sim.sensor(name), want, rtol=0, atol=1e-12, err_msg=name)
        jp = [i for i, n in enumerate(m.sensor_names) if not n][:16]
        # unnamed sensors in order: 8 jointpos, 8 jointvel, then 8 actuatorfrc
        cols = np.concatenate([np.arange(m.sensor(i).start, m.sensor(i).stop) for i in jp])
        np.testing.assert_array_equal(sim.sensordata[:, cols[:8]], np.array(sim.qpos)[:, 7:])
        np.testing.assert_array_equal(sim.sensordata[:, cols[8:]], np.array(sim.qvel)[:, 6:])
        frc = np.concatenate([sim.sensor(i) for i in range(23, 31)], axis=1)
        np.testing.assert_array_equal(frc, np.clip(sim.ctrl, -1, 1))


def test_sensors_at_reset_and_after_a_state_write():
    sim = sapsim.Sim(SCENE, nworld=2)
    sim.step(20)
    sim.reset("init", worlds=[1])
    want = expected(sim)
    np.testing.assert_allclose(sim.sensor("torso_pos")[1], want["torso_pos"][1], atol=1e-12)
    assert np.all(sim.sensor(23)[1] == 0), "acc sensors read 0 after a reset"
    # subtree com from the body masses and com positions (xipos: of the reset state)
    mass = sim.model.array("body_mass")
    xipos = sim.array("xipos").reshape(2, -1, 3)[1]
    com = (mass[1:, None] * xipos[1:]).sum(0) / mass[1:].sum()
    np.testing.assert_allclose(sim.sensor("com")[1], com, atol=1e-12)
    q = np.array(sim.qpos)
    q[:, 2] += 0.3
    sim.qpos = q
    v = np.array(sim.qvel)
    v[:, :6] = [[0.1, -0.2, 0.3, 1.0, -0.5, 0.25]] * 2
    sim.qvel = v
    sim.time = [4.0, 5.0]
    for name, w in expected(sim).items():
        np.testing.assert_allclose(sim.sensor(name), w, atol=1e-12, err_msg=name)
    with pytest.raises(ValueError):
        sim.sensordata[0, 0] = 1.0
    with pytest.raises(sapsim.ArgumentError):
        sim.sensor("nope")


def test_layout_equals_the_c_library(cli):
    """sensor_adr / sensor_dim and names as `sapsim info` (the C library) prints them."""
    out = run_cli(cli, "info", SCENE)
    rows = re.findall(r"sensor (\d+)\s+(\S+)\s+type (\d+)\s+sensordata\[(\d+):(\d+)\]", out)
    sim = sapsim.Sim(SCENE)
    assert len(rows) == sim.model.nsensor
    for i, name, _, lo, hi in rows:
        assert sim.model.sensor(int(i)) == slice(int(lo), int(hi))


def test_no_sensors():
    sim = sapsim.Sim(str(SCENES / "ant.xml"))
    assert sim.model.nsensor == 0 and sim.sensordata.shape == (1, 0)
