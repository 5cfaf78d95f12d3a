"""The Python API's contract: views alias the C batch (no copies, current after
every step), writes follow the C API's rules (validated, poses recomputed, nothing
changed on error), and bad input raises exceptions carrying sapsim's messages.
Expected values come from the C library's own copies (sap_get), the CLI, or the
scene text."""

from __future__ import annotations

import numpy as np
import pytest

import sapsim
from conftest import SCENES, run_cli

ANT = SCENES / "ant.xml"


@pytest.fixture
def ant() -> sapsim.Sim:
    """Three ant worlds from keyframe 'init', stepped a little with distinct controls."""
    sim = sapsim.Sim(ANT, nworld=3, keyframe="init", preset="approx64")
    sim.ctrl[:] = np.linspace(-0.9, 0.9, 3 * 8).reshape(3, 8)
    sim.step(5)
    return sim


def snapshot(sim: sapsim.Sim) -> dict[str, np.ndarray]:
    """The C library's copies (sap_get) of every field, and the diagnostics."""
    out = {f: sim.get(f) for f in sapsim.FIELDS if f not in sapsim.sim.BODY_OUTPUTS}  # those need body_outputs=1
    out["flags"] = np.array(sim.world_flags)
    return out


def assert_unchanged(sim: sapsim.Sim, before: dict[str, np.ndarray]) -> None:
    after = snapshot(sim)
    for key, value in before.items():
        assert np.array_equal(after[key], value, equal_nan=True), f"{key} changed"


def test_views_alias_the_batch(ant):
    """Arrays are views: the same object after steps, sharing memory with later
    reads, equal to the C library's copies after every step."""
    views = {name: getattr(ant, name) for name in ("qpos", "qvel", "ctrl", "qfrc_applied", "time",
                                                  "xpos", "xquat", "world_flags", "ncon", "newton_iter")}
    for _ in range(3):
        ant.step()
        for name, view in views.items():
            assert getattr(ant, name) is view, name
        for field in ("qpos", "qvel", "ctrl", "qfrc_applied"):
            np.testing.assert_array_equal(views[field], ant.get(field))
        np.testing.assert_array_equal(views["time"], ant.get("time")[:, 0])
        np.testing.assert_array_equal(views["xpos"].reshape(3, -1), ant.get("xpos"))
        np.testing.assert_array_equal(views["xquat"].reshape(3, -1), ant.get("xquat"))
    assert views["qpos"].dtype == np.float64 and views["qpos"].shape == (3, 15)
    assert views["ncon"].dtype == np.int32 and views["ncon"].shape == (3,)
    assert views["xpos"].shape == (3, 14, 3) and views["xquat"].shape == (3, 14, 4)
    assert not views["xpos"].flags.writeable and not views["ncon"].flags.writeable
    assert views["ctrl"].flags.writeable and views["ctrl"].flags.c_contiguous


def test_ctrl_written_in_place_is_what_c_reads(ant):
    """A write through the ctrl view is the C batch's ctrl (sap_get), with no copy."""
    ctrl = ant.ctrl
    ctrl[1, 4] = 0.123
    ctrl[2] = -0.5
    got = ant.get("ctrl")
    assert got[1, 4] == 0.123 and (got[2] == -0.5).all()
    ant.qfrc_applied[0, 6] = 2.5
    assert ant.get("qfrc_applied")[0, 6] == 2.5


def test_qpos_write_goes_through_sap_set(ant):
    """Item assignment on qpos writes only the touched worlds and recomputes poses:
    the torso (a free body) sits at the written position."""
    before = ant.get("qpos")
    ant.qpos[1, :3] = [0.25, -0.5, 1.5]
    after = ant.get("qpos")
    np.testing.assert_array_equal(after[1, :3], [0.25, -0.5, 1.5])
    np.testing.assert_array_equal(after[[0, 2]], before[[0, 2]])
    np.testing.assert_array_equal(after[1, 3:], before[1, 3:])
    np.testing.assert_array_equal(ant.xpos[1, 1], [0.25, -0.5, 1.5])  # fp64 kinematics (approx64)
    # boolean masks and whole-array assignment
    mask = np.array([True, False, True])
    ant.qvel[mask] = 0.0
    assert (ant.get("qvel")[mask] == 0).all() and (ant.get("qvel")[1] != 0).any()
    ant.qvel = np.zeros((3, 14))
    assert (ant.get("qvel") == 0).all()
    ant.time[2] = 4.0
    np.testing.assert_array_equal(ant.get("time")[:, 0], [0.025, 0.025, 4.0])


def test_state_views_cannot_be_written_around_sap_set(ant):
    """numpy cannot write the state memory directly: slices and in-place operators
    fail with numpy's read-only error, and nothing changes."""
    before = snapshot(ant)
    with pytest.raises(ValueError, match="read-only"):
        ant.qpos[0][2] = 1.0  # a slice is a plain read-only view
    with pytest.raises(ValueError, match="read-only"):
        ant.qvel += 1.0
    with pytest.raises(ValueError, match="read-only"):
        np.copyto(ant.qpos, 0.0)
    assert_unchanged(ant, before)
    assert type(ant.qpos * 2) is np.ndarray and type(ant.qpos[0]) is np.ndarray


def test_nonfinite_qpos_raises_and_changes_nothing(ant):
    before = snapshot(ant)
    with pytest.raises(sapsim.NonFiniteError, match=r"qpos of world 1, index 2 is not finite \(nan\); "
                                                    r"nothing was changed"):
        ant.qpos[1, 2] = np.nan
    with pytest.raises(sapsim.NonFiniteError, match=r"qvel of world 2, index 5 is not finite \(inf\)"):
        v = ant.get("qvel")
        v[2, 5] = np.inf
        ant.qvel = v
    with pytest.raises(sapsim.NonFiniteError, match="ctrl of world 0, index 7"):
        ant.ctrl = np.where(np.arange(8) == 7, -np.inf, 0.0)
    with pytest.raises(ValueError):  # NonFiniteError is a ValueError too
        ant.set("qpos", np.full(15, np.nan), worlds=[0])
    assert_unchanged(ant, before)


def test_nonfinite_input_written_in_place_stops_the_step(ant):
    """ctrl and qfrc_applied written in place are checked before a step: the error
    names the value and no world moves; fixing the value lets the step run."""
    ant.ctrl[2, 3] = np.nan
    before = snapshot(ant)
    with pytest.raises(sapsim.NonFiniteError, match=r"ctrl of world 2, index 3 is not finite \(nan\); "
                                                    r"no world was stepped"):
        ant.step(3)
    assert_unchanged(ant, before)
    ant.ctrl[2, 3] = 0.0
    ant.qfrc_applied[1, 0] = np.inf
    with pytest.raises(sapsim.NonFiniteError, match="qfrc_applied of world 1, index 0"):
        ant.step()
    ant.qfrc_applied[1, 0] = 0.0
    ant.step()
    np.testing.assert_allclose(ant.time, 0.03)


def test_reset_mask_and_keyframe(cli, tmp_path, ant):
    """reset(keyframe, worlds) puts the selected worlds at the keyframe (as the CLI's
    trajectory starts) and leaves the others alone."""
    out = tmp_path / "t.csv"
    run_cli(cli, "run", str(ANT), "--worlds", "1", "--steps", "1", "--out", str(out), "--quiet")
    row0 = np.loadtxt(out, delimiter=",", skiprows=1)[0]
    key_qpos, key_qvel = row0[3:18], row0[18:32]
    before = ant.get("qpos")
    ant.reset("init", worlds=[0, 2])
    np.testing.assert_array_equal(ant.qpos[[0, 2]], [key_qpos, key_qpos])
    np.testing.assert_array_equal(ant.qvel[[0, 2]], [key_qvel, key_qvel])
    np.testing.assert_array_equal(ant.qpos[1], before[1])
    np.testing.assert_array_equal(ant.time, [0.0, 0.025, 0.0])
    np.testing.assert_array_equal(ant.ctrl[0], 0.0)  # the keyframe's ctrl
    ant.reset(worlds=np.array([False, True, False]))  # the reference configuration
    np.testing.assert_array_equal(ant.qpos[1], sapsim.Sim(ANT).qpos[0])
    assert ant.time[1] == 0.0


def test_diagnostics(ant):
    """Per-world flags and counters of the last step: the ant stands on its feet."""
    ant.step()
    assert ant.converged.dtype == np.bool_ and ant.converged.all()
    assert ((ant.world_flags & sapsim.WorldFlag.CONVERGED) != 0).all()
    assert (ant.ncon > 0).all() and (ant.newton_iter > 0).all() and (ant.ncon_dropped == 0).all()
    con = ant.contacts()
    assert con["dist"].shape == (3, ant.ncon_max) and con["frame"].shape == (3, ant.ncon_max, 3, 3)
    live = con["geom"][0, : ant.ncon[0]]
    assert (live[:, 0] == 0).all()  # the floor (geom 0) is geom 0 of every contact it makes
    assert set(ant.timers()) == {"kinematics", "collision", "free_motion", "solve", "integrate", "total"}


def test_bad_options_raise_with_sapsims_message():
    with pytest.raises(sapsim.OptionError, match=r"unknown option 'line_serch' \(valid: preset,"):
        sapsim.Sim(ANT, line_serch="exact_root")
    with pytest.raises(sapsim.OptionError, match=r"option line_search: invalid value 'newton' "
                                                 r"\(valid: monotone_decay, armijo_decay, exact_root, newton_wolfe\)"):
        sapsim.Sim(ANT, line_search="newton")
    with pytest.raises(sapsim.OptionError, match="preset"):
        sapsim.Sim(ANT, preset="approx16")
    with pytest.raises(sapsim.OptionError, match="device"):
        sapsim.Sim(ANT, device="tpu")
    with pytest.raises(ValueError):  # OptionError is a ValueError
        sapsim.Sim(ANT, max_iterations="many")


def test_options_and_presets():
    """Options reach the C library: the expanded set reports them (seed 002 table)."""
    sim = sapsim.Sim(ANT, preset="drake", line_search="exact_root", max_iterations=50, timestep=0.0025)
    opt = sim.options
    assert (opt["preset"], opt["line_search"], opt["max_iterations"]) == ("drake", "exact_root", 50)
    assert (opt["weight_mode"], opt["integration"], opt["linear_solve_precision"]) == (
        "diag_delassus", "sap_euler", "fp64")
    assert sim.timestep == 0.0025
    sim.step(4)
    np.testing.assert_allclose(sim.time, 0.01, rtol=1e-15)
    assert sapsim.Sim(ANT).options["weight_precision"] == "fp32"  # approx32 default
    assert sapsim.Sim(ANT, contacts=False).ncon_max == 0


def test_bad_input_raises():
    with pytest.raises(sapsim.SceneError, match="no_such_scene.xml: cannot open scene file"):
        sapsim.Sim(SCENES / "no_such_scene.xml")
    with pytest.raises(sapsim.SceneError, match="<xml string>: MuJoCo could not load the scene"):
        sapsim.Sim("<mujoco><worldbody><body></mujoco>")
    with pytest.raises(sapsim.UnsupportedError, match="geom 'g' has adhesion with the spring and damper flags"):
        sapsim.Sim('<mujoco><option><flag spring="disable" damper="disable"/></option><worldbody>'
                   '<body><freejoint/><geom name="g" size="1" adhesion="1"/></body></worldbody></mujoco>')
    with pytest.raises(sapsim.ArgumentError, match="nworld 0 out of range"):
        sapsim.Sim(ANT, nworld=0)
    sim = sapsim.Sim(ANT, nworld=2)
    with pytest.raises(sapsim.ArgumentError, match=r"keyframe 3 does not exist \(the scene has 1\)"):
        sim.reset(3)
    with pytest.raises(sapsim.ArgumentError, match="no keyframe named 'stand'"):
        sim.reset("stand")
    with pytest.raises(sapsim.ArgumentError, match=r"world id 2 out of range \[0, 2\)"):
        sim.reset(worlds=[2])
    with pytest.raises(sapsim.ArgumentError, match="boolean world mask must have shape"):
        sim.reset(worlds=[True])
    with pytest.raises(sapsim.ArgumentError, match="field 'xpos' is read-only"):
        sim.set("xpos", 0.0)
    with pytest.raises(sapsim.ArgumentError, match="unknown field 'qacc'"):
        sim.get("qacc")
    with pytest.raises(sapsim.ArgumentError, match=r"do not fit \(2, 15\)"):
        sim.qpos = np.zeros(14)
    with pytest.raises(sapsim.ArgumentError, match="non-negative integer"):
        sim.step(-1)
    with pytest.raises(sapsim.ArgumentError, match="has no array 'body_masses'"):
        sim.model.array("body_masses")
    with pytest.raises(sapsim.ArgumentError, match="has no array 'qfrc'"):
        sim.array("qfrc")


def test_cuda_device():
    """device='cuda' runs on a GPU when one is usable, else says why."""
    if sapsim.cuda_available():
        sim = sapsim.Sim(ANT, nworld=2, device="cuda")
        assert sim.on_gpu
        pytest.skip("GPU present: the device-array tests are future work")
    with pytest.raises(sapsim.NoDeviceError, match="device=cuda"):
        sapsim.Sim(ANT, device="cuda")
    assert sapsim.cuda_device_name()


def test_views_keep_the_batch_alive():
    """An array outlives its Sim: the C memory is freed only when both are gone."""
    sim = sapsim.Sim(ANT, nworld=2, keyframe=0)
    qpos = sim.qpos
    want = sim.get("qpos")
    del sim
    import gc

    gc.collect()
    np.testing.assert_array_equal(qpos, want)


def test_qvel_prev_restores_a_run_bit_for_bit():
    """qvel_prev is the velocity before the last step (its definition: after a step it equals
    the qvel read before that step; a qvel edit or a reset sets it to the new qvel). The
    default warm start extrapolates from it, so a state copied with qpos, qvel and then
    qvel_prev continues bit for bit; without qvel_prev it continues within the solver's
    tolerance only (the two starts converge to the same optimum)."""
    humanoid = SCENES / "humanoid.xml"
    src = sapsim.Sim(humanoid, nworld=3)
    rng = np.random.default_rng(4)
    for _ in range(6):
        src.ctrl[:] = rng.uniform(-1, 1, src.ctrl.shape)
        before = src.get("qvel")
        src.step(1)
        np.testing.assert_array_equal(src.get("qvel_prev"), before)
    state = {f: src.get(f) for f in ("qpos", "qvel", "qvel_prev", "time", "ctrl")}
    ctrl = rng.uniform(-1, 1, src.ctrl.shape)

    def continue_from(fields):
        sim = sapsim.Sim(humanoid, nworld=3)
        for f in fields:
            sim.set(f, state[f])
        if "qvel_prev" not in fields:
            np.testing.assert_array_equal(sim.get("qvel_prev"), state["qvel"])  # a qvel edit sets it
        sim.ctrl[:] = ctrl
        sim.step(1)
        return sim.get("qvel")

    src.ctrl[:] = ctrl
    src.step(1)
    want = src.get("qvel")
    np.testing.assert_array_equal(continue_from(("qpos", "qvel", "qvel_prev", "time", "ctrl")), want)
    plain = continue_from(("qpos", "qvel", "time", "ctrl"))
    assert not np.array_equal(plain, want)  # the warm start is part of what decides the bits
    scale = max(np.abs(want).max(), 9.81 * 0.005)
    assert np.abs(plain - want).max() <= 1e-4 * scale  # both are the solve's answer within its tolerance
    with pytest.raises(sapsim.NonFiniteError, match="qvel_prev"):
        bad = state["qvel_prev"].copy()
        bad[1, 2] = np.nan
        src.set("qvel_prev", bad)


@pytest.mark.parametrize("scene, nworld, solves",
                         [("humanoid.xml", 2, True), ("box_stack.xml", 3, True), ("tendon_armature.xml", 2, False)])
def test_mass_matrix_matches_mujoco(scene, nworld, solves):
    """Sim.mass_matrix(w) expands world w's A (stored by dof-tree blocks) to dense: MuJoCo 4's
    mj_fullM (its armature included) plus h times the dof damping, zeros between trees, at each
    world's own state after random steps; bytes_shared reports the CPU solve's buffers (none
    where no constraint ever acts: the tendon scene has no contact or limit)."""
    mujoco = pytest.importorskip("mujoco")
    path = str(SCENES / scene)
    sim = sapsim.Sim(path, nworld=nworld, device="cpu", preset="approx64")  # fp64 free motion
    rng = np.random.default_rng(7)
    sim.ctrl[:] = rng.uniform(-0.5, 0.5, sim.ctrl.shape)
    sim.step(29)
    q = np.array(sim.qpos)  # the last step's A is taken at its start
    sim.step(1)
    mj = mujoco.MjModel.from_xml_path(path)
    md = mujoco.MjData(mj)
    for w in range(nworld):
        A = sim.mass_matrix(w)
        md.qpos[:] = q[w]
        mujoco.mj_forward(mj, md)
        M = np.zeros((mj.nv, mj.nv))
        mujoco.mj_fullM(mj, md, M)
        want = M + np.diag(sim.timestep * mj.dof_damping)
        np.testing.assert_allclose(A, want, rtol=0, atol=1e-12 * np.abs(want).max())
    assert (sim.bytes_shared > 0) == solves


def test_contact_band_speed():
    """Option contact_band=speed from Python: the settled pile lists fewer contacts than with the
    whole band, the velocities agree to the solve's tolerance (the left-out pairs are idle;
    tests/test_contact_band.c checks that against MuJoCo), and band_redo reads per world."""
    pile = SCENES / "box_pile.xml"
    whole = sapsim.Sim(pile, nworld=2, preset="approx64", ncon_max=1024, optimality_rel_tol=1e-10)
    band = sapsim.Sim(pile, nworld=2, preset="approx64", ncon_max=1024, optimality_rel_tol=1e-10,
                      contact_band="speed")
    assert band.options["contact_band"] == "speed" and whole.options["contact_band"] == "margin"
    whole.step(100)
    band.step(100)
    assert (band.ncon < whole.ncon).all()
    scale = max(1e-3, np.abs(whole.qvel).max())
    assert np.abs(band.qvel - whole.qvel).max() <= 1e-6 * scale
    assert band.band_redo.shape == (2,) and not whole.band_redo.any()
    with pytest.raises(sapsim.OptionError, match="speed"):
        sapsim.Sim(pile, contact_band="fast")
