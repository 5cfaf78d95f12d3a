"""Standalone GPU check of the Python layer (run on a machine with a GPU; < 60 s).

    SAPSIM_LIB=build/libsapsim.so PYTHONPATH=python python3 python/tests/gpu_check.py

Needs sapsim's library built with CUDA, numpy and torch; JAX and gymnasium are used
when importable (their checks say SKIP otherwise). Not collected by pytest (the file
name does not start with test_); python/tests/test_device.py has the GPU-marked pytest
cases. Exit status 0 when every check passed, 1 when one failed, 2 without a GPU.

Checks (oracle in brackets):
 1. zero-copy: torch.from_dlpack, torch.as_tensor (__cuda_array_interface__) and
    jax.dlpack.from_dlpack of sim.qpos_device point at sapsim's device address
    [the C API's sap_deviceArray]; a write through torch to ctrl is seen by the next
    step, and the step's result is seen through the same tensor without a copy
    [a CPU batch stepped with the same controls through sap_set, fp64 preset].
 2. qpos written through torch + Sim.commit equals the same edit through Sim.set
    [second GPU batch], and a NaN written through torch is refused by commit.
 3. caller-stream stepping: on a side torch stream, a long matmul, then a ctrl write,
    then Sim.step(stream=s), then a clone of qpos, all without host waits: equals the
    synchronous path [same batch stepped with sap_step]; repeated 5 times.
 4. torch vs CPU parity of the vector env (ant, fp64 preset): observations, rewards,
    terminations over 40 steps with resets [the numpy env on the CPU backend].
 5. the Python layer's per-step overhead at 1, 64, 1024 worlds (bench/py_overhead.py).
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))
# pure-Python wheels carried to a machine without network (gymnasium and its
# dependencies: build/gpu_wheels, or SAPSIM_WHEELS) import straight from the zip files
for _whl in sorted(Path(os.environ.get("SAPSIM_WHEELS", ROOT / "build" / "gpu_wheels")).glob("*.whl")):
    sys.path.append(str(_whl))

import numpy as np  # noqa: E402

import sapsim  # noqa: E402

RESULTS: list[tuple[str, str, str]] = []


def check(name: str):
    def deco(fn):
        t0 = time.perf_counter()
        try:
            detail = fn() or ""
            status = "PASS"
        except SkipCheck as e:
            status, detail = "SKIP", str(e)
        except Exception as e:  # noqa: BLE001
            status, detail = "FAIL", f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
        RESULTS.append((status, name, detail))
        print(f"[{status}] {name} ({time.perf_counter() - t0:.1f} s) {detail}", flush=True)
        return fn

    return deco


class SkipCheck(Exception):
    pass


def close(a, b, tol, what):
    a, b = np.asarray(a), np.asarray(b)
    err = np.max(np.abs(a - b) / (1 + np.abs(b))) if a.size else 0.0
    if not err <= tol:
        raise AssertionError(f"{what}: max relative difference {err:.3g} > {tol}")
    return err


def main() -> int:
    if not sapsim.cuda_available():
        print(f"gpu_check: no usable GPU ({sapsim.cuda_device_name()})")
        return 2
    import torch

    print(f"gpu_check: {sapsim.cuda_device_name()}, torch {torch.__version__}, library {sapsim.library_path}")
    ant = ROOT / "scenes" / "ant.xml"
    dev = torch.device("cuda")

    @check("1. zero-copy views (torch DLPack, __cuda_array_interface__, JAX) and a ctrl write seen by the step")
    def _():
        g = sapsim.Sim(ant, nworld=64, device="cuda", preset="approx64", keyframe=0)
        c = sapsim.Sim(ant, nworld=64, device="cpu", preset="approx64", keyframe=0)
        exp = g.qpos_device
        tq = torch.from_dlpack(exp)
        assert tq.is_cuda and tq.data_ptr() == exp.ptr and tuple(tq.shape) == (64, 15), "torch.from_dlpack"
        ta = torch.as_tensor(g.qpos_device, device=dev)
        assert ta.data_ptr() == exp.ptr, "torch.as_tensor via __cuda_array_interface__ copied"
        jax_note = "jax: not installed"
        try:
            import jax
            import jax.dlpack

            jax.config.update("jax_enable_x64", True)  # float64 buffers as they are
            ja = jax.dlpack.from_dlpack(g.qpos_device)
            ptr = ja.unsafe_buffer_pointer()
            jax_note = f"jax {jax.__version__}: {'same address' if ptr == exp.ptr else 'COPIED'}"
            assert ptr == exp.ptr, f"jax.dlpack.from_dlpack copied ({ptr:#x} vs {exp.ptr:#x})"
            close(np.asarray(ja), g.get("qpos"), 0, "jax view values")
        except ImportError:
            pass
        tu = torch.from_dlpack(g.ctrl_device)
        u = torch.sin(torch.arange(64 * 8, device=dev, dtype=torch.float64).reshape(64, 8) * 0.37) * 0.8
        tu.copy_(u)  # torch's current stream
        g.step(20, stream=torch.cuda.current_stream())
        got = tq.clone()  # same stream: after the steps
        c.set("ctrl", u.cpu().numpy())
        c.step(20)
        err = close(got.cpu().numpy(), c.get("qpos"), 1e-8, "qpos after torch-written ctrl, GPU vs CPU")
        return f"(GPU vs CPU qpos rel. diff {err:.2e}; {jax_note})"

    @check("2. qpos written through torch + commit == Sim.set; NaN refused")
    def _():
        a = sapsim.Sim(ant, nworld=32, device="cuda", preset="approx64", keyframe=0)
        b = sapsim.Sim(ant, nworld=32, device="cuda", preset="approx64", keyframe=0)
        tq = torch.from_dlpack(a.qpos_device)
        tv = torch.from_dlpack(a.qvel_device)
        q = a.get("qpos")
        q[:, 2] += 0.05
        q[:, 7:] += 0.1
        v = np.random.default_rng(0).uniform(-0.5, 0.5, (32, 14))
        tq.copy_(torch.as_tensor(q, device=dev))
        tv.copy_(torch.as_tensor(v, device=dev))
        a.commit(stream=torch.cuda.current_stream())
        b.set("qpos", q)
        b.set("qvel", v)
        close(a.xpos, b.xpos, 0, "xpos after commit vs set")
        a.step(10)
        b.step(10)
        close(a.get("qpos"), b.get("qpos"), 0, "qpos after commit vs set, 10 steps")
        tq[3, 9] = float("nan")
        try:
            a.commit(stream=torch.cuda.current_stream())
            raise AssertionError("a NaN qpos was committed")
        except sapsim.NonFiniteError as e:
            assert "world 3, index 9" in str(e), str(e)
        assert a.world_flags[3] & sapsim.WorldFlag.NONFINITE

    @check("3. stepping on a caller's torch stream (ordering without host waits)")
    def _():
        a = sapsim.Sim(ant, nworld=256, device="cuda", keyframe=0)
        b = sapsim.Sim(ant, nworld=256, device="cuda", keyframe=0)
        tq, tu = torch.from_dlpack(a.qpos_device), torch.from_dlpack(a.ctrl_device)
        big = torch.randn(4096, 4096, device=dev)
        side = torch.cuda.Stream()
        for k in range(5):
            u = torch.full((256, 8), 0.2 * (k - 2), device=dev, dtype=torch.float64)
            torch.cuda.synchronize()
            with torch.cuda.stream(side):
                for _ in range(4):
                    big = torch.tanh(big @ big)  # tens of ms queued before the write
                tu.copy_(u)
                a.step(5, stream=side)
                snap = tq.clone()
            side.synchronize()
            b.set("ctrl", u.cpu().numpy())
            b.step(5)
            close(snap.cpu().numpy(), b.get("qpos"), 0, f"round {k}: caller-stream result vs synchronous")
        # an integer handle and torch's default stream work too
        a.step(1, stream=torch.cuda.current_stream().cuda_stream)
        torch.cuda.synchronize()

    @check("4. vector env: torch on the GPU vs numpy on the CPU (ant, fp64)")
    def _():
        try:
            from sapsim.vector import SapsimVectorEnv
        except ImportError as e:
            raise SkipCheck(f"gymnasium missing ({e})")
        g = SapsimVectorEnv("ant", num_envs=16, device="cuda", seed=3, preset="approx64", max_episode_steps=15)
        c = SapsimVectorEnv("ant", num_envs=16, device="cpu", seed=3, preset="approx64", max_episode_steps=15)
        og, oc = g.reset(seed=3)[0], c.reset(seed=3)[0]
        assert isinstance(og, torch.Tensor) and og.is_cuda
        close(og.cpu().numpy(), oc, 1e-12, "reset obs")
        worst = 0.0
        for k, act in enumerate(np.random.default_rng(1).uniform(-1, 1, (40, 16, 8))):
            rg = g.step(torch.as_tensor(act, device=dev))
            rc = c.step(act)
            worst = max(worst, close(rg[0].cpu().numpy(), rc[0], 1e-6, f"obs step {k}"),
                        close(rg[1].cpu().numpy(), rc[1], 1e-6, f"reward step {k}"))
            assert (rg[2].cpu().numpy() == rc[2]).all() and (rg[3].cpu().numpy() == rc[3]).all(), f"dones step {k}"
        return f"(worst rel. diff {worst:.2e} over 40 steps with resets)"

    @check("5. Python-layer overhead per step (medians, us)")
    def _():
        try:
            import py_overhead
            import gymnasium  # noqa: F401
        except ImportError as e:
            raise SkipCheck(f"needs gymnasium ({e})")
        rows = py_overhead.measure("ant", [1, 64, 1024], "cuda", 1, reps=50)
        lines = [f"\n    nworld {r['nworld']:>5}: raw C step {r['raw_c_step_us']:.0f}, Sim.step {r['sim_step_us']:.0f}, "
                 f"env.step {r['env_step_us']:.0f} (overhead {r['env_overhead_us']:.0f} us)" for r in rows]
        return "".join(lines)

    failed = [r for r in RESULTS if r[0] == "FAIL"]
    print(f"gpu_check: {sum(r[0] == 'PASS' for r in RESULTS)} passed, {len(failed)} failed, "
          f"{sum(r[0] == 'SKIP' for r in RESULTS)} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "4")
    sys.exit(main())
