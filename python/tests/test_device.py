"""Zero-copy exports (sapsim.dlpack) and state written in place (Sim.commit).

On this machine the exports are of a CPU batch (DLPack device kDLCPU): the same
DLManagedTensor code path as on the GPU, consumed by numpy.from_dlpack (and torch
when installed). Oracles: the C batch's own numpy views (same address, same values),
and for commit the same edit made through sap_set on a second batch (poses and the
trajectory after it must match bit for bit). GPU tests carry the ``gpu`` marker and
skip without a usable GPU; python/tests/gpu_check.py is the standalone GPU check."""

from __future__ import annotations

import ctypes
import gc

import numpy as np
import pytest

import sapsim
from sapsim import dlpack

from conftest import SCENES

gpu = pytest.mark.skipif(not sapsim.cuda_available(), reason=f"no usable GPU ({sapsim.cuda_device_name()})")


def _write(arr: sapsim.DeviceArray, index: int, value: float) -> None:
    """Write one float64 at flat `index` of a host export through its address (what
    a torch or JAX view does), bypassing sapsim's Python checks."""
    ctypes.c_double.from_address(arr.ptr + 8 * index).value = value


def test_dlpack_is_the_batch_memory():
    sim = sapsim.Sim(SCENES / "ant.xml", nworld=3, keyframe=0)
    for name, view in (("qpos", sim.qpos), ("qvel", sim.qvel), ("ctrl", sim.ctrl), ("xpos", sim.xpos),
                       ("world_flags", sim.world_flags), ("time", sim.time)):
        exp = sim.device_array(name)
        assert exp.shape == view.shape and exp.dtype == view.dtype, name
        assert exp.__dlpack_device__() == (dlpack.KDL_CPU, 0)
        a = np.from_dlpack(exp)
        assert a.ctypes.data == view.ctypes.data == exp.ptr, name
        np.testing.assert_array_equal(a, view)
    q = np.from_dlpack(sim.qpos_device)
    sim.ctrl[:] = 0.4
    sim.step(3)
    np.testing.assert_array_equal(q, sim.get("qpos"))  # the step's result, seen without a copy
    assert not hasattr(sim.qpos_device, "__cuda_array_interface__")  # host memory
    with pytest.raises(sapsim.ArgumentError, match="no array 'nope'"):
        sim.device_array("nope")
    with pytest.raises(BufferError):
        sim.qpos_device.__dlpack__(copy=True)


def test_dlpack_keeps_the_batch_alive():
    sim = sapsim.Sim(SCENES / "pendulum.xml", nworld=2)
    exp = sim.qpos_device
    gc.collect()  # tensors of earlier tests
    before = len(dlpack._LIVE)
    a = np.from_dlpack(exp)
    assert len(dlpack._LIVE) == before + 1
    del sim, exp
    gc.collect()
    assert np.isfinite(a).all()  # the batch outlives the Sim object: the tensor holds it
    del a
    gc.collect()
    assert len(dlpack._LIVE) == before  # the consumer's deleter released it
    cap = sapsim.Sim(SCENES / "pendulum.xml").qpos_device.__dlpack__()
    assert len(dlpack._LIVE) == before + 1
    del cap  # never consumed: the capsule's destructor releases it
    gc.collect()
    assert len(dlpack._LIVE) == before


def test_commit_matches_set():
    """qpos and qvel written through an export, then commit, equal sap_set's edit."""
    a = sapsim.Sim(SCENES / "ant.xml", nworld=4, keyframe=0)
    b = sapsim.Sim(SCENES / "ant.xml", nworld=4, keyframe=0)
    rng = np.random.default_rng(5)
    q = a.get("qpos")
    q[:, 2] += 0.03 * np.arange(4)
    q[:, 7:] += rng.uniform(-0.2, 0.2, (4, 8))
    v = rng.uniform(-0.5, 0.5, (4, a.nv))
    b.set("qpos", q)
    b.set("qvel", v)
    qa, va = a.qpos_device, a.qvel_device
    for i, x in enumerate(q.ravel()):
        _write(qa, i, x)
    for i, x in enumerate(v.ravel()):
        _write(va, i, x)
    a.commit()
    np.testing.assert_array_equal(a.xpos, b.xpos)  # poses recomputed
    for sim in (a, b):
        sim.ctrl[:] = 0.3
        sim.step(10)
    np.testing.assert_array_equal(a.qpos, b.qpos)
    np.testing.assert_array_equal(a.qvel, b.qvel)


def test_commit_rejects_nonfinite():
    sim = sapsim.Sim(SCENES / "ant.xml", nworld=3, keyframe=0)
    held = sim.get("qpos")
    _write(sim.qpos_device, 1 * sim.nq + 9, float("nan"))
    with pytest.raises(sapsim.NonFiniteError, match="qpos of world 1, index 9"):
        sim.commit()
    assert sim.world_flags[1] & sapsim.WorldFlag.NONFINITE and not sim.world_flags[0] & sapsim.WorldFlag.NONFINITE
    sim.step(4)
    np.testing.assert_array_equal(sim.qpos[1, :9], held[1, :9])  # frozen: left as it is
    assert not np.array_equal(sim.qpos[0], held[0])  # the others stepped
    _write(sim.qpos_device, 1 * sim.nq + 9, held[1, 9])
    sim.commit(worlds=[1])
    assert not sim.world_flags[1] & sapsim.WorldFlag.NONFINITE
    # a non-finite control is named; the step then refuses that world only
    _write(sim.ctrl_device, 2 * sim.nu + 1, float("inf"))
    with pytest.raises(sapsim.NonFiniteError, match="ctrl of world 2, index 1"):
        sim.commit()
    with pytest.raises(sapsim.ArgumentError, match="stream"):
        sim.step(1, stream="s")


def test_torch_views_when_installed():
    torch = pytest.importorskip("torch")
    sim = sapsim.Sim(SCENES / "ant.xml", nworld=2, keyframe=0)
    t = torch.from_dlpack(sim.qpos_device)
    assert t.data_ptr() == sim.qpos.ctypes.data
    t[1, 2] += 0.25
    sim.commit()
    assert sim.qpos[1, 2] == t[1, 2].item() and abs(sim.xpos[1, 1, 2] - sim.qpos[1, 2]) < 1e-6


@gpu
def test_gpu_dlpack_and_interface():
    sim = sapsim.Sim(SCENES / "ant.xml", nworld=4, device="cuda", keyframe=0)
    exp = sim.qpos_device
    cai = exp.__cuda_array_interface__
    assert cai["version"] == 3 and cai["shape"] == (4, sim.nq) and cai["typestr"] == "<f8"
    assert cai["stream"] and exp.__dlpack_device__() == (dlpack.KDL_CUDA, 0)
    cap = exp.__dlpack__(stream=1)
    del cap
    sim.step(2, stream=0)
    assert np.isfinite(sim.qpos).all()
