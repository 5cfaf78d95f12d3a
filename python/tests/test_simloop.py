"""Sim.run (sap_run), the binary frame files and sapsim.read_frames, and the step retry
counters, from Python. Oracles: plain Sim.step runs of the same batch (bitwise), the states
the test's own callbacks captured, the CLI's CSV trajectory of the same run (%.17g round-trips
doubles) for the binary file the CLI writes."""

from __future__ import annotations

import csv
import os
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

import sapsim

SCENES = Path(__file__).resolve().parents[2] / "scenes"
STACK = SCENES / "box_stack.xml"


def test_run_steps_equal_step() -> None:
    a = sapsim.Sim(STACK, nworld=3)
    b = sapsim.Sim(STACK, nworld=3)
    calls = []
    summary = a.run(max_steps=9, after=lambda sim, step, info: calls.append((step, info["flags"].copy())))
    b.step(9)
    assert summary["stop"] == "steps" and summary["steps"] == 9 and summary["world_steps"] == 27
    assert np.array_equal(a.qpos, b.qpos) and np.array_equal(a.qvel, b.qvel)
    assert [c[0] for c in calls] == list(range(1, 10))
    assert sum(int((c[1] & sapsim.WorldFlag.CONVERGED).astype(bool).sum()) for c in calls) == \
        27 - summary["unconverged"]
    assert summary["flag_steps"]["CONVERGED"] == 27 - summary["unconverged"]


def test_run_limits_one_by_one() -> None:
    sim = sapsim.Sim(STACK, nworld=2)
    s = sim.run(end_time=0.05)  # h = 0.005: 10 steps
    assert s["stop"] == "end_time" and s["steps"] == 10 and abs(sim.time[0] - 0.05) < 1e-12
    s = sim.run(after=lambda sim, step, info: step >= 4)
    assert s["stop"] == "callback" and s["steps"] == 4
    stamps = []

    def slow(sim, step, info):
        time.sleep(0.03)
        stamps.append(time.monotonic())

    t0 = time.monotonic()
    s = sim.run(wall_time=0.1, after=slow)
    assert s["stop"] == "wall_time" and s["steps"] == len(stamps) >= 1
    assert stamps[-1] - t0 >= 0.1 and (len(stamps) < 2 or stamps[-2] - t0 < 0.1 + 0.02)
    seen = []
    s = sim.run(max_steps=3, before=lambda sim, step, info: seen.append(step))
    assert seen == [0, 1, 2]


def test_callback_exception_is_raised() -> None:
    sim = sapsim.Sim(STACK, nworld=1)

    def boom(sim, step, info):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        sim.run(max_steps=5, after=boom)
    with pytest.raises(sapsim.ArgumentError, match="no limit"):
        sim.run(max_steps=-1)
    with pytest.raises(sapsim.ArgumentError, match="frames_format"):
        sim.run(max_steps=1, frames="x", frames_format="hdf5")


@pytest.mark.parametrize("fmt,dtype", [("binary", np.float64), ("binary32", np.float32)])
def test_frames_roundtrip(tmp_path, fmt, dtype) -> None:
    sim = sapsim.Sim(STACK, nworld=3)
    captured = {}

    def grab(sim, step):
        captured[step] = (sim.time.copy(), sim.qpos.copy(), sim.qvel.copy())

    path = tmp_path / "run.sapf"
    s = sim.run(max_steps=10, frame_every=4, frames=path, frames_format=fmt, frame_fn=grab)
    assert s["frames"] == 2 * 3  # steps 0, 4, 8, each to the file and to grab
    f = sapsim.read_frames(path)
    assert f["nworld"] == 3 and f["nq"] == sim.nq and f["nv"] == sim.nv and f["h"] == 0.005
    assert f["dtype"] == np.dtype(dtype) and list(f["step"]) == [0, 4, 8]
    for i, k in enumerate(f["step"]):
        t, q, v = captured[int(k)]
        assert np.array_equal(f["time"][i], t)
        assert np.array_equal(f["qpos"][i], q.astype(dtype)) and np.array_equal(f["qvel"][i], v.astype(dtype))
    # a truncated last frame is named, or dropped on request
    data = path.read_bytes()
    cut = tmp_path / "cut.sapf"
    cut.write_bytes(data[:-5])
    with pytest.raises(ValueError, match="truncated"):
        sapsim.read_frames(cut)
    assert list(sapsim.read_frames(cut, allow_partial=True)["step"]) == [0, 4]
    bad = tmp_path / "bad.sapf"
    bad.write_bytes(b"NOTFRAME" + data[8:])
    with pytest.raises(ValueError, match="magic"):
        sapsim.read_frames(bad)


def test_cli_binary_frames_equal_csv(tmp_path) -> None:
    """The CLI's binary frames hold what its CSV trajectory holds for the same run."""
    cli = os.environ.get("SAPSIM_CLI")
    if not cli:
        pytest.skip("SAPSIM_CLI not set")
    base = [cli, "run", str(SCENES / "ant.xml"), "--worlds", "2", "--steps", "12", "--frame-every", "3",
            "--device", "cpu", "--quiet"]
    subprocess.run(base + ["--out", str(tmp_path / "t.csv")], check=True, capture_output=True)
    out = subprocess.run(base + ["--out", str(tmp_path / "t.sapf"), "--format", "binary"], check=True,
                         capture_output=True, text=True).stdout
    assert "trajectory:" in out and "(5 frames)" in out
    f = sapsim.read_frames(tmp_path / "t.sapf")
    with open(tmp_path / "t.csv") as fh:
        rows = list(csv.reader(fh))[1:]
    assert len(rows) == 5 * 2
    for r in rows:
        k, w = int(r[0]) // 3, int(r[1])
        vals = np.array([float(x) for x in r[3:]])
        assert int(f["step"][k]) == int(r[0])
        assert np.array_equal(np.concatenate([f["qpos"][k, w], f["qvel"][k, w]]), vals)


def test_retry_counters_and_option_errors() -> None:
    sim = sapsim.Sim(STACK, nworld=2, retry_depth=2)
    assert sim.options["retry_depth"] == 2 and sim.options["retry_recover_steps"] == 8
    sim.run(max_steps=20)
    rt = sim.retry_stats()
    assert list(rt["retries"]) == [0, 0] and list(rt["h_min"]) == [0.005, 0.005]
    with pytest.raises(sapsim.OptionError, match="retry_depth"):
        sapsim.Sim(STACK, retry_depth=40)
    with pytest.raises(sapsim.OptionError, match="retry_recover_steps"):
        sapsim.Sim(STACK, retry_recover_steps=0)
