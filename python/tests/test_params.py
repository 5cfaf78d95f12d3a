"""Per-world parameters (domain randomization) from Python. Oracles: the scene
compiled with the overridden values written into its MJCF (MuJoCo's compiler, then
sapsim) stepped as its own batch; a plain batch for the untouched worlds (bitwise);
sapsim's C messages for bad input."""

from __future__ import annotations

import numpy as np
import pytest

import sapsim
from conftest import SCENES

# a hinge arm with a position servo whose block slides on the floor: mass, inertia,
# damping, armature, frictionloss, gravity, friction, contact material and servo gains
# all act within a few hundred steps
ARM = """<mujoco><option timestep="0.002" gravity="{g}"/>
<worldbody><geom name="floor" type="plane" size="5 5 .1" friction="{ff} 0.005 0.0001"/>
<body name="arm" pos="0 0 0.6"><joint name="hinge" type="hinge" axis="0 1 0" damping="{d}" armature="{a}"
 frictionloss="{fl}"/><inertial pos="0.2 0 0" mass="{m}" diaginertia="{i1} {i2} {i3}"/></body>
<body name="block" pos="0 0 0.1"><freejoint/><geom name="box" type="box" size="0.1 0.1 0.1" mass="{mb}"
 friction="{fb} 0.005 0.0001"/></body></worldbody>
<actuator><position joint="hinge" kp="{kp}" kv="{kv}"/></actuator></mujoco>"""
BASE = dict(g="0 0 -9.81", ff=1, d=0.1, a=0.01, fl=0.05, m=1, i1=0.02, i2=0.03, i3=0.02, mb=1, fb=1, kp=50, kv=2)


def arm(**over: object) -> str:
    return ARM.format(**{**BASE, **over})


def run(sim: sapsim.Sim, steps: int) -> np.ndarray:
    sim.ctrl[:] = 0.4
    sim.qfrc_applied[:, 1] = 4.0  # push the block along x
    sim.step(steps)
    return np.concatenate([sim.get("qpos"), sim.get("qvel")], axis=1)


def test_override_matches_a_recompiled_scene():
    """World 1 overridden to other values steps as the scene compiled with them;
    worlds 0 and 2 stay bitwise the plain batch's."""
    values = dict(g="0.5 0 -3.7", d=0.7, a=0.002, fl=0.3, m=4.5, i1=0.05, i2=0.3, i3=0.27, mb=0.25,
                  ff=0.35, fb=0.2, kp=900, kv=25)
    sim = sapsim.Sim(arm(), nworld=3, preset="approx64")
    plain = sapsim.Sim(arm(), nworld=3, preset="approx64")
    other = sapsim.Sim(arm(**values), nworld=1, preset="approx64")
    body_mass = sim.get_param("body_mass", [1])[0]
    body_mass[1:] = [values["m"], values["mb"]]
    inertia = sim.get_param("body_inertia", [1])[0]
    inertia[1] = [values["i1"], values["i2"], values["i3"]]
    inertia[2] = other.get_param("body_inertia")[0][2]  # the box's, from MuJoCo's compiler
    friction = sim.get_param("geom_friction", [1])[0]
    friction[:, 0] = [values["ff"], values["fb"]]
    sim.randomize(worlds=[1], body_mass=body_mass, body_inertia=inertia, geom_friction=friction,
                  gravity=[0.5, 0, -3.7], dof_damping=[values["d"], 0, 0, 0, 0, 0, 0],
                  dof_armature=[values["a"], 0, 0, 0, 0, 0, 0], dof_frictionloss=[values["fl"], 0, 0, 0, 0, 0, 0],
                  actuator_kp=[values["kp"]], actuator_kv=[values["kv"]])
    for name in sapsim.PARAMS:
        if name not in ("geom_k", "geom_taud", "actuator_gain", "actuator_bias"):
            np.testing.assert_allclose(sim.get_param(name, [1]), other.get_param(name), rtol=1e-15, err_msg=name)
    a, b, c = run(sim, 300), run(plain, 300), run(other, 300)
    np.testing.assert_allclose(a[1], c[0], rtol=1e-9, atol=1e-9)
    assert np.array_equal(a[[0, 2]], b[[0, 2]])
    assert not np.allclose(a[1], b[1], atol=1e-3)


def test_set_get_shapes_masks_and_reset():
    sim = sapsim.Sim(SCENES / "ant.xml", nworld=4, keyframe="init")
    m = sim.model
    assert sim.param_shape("body_inertia") == (m.nbody, 3)
    assert sim.param_shape("geom_friction") == (m.ngeom, 3)
    assert sim.param_shape("gravity") == (3,) and sim.param_shape("actuator_kp") == (m.nu,)
    assert sim.get_param("body_mass").shape == (4, m.nbody)
    np.testing.assert_array_equal(sim.get_param("body_mass")[2], m.array("body_mass"))
    mask = np.array([False, True, False, True])
    sim.set_param("gravity", [0, 0, -1.62], worlds=mask)  # one row, broadcast to both worlds
    g = sim.get_param("gravity")
    np.testing.assert_array_equal(g[[1, 3]], [[0, 0, -1.62]] * 2)
    np.testing.assert_array_equal(g[[0, 2]], [m.gravity] * 2)
    np.testing.assert_array_equal(sim.param_overridden("gravity"), mask)
    scale = np.linspace(0.5, 2, 4)[:, None]
    sim.set_param("body_mass", sim.get_param("body_mass") * scale)
    np.testing.assert_allclose(sim.get_param("body_mass"), m.array("body_mass") * scale)
    sim.reset_params("gravity", worlds=[3])
    np.testing.assert_array_equal(sim.param_overridden("gravity"), [False, True, False, False])
    sim.reset_params()
    assert not any(sim.param_overridden(name).any() for name in sapsim.PARAMS)
    # after a reset to the model the batch is bitwise a plain one
    plain = sapsim.Sim(SCENES / "ant.xml", nworld=4, keyframe="init")
    for s in (sim, plain):
        s.reset("init")
        s.ctrl[:] = 0.3
        s.step(20)
    assert np.array_equal(sim.get("qpos"), plain.get("qpos"))


def test_bad_input_named_and_nothing_changes():
    sim = sapsim.Sim(SCENES / "ant.xml", nworld=3)
    before = {name: sim.get_param(name) for name in sapsim.PARAMS}
    mass = sim.get_param("body_mass", [2])
    mass[0, 1] = -1
    with pytest.raises(sapsim.ArgumentError, match=r"world 2, body 'torso'.*negative"):
        sim.set_param("body_mass", mass, worlds=[2])
    mass[0, 1] = np.nan
    with pytest.raises(sapsim.NonFiniteError, match="not finite"):
        sim.set_param("body_mass", mass, worlds=[2])
    inertia = sim.get_param("body_inertia", [0])
    inertia[0, 1] = [1.0, 0.1, 0.1]
    with pytest.raises(sapsim.ArgumentError, match="triangle inequality"):
        sim.set_param("body_inertia", inertia, worlds=[0])
    with pytest.raises(sapsim.ArgumentError, match="negative"):
        sim.set_param("geom_friction", -0.1, worlds=[1])
    with pytest.raises(sapsim.ArgumentError, match="out of range"):
        sim.set_param("gravity", [0, 0, -1], worlds=[3])
    with pytest.raises(sapsim.ArgumentError, match=r"unknown per-world parameter 'mass'.*body_mass"):
        sim.set_param("mass", 1.0)
    with pytest.raises(sapsim.ArgumentError, match="do not fit"):
        sim.set_param("body_mass", np.ones(5))
    # randomize is all or nothing: gravity was set, then friction refused -> gravity restored
    with pytest.raises(sapsim.ArgumentError, match="geom_friction"):
        sim.randomize(worlds=[0, 1], gravity=[0, 0, -2], geom_friction=-1.0)
    for name, value in before.items():
        np.testing.assert_array_equal(sim.get_param(name), value, err_msg=name)
        assert not sim.param_overridden(name).any(), name


def test_randomized_batch_learns_nothing_wrong():
    """A randomized batch of worlds over decades of mass and friction steps with every
    world converged and finite (the vector-env use)."""
    rng = np.random.default_rng(3)
    sim = sapsim.Sim(SCENES / "ant.xml", nworld=16, keyframe="init")
    mass = sim.get_param("body_mass")
    sim.randomize(body_mass=mass * 10 ** rng.uniform(-1, 1, mass.shape),
                  geom_friction=sim.get_param("geom_friction") * 10 ** rng.uniform(-1, 0.5, (16, 1, 1)),
                  gravity=np.c_[np.zeros((16, 2)), -rng.uniform(1, 20, 16)])
    sim.ctrl[:] = rng.uniform(-1, 1, sim.ctrl.shape)
    sim.step(50)
    assert np.isfinite(sim.get("qpos")).all() and sim.converged.all()
