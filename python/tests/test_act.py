"""Actuator activations (``Sim.act``, MuJoCo's ``mjData.act``) through the Python API.
Expected values: the scene text (keyframe ``act``, actranges), closed forms of the
integrator and exact-filter dynamics under constant controls, and the C library's own
copies (``sap_get``). MuJoCo 4 itself is the oracle of tests/test_actdyn.c."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sapsim
from conftest import SCENES

ZOO = SCENES / "act_zoo.xml"
KEY_ACT = [0.3, -0.4, 0.5, 0.2, -0.1, 0.6, 0.4, 0.2]  # keyframe 'primed' in the scene


def test_act_shape_reset_and_keyframe():
    sim = sapsim.Sim(ZOO, nworld=3, preset="approx64")
    assert sim.na == 8 and sim.model.na == 8 and "act" in sapsim.FIELDS
    assert sim.act.shape == (3, 8) and sim.act.dtype == np.float64
    assert np.all(sim.act == 0)
    sim.reset(keyframe="primed")
    assert np.array_equal(sim.act, np.tile(KEY_ACT, (3, 1)))
    assert np.array_equal(sim.get("act"), sim.act)


def test_act_follows_closed_forms():
    """integrator (ctrl clamped to 1, act clamped to 0.8) and exact filter (tau 0.5 ms)"""
    sim = sapsim.Sim(ZOO, nworld=2, preset="approx64")
    h = sim.timestep
    ctrl = np.zeros((2, sim.nu))
    ctrl[:, 1] = [-0.6, 0.4]  # filterexact
    ctrl[:, 2] = 3.0  # integrator, ctrlrange [-1, 1]
    sim.ctrl[:] = ctrl
    adr = sim.model.array("actuator_actadr")
    for n in range(1, 301):
        sim.step(1)
        assert sim.act[0, adr[2]] == pytest.approx(min(n * h, 0.8), abs=1e-13)
        want = -0.6 * (1 - math.exp(-n * h / 0.0005))
        assert sim.act[0, adr[1]] == pytest.approx(want, abs=1e-14)
        assert sim.act[1, adr[1]] == pytest.approx(-want * 0.4 / 0.6, abs=1e-14)


def test_act_set_validated():
    sim = sapsim.Sim(ZOO, nworld=2, preset="approx64")
    a = np.linspace(-0.5, 0.5, 16).reshape(2, 8)
    sim.act = a
    assert np.array_equal(sim.get("act"), a)
    sim.act[1, 3] = 0.25  # in place: through sap_set
    assert sim.get("act")[1, 3] == 0.25
    bad = a.copy()
    bad[0, 5] = np.nan
    with pytest.raises(sapsim.NonFiniteError, match="act of world 0"):
        sim.act = bad
    assert sim.get("act")[0, 5] == a[0, 5]
