"""sapsim's Python arrays against independent oracles: the C CLI's trajectory output
(bit for bit, same scene, keyframe, seed and controls), the CLI's model report, and
analytic physics (free fall, a motor pushing a slider)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import sapsim
from conftest import SCENES, run_cli

M64 = (1 << 64) - 1


def cli_controls(sim: sapsim.Sim, noise: float, seed: int) -> np.ndarray:
    """The CLI's random controls (host/cli/common.c, sapcli_randomCtrl): xorshift64*
    uniforms in noise x the control range, centred. A mistake here cannot make the
    trajectory test pass, only fail."""
    lim = sim.model.array("actuator_ctrllimited")
    rng = sim.model.array("actuator_ctrlrange").reshape(-1, 2)
    out = np.empty((sim.nworld, sim.nu))
    x = (seed * 0x9E3779B97F4A7C15 + 1) & M64
    for i in range(sim.nworld * sim.nu):
        x ^= x >> 12
        x ^= (x << 25) & M64
        x ^= x >> 27
        r = (((x * 2685821657736338717) & M64) >> 11) / 9007199254740992.0
        a = i % sim.nu
        lo, hi = (rng[a, 0], rng[a, 1]) if lim[a] else (-1.0, 1.0)
        mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
        out.flat[i] = mid + noise * half * (2 * r - 1)
    return out


def read_trajectory(path: Path, nworld: int, nq: int, nv: int) -> tuple[np.ndarray, ...]:
    """(time, qpos, qvel) of the CLI's CSV, shaped (steps + 1, nworld, ...)."""
    data = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64)
    data = data.reshape(-1, nworld, data.shape[1])
    assert (data[:, :, 1] == np.arange(nworld)).all()
    return data[:, :, 2], data[:, :, 3 : 3 + nq], data[:, :, 3 + nq : 3 + nq + nv]


def assert_bitwise(got: np.ndarray, want: np.ndarray, what: str) -> None:
    if not np.array_equal(got.view(np.uint64), want.view(np.uint64)):
        bad = np.argwhere(got.view(np.uint64) != want.view(np.uint64))[0]
        raise AssertionError(f"{what}: first difference at {tuple(bad)}: got {got[tuple(bad)]!r}, "
                             f"want {want[tuple(bad)]!r}")


@pytest.mark.parametrize(
    "scene, nworld, nstep, preset, extra",
    [
        ("ant.xml", 4, 200, "approx32", []),
        ("humanoid.xml", 3, 100, "drake", ["--line-search", "exact_root"]),
        ("box_stack.xml", 2, 150, "approx64", []),
    ],
)
def test_trajectory_equals_cli(cli, tmp_path, scene, nworld, nstep, preset, extra):
    """Controls written in place through sim.ctrl, steps through sim.step: every
    qpos and qvel equals the CLI's trajectory bit for bit."""
    seed, noise = 7, 0.8
    out = tmp_path / "traj.csv"
    run_cli(cli, "run", str(SCENES / scene), "--worlds", str(nworld), "--steps", str(nstep),
            "--preset", preset, "--seed", str(seed), "--ctrl-noise", str(noise), "--out", str(out),
            "--quiet", *extra)
    options = {"line_search": extra[1]} if extra else {}
    sim = sapsim.Sim(SCENES / scene, nworld=nworld, preset=preset, **options)
    if sim.model.nkey:  # the CLI starts from the first keyframe
        sim.reset(keyframe=0)
    t_ref, q_ref, v_ref = read_trajectory(out, nworld, sim.nq, sim.nv)
    if sim.nu:
        sim.ctrl[:] = cli_controls(sim, noise, seed)
    qpos, qvel, time = sim.qpos, sim.qvel, sim.time  # views: read after each step, no re-fetch
    for k in range(nstep + 1):
        if k:
            sim.step()
        assert_bitwise(np.array(qpos), q_ref[k], f"{scene} qpos at step {k}")
        assert_bitwise(np.array(qvel), v_ref[k], f"{scene} qvel at step {k}")
        assert [f"{t:.9g}" for t in time] == [f"{t:.9g}" for t in t_ref[k]]


def test_xml_string_equals_file():
    """A scene given as text runs exactly like the same file."""
    path = SCENES / "ant.xml"
    a = sapsim.Sim(path, nworld=2, keyframe="init")
    b = sapsim.Sim(path.read_text(), nworld=2, keyframe="init")
    for sim in (a, b):
        sim.ctrl[:] = [[0.5, -0.5, 0.2, 0.1, -0.3, 0.7, 0.0, 0.4], [0.1] * 8]
        sim.step(20)
    assert_bitwise(np.array(b.qpos), np.array(a.qpos), "qpos")
    assert_bitwise(np.array(b.qvel), np.array(a.qvel), "qvel")


def test_model_info_equals_cli_and_mjcf(cli):
    """Sizes as the CLI's 'info' reports them; actuator and keyframe names as the
    MJCF declares them."""
    path = SCENES / "ant.xml"
    text = run_cli(cli, "info", str(path))
    sizes = dict((k, int(v)) for k, v in re.findall(r"\b(n[a-z]+) (\d+)", text.splitlines()[1]))
    sim = sapsim.Sim(path)
    m = sim.model
    for key in ("nq", "nv", "nbody", "njnt", "ngeom", "nu", "ntendon", "nkey"):
        assert getattr(m, key) == sizes[key], key
    assert (sim.nq, sim.nv, sim.nu) == (sizes["nq"], sizes["nv"], sizes["nu"])
    geoms = re.findall(r"^\s+geom \d+\s+(\S+)", text, re.M)
    assert m.geom_names == geoms
    root = ET.parse(path).getroot()
    assert m.actuator_names == [a.get("joint") for a in root.find("actuator")]
    assert m.key_names == [k.get("name") for k in root.find("keyframe")]
    assert m.timestep == float(root.find("option").get("timestep"))
    np.testing.assert_array_equal(m.ctrl_range, [[-1.0, 1.0]] * m.nu)


FALL = """
<mujoco>
  <option timestep="{h}" gravity="0 0 -{g}"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="ball" pos="0 0 {z0}">
      <freejoint/>
      <geom type="sphere" size="0.1" mass="1.5"/>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("preset, tol", [("approx64", 1e-12), ("approx32", 2e-6), ("drake", 1e-12)])
def test_free_fall(preset, tol):
    """z = z0 - g t^2 / 2 and vz = -g t before contact. The midpoint rule (approx32/64)
    is exact for constant acceleration; drake's sap_euler (q += h v_next) follows
    z_n = z0 - g h^2 n (n + 1) / 2, its own closed form."""
    h, g, nstep = 0.01, 9.81, 80
    z0 = np.array([10.0, 7.5, 5.0])  # per world, written through sim.qpos
    sim = sapsim.Sim(FALL.format(h=h, g=g, z0=10.0), nworld=len(z0), preset=preset)
    sim.qpos[:, 2] = z0
    np.testing.assert_array_equal(sim.xpos[:, 1, 2], z0)  # poses recomputed by the write
    for n in range(1, nstep + 1):
        before = sim.get("qpos")
        sim.step()
        # poses are those the step computed from the state it started at (MuJoCo's
        # mj_step leaves xpos the same way); fp64 kinematics reproduce qpos exactly
        if preset != "approx32":
            np.testing.assert_array_equal(sim.xpos[:, 1], before[:, :3])
        t = n * h
        drop = g * h * h * n * (n + 1) / 2 if preset == "drake" else g * t * t / 2
        np.testing.assert_allclose(sim.qpos[:, 2], z0 - drop, rtol=0, atol=tol * 10)
        np.testing.assert_allclose(sim.qvel[:, 2], -g * t, rtol=0, atol=tol * 10)
        np.testing.assert_allclose(sim.time, t, rtol=1e-12)
    assert (sim.ncon == 0).all()
    np.testing.assert_array_equal(sim.qpos[:, :2], 0.0)
    np.testing.assert_array_equal(sim.qpos[:, 3:], [[1.0, 0.0, 0.0, 0.0]] * len(z0))


SLIDER = """
<mujoco>
  <option timestep="0.01"/>
  <worldbody>
    <body name="cart">
      <joint name="x" type="slide" axis="1 0 0"/>
      <geom type="box" size="0.1 0.1 0.1" mass="{m}" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <actuator><motor joint="x" gear="{gear}"/></actuator>
</mujoco>
"""


def test_ctrl_written_in_place_drives_the_step():
    """Controls written through the view reach the C side (sap_get sees them) and
    the step: a motor on a slider accelerates it at gear u / m."""
    m, gear, h = 2.0, 3.0, 0.01
    u = np.array([0.0, 0.5, -1.25, 2.0])
    sim = sapsim.Sim(SLIDER.format(m=m, gear=gear), nworld=len(u), preset="approx64")
    view = sim.ctrl
    view[:, 0] = u
    assert np.shares_memory(view, sim.ctrl)
    np.testing.assert_array_equal(sim.get("ctrl")[:, 0], u)  # the C library's own copy
    for n in range(1, 11):
        sim.step()
        np.testing.assert_allclose(sim.qvel[:, 0], gear * u / m * n * h, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(sim.qpos[:, 0], gear * u / m * (n * h) ** 2 / 2, rtol=1e-12, atol=1e-15)
