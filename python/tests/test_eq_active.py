"""Equality constraints switched per world through the Python API (``Sim.eq_active``,
``Sim.set_eq_active``; the C API's sap_setEqActive / sap_getEqActive). The oracle for a
released world is the same linkage stepped with the constraint off from the start in a batch
of its own (a world's step does not depend on the others); the C tests
(tests/test_eq_active.c) hold the MuJoCo oracle for the reset values."""

from __future__ import annotations

import numpy as np
import pytest

import sapsim
from conftest import SCENES

FOURBAR = SCENES / "fourbar.xml"  # one connect closes the loop


def make(nworld: int) -> sapsim.Sim:
    return sapsim.Sim(FOURBAR, nworld=nworld, preset="approx64", device="cpu")


def test_shape_reset_and_one_world():
    sim = make(3)
    assert sim.model.neq == 1
    assert sim.eq_active.shape == (3, 1) and sim.eq_active.dtype == bool and sim.eq_active.all()
    sim.set_eq_active(0, False, worlds=[1])
    np.testing.assert_array_equal(sim.eq_active[:, 0], [True, False, True])
    sim.eq_active = [[True], [True], [False]]
    np.testing.assert_array_equal(sim.eq_active[:, 0], [True, True, False])
    sim.eq_active = False  # broadcast
    assert not sim.eq_active.any()
    sim.reset(worlds=[0])  # back to eq_active0 in world 0 only
    np.testing.assert_array_equal(sim.eq_active[:, 0], [True, False, False])


def test_released_world_matches_unconstrained_run():
    sim, alone = make(3), make(1)
    sim.set_eq_active(0, False, worlds=[1])
    alone.set_eq_active(0, False)
    for _ in range(200):
        sim.ctrl = 0.05
        alone.ctrl = 0.05
        sim.step()
        alone.step()
    # world 1 swings as the released linkage alone; worlds 0 and 2 stay closed and agree
    np.testing.assert_allclose(sim.qpos[1], alone.qpos[0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(sim.qpos[0], sim.qpos[2], rtol=0, atol=1e-12)
    assert np.abs(sim.qpos[1] - sim.qpos[0]).max() > 1e-2


def test_bad_input_is_named():
    sim = make(2)
    with pytest.raises(sapsim.ArgumentError, match="equality 3"):
        sim.set_eq_active(3, False)
    with pytest.raises(sapsim.ArgumentError, match="world id 5"):
        sim.set_eq_active(0, False, worlds=[5])
    with pytest.raises(sapsim.ArgumentError, match="got 2"):
        sim.eq_active = [[1], [2]]
    with pytest.raises(sapsim.ArgumentError, match="do not fit"):
        sim.eq_active = np.ones((3, 1))
    assert sim.eq_active.all()  # nothing changed
