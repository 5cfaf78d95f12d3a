"""Python views of xfrc_applied and MuJoCo's body outputs (option body_outputs): shapes, the
in-place input check, the refusal without the option, and values against MuJoCo's Python
bindings at the same state (tests/test_body_outputs.c has the full C oracles)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import sapsim

SCENES = Path(__file__).resolve().parents[2] / "scenes"
ANT = SCENES / "ant.xml"


def test_shapes_and_refusal():
    sim = sapsim.Sim(ANT, nworld=2, body_outputs=1)
    nb, nv = sim.model.nbody, sim.nv
    assert sim.xfrc_applied.shape == (2, nb, 6)
    assert sim.cfrc_ext.shape == (2, nb, 6) and sim.cvel.shape == (2, nb, 6)
    assert sim.cinert.shape == (2, nb, 10) and sim.subtree_com.shape == (2, nb, 3)
    assert sim.qfrc_actuator.shape == (2, nv)
    plain = sapsim.Sim(ANT, nworld=2)
    for name in ("cfrc_ext", "cvel", "cinert", "subtree_com", "qfrc_actuator"):
        with pytest.raises(sapsim.ArgumentError, match="body_outputs=1"):
            getattr(plain, name)
        with pytest.raises(sapsim.ArgumentError, match="body_outputs=1"):
            plain.get(name)
    plain.xfrc_applied[1, 1, 2] = 5.0  # the input exists without the option
    assert plain.get("xfrc_applied")[1, 8] == 5.0


def test_xfrc_in_place_checked_and_reset(tmp_path):
    sim = sapsim.Sim(ANT, nworld=2, body_outputs=1)
    sim.xfrc_applied[0, 1, 2] = np.nan
    with pytest.raises(sapsim.NonFiniteError, match="xfrc_applied of world 0, index 8"):
        sim.step(1)
    sim.xfrc_applied = 0.0
    sim.reset()
    assert not sim.xfrc_applied.any() and not sim.cfrc_ext.any()
    # a free box of 2 kg without contacts: F = 5 N up on world 0 adds F/m t to its z velocity,
    # and cfrc_ext is exactly the applied force (at the com: no torque)
    box = tmp_path / "box.xml"
    box.write_text("<mujoco><option timestep='0.01'/><worldbody><body pos='0 0 1'><freejoint/>"
                   "<geom type='box' size='0.1 0.2 0.3' mass='2'/></body></worldbody></mujoco>")
    b = sapsim.Sim(box, nworld=2, preset="approx64", contacts=0, body_outputs=1)
    b.xfrc_applied[0, 1] = [0, 0, 5.0, 0, 0, 0]
    b.step(20)
    assert b.qvel[0, 2] - b.qvel[1, 2] == pytest.approx(5.0 / 2 * 0.2, rel=1e-12)
    np.testing.assert_allclose(b.cfrc_ext[0, 1], [0, 0, 0, 0, 0, 5.0], atol=1e-12)
    assert not b.cfrc_ext[1].any()
    b.reset()
    assert not b.xfrc_applied.any() and not b.cfrc_ext.any()


@pytest.mark.skipif(importlib.util.find_spec("mujoco") is None, reason="needs MuJoCo's Python bindings")
def test_state_outputs_match_mujoco():
    mujoco = pytest.importorskip("sapsim.render").import_mujoco()
    m = mujoco.MjModel.from_xml_path(str(ANT))
    d = mujoco.MjData(m)
    sim = sapsim.Sim(ANT, nworld=4, preset="approx64", body_outputs=1)
    rng = np.random.default_rng(0)
    q = m.qpos0 + rng.uniform(-0.3, 0.3, (4, m.nq))
    q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1, keepdims=True)
    v, u = rng.normal(size=(4, m.nv)), rng.uniform(-1, 1, (4, m.nu))
    sim.ctrl[:] = u
    sim.qpos = q
    sim.qvel = v
    for w in range(4):
        d.qpos[:], d.qvel[:], d.ctrl[:] = q[w], v[w], u[w]
        mujoco.mj_forward(m, d)
        for name in ("cvel", "cinert", "subtree_com", "qfrc_actuator"):
            np.testing.assert_allclose(getattr(sim, name)[w].reshape(-1), getattr(d, name).reshape(-1),
                                       rtol=1e-12, atol=1e-12, err_msg=name)
