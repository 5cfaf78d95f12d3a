"""Mocap bodies through the Python API: ``Sim.mocap_pos`` / ``Sim.mocap_quat`` follow
qpos's rules (views read-only for numpy, item assignment through ``sap_set``: validated,
poses recomputed), resets restore the compiled pose or a keyframe's mpos/mquat. Expected
values come from the scene file (scenes/mocap_paddle.xml) and rotation algebra; the C
tests (tests/test_mocap.c) hold the MuJoCo oracle."""

from __future__ import annotations

import numpy as np
import pytest

import sapsim
from conftest import SCENES

PADDLE = SCENES / "mocap_paddle.xml"
COMPILED_POS = [-0.2, 0.0, 0.06]  # <body name="paddle" mocap="true" pos=...>
KEY_POS = [-0.06, 0.0, 0.06]  # keyframe "contact" mpos


@pytest.fixture
def sim():
    return sapsim.Sim(PADDLE, nworld=3, preset="approx64", device="cpu")


def test_shapes_and_compiled_pose(sim):
    assert sim.model.nmocap == 1
    assert sim.mocap_pos.shape == (3, 1, 3) and sim.mocap_quat.shape == (3, 1, 4)
    np.testing.assert_array_equal(sim.mocap_pos[:, 0], np.tile(COMPILED_POS, (3, 1)))
    np.testing.assert_array_equal(sim.mocap_quat[:, 0], np.tile([1.0, 0, 0, 0], (3, 1)))
    assert "mocap_pos" in sapsim.FIELDS and sim.get("mocap_quat").shape == (3, 4)


def test_write_moves_the_body_and_its_children(sim):
    """Item assignment writes the touched worlds only; the paddle (body 1) sits at the
    written pose and the handle (body 2, 0.15 m up the paddle's z axis) follows; the
    stored quaternion stays as written (normalised on use)."""
    sim.mocap_pos[1, 0] = [0.3, -0.2, 0.5]
    q = np.array([2.0, 0.0, 2.0, 0.0])  # 90 degrees about y, length 2.83
    sim.mocap_quat[1] = q
    np.testing.assert_array_equal(sim.get("mocap_pos")[1], [0.3, -0.2, 0.5])
    np.testing.assert_array_equal(sim.get("mocap_quat")[1], q)
    np.testing.assert_array_equal(sim.get("mocap_pos")[[0, 2]], np.tile(COMPILED_POS, (2, 1)))
    np.testing.assert_allclose(sim.xpos[1, 1], [0.3, -0.2, 0.5], atol=1e-15)
    np.testing.assert_allclose(sim.xquat[1, 1], q / np.linalg.norm(q), atol=1e-15)
    # R_y(90 deg) (0, 0, 0.15) = (0.15, 0, 0)
    np.testing.assert_allclose(sim.xpos[1, 2], [0.45, -0.2, 0.5], atol=1e-12)
    # whole-property assignment, broadcast over worlds
    sim.mocap_pos = [[0.0, 0.0, 1.0]]
    np.testing.assert_array_equal(sim.get("mocap_pos"), np.tile([0.0, 0.0, 1.0], (3, 1)))


def test_bad_values_raise_and_change_nothing(sim):
    pos, quat = sim.get("mocap_pos"), sim.get("mocap_quat")
    with pytest.raises(sapsim.NonFiniteError, match=r"mocap_pos of world 2, index 1 is not finite"):
        sim.mocap_pos[2, 0, 1] = np.nan
    with pytest.raises(sapsim.ArgumentError, match="mocap_quat of world 0, mocap body 0 is zero"):
        sim.mocap_quat[0] = 0.0
    with pytest.raises(ValueError, match="read-only"):
        sim.mocap_pos[0][0, 0] = 1.0  # a slice is a plain read-only view
    np.testing.assert_array_equal(sim.get("mocap_pos"), pos)
    np.testing.assert_array_equal(sim.get("mocap_quat"), quat)


def test_reset_restores_compiled_pose_or_keyframe(sim):
    sim.mocap_pos = [[1.0, 1.0, 1.0]]
    sim.reset("contact", worlds=[1])
    np.testing.assert_array_equal(sim.mocap_pos[1, 0], KEY_POS)
    np.testing.assert_array_equal(sim.mocap_pos[0, 0], [1.0, 1.0, 1.0])
    sim.reset()
    np.testing.assert_array_equal(sim.mocap_pos[:, 0], np.tile(COMPILED_POS, (3, 1)))


def test_moving_paddle_pushes_the_box(sim):
    """From the keyframe (the paddle touching the box), moving the paddle 5 cm along x
    over 0.1 s moves the box ahead of it (box x = qpos[1]); a world whose paddle holds
    still keeps its box."""
    sim.reset("contact")
    for k in range(50):
        sim.mocap_pos[0, 0, 0] = KEY_POS[0] + 0.001 * (k + 1)
        sim.step()
    x = sim.get("qpos")[:, 1]
    assert x[0] > 0.03 and abs(x[1]) < 1e-3, x
