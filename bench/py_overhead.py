"""The Python layer's per-step overhead: the raw C step (``sap_step`` called through
ctypes on the batch handle: the library's time plus one ctypes call, about 1 us),
``Sim.step`` (input check + the same call), and a vector-env step
(``SapsimVectorEnv.step`` with frame_skip=1: actions in, observation, reward,
termination out). The three are timed in turn within each round (the same evolving
state, the same machine load); figures are medians over rounds, overheads medians of
the per-round differences. Resets of fallen worlds may fall in the env's steps.

    python bench/py_overhead.py [--scene ant] [--worlds 1,64,1024] [--device cpu|cuda] [--threads 1]

On the GPU the raw step and Sim.step synchronise (sap_step waits); the env uses torch
tensors and Sim.step(stream=...) and is timed with a torch synchronisation per step.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path


def _interleaved_us(fns, reps: int, sync=None) -> list[list[float]]:
    """Time each of `fns` once per round, `reps` rounds, interleaved so that every
    function sees the same evolving state and the same machine load; microseconds."""
    out: list[list[float]] = [[] for _ in fns]
    for f in fns:  # warm-up
        f()
    for _ in range(reps):
        for i, f in enumerate(fns):
            if sync:
                sync()
            t0 = time.perf_counter()
            f()
            if sync:
                sync()
            out[i].append((time.perf_counter() - t0) * 1e6)
    return out


def measure(task: str, worlds: list[int], device: str, threads: int, reps: int = 0) -> list[dict]:
    import numpy as np

    import sapsim
    from sapsim._capi import lib
    from sapsim.vector import SapsimVectorEnv

    rows = []
    for n in worlds:
        r = reps or (200 if n <= 64 else 30)
        env = SapsimVectorEnv(task, num_envs=n, device=device, frame_skip=1, max_episode_steps=10**9, seed=0,
                              threads=threads)
        env.reset(seed=0)
        sim = env.sim
        handle = sim._h.sim
        sync = None
        zeros = np.zeros((n, sim.nu), dtype=np.float32)
        if env.backend == "torch":
            import torch

            zeros = torch.zeros((n, sim.nu), dtype=torch.float64, device="cuda" if sim.on_gpu else "cpu")
            if sim.on_gpu:
                sync = torch.cuda.synchronize
        t_raw, t_sim, t_env = _interleaved_us(
            [lambda: lib.sap_step(handle, 1), lambda: sim.step(1), lambda: env.step(zeros)], r, sync)
        raw, py, envt = (float(np.median(t)) for t in (t_raw, t_sim, t_env))
        # overheads: medians of the per-round differences (the state is the same within a round)
        d_sim = float(np.median(np.subtract(t_sim, t_raw)))
        d_env = float(np.median(np.subtract(t_env, t_raw)))
        rows.append({"task": task, "device": sim.device_name, "nworld": n, "raw_c_step_us": round(raw, 1),
                     "sim_step_us": round(py, 1), "env_step_us": round(envt, 1),
                     "sim_overhead_us": round(d_sim, 1), "env_overhead_us": round(d_env, 1),
                     "env_overhead_pct": round(100 * d_env / raw, 1)})
        env.close()
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", default="ant", help="vector-env task (default ant)")
    ap.add_argument("--worlds", default="1,64,1024")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=1, help="CPU threads of the batch (default 1)")
    ap.add_argument("--reps", type=int, default=0, help="timed steps per figure (default 200, 30 past 64 worlds)")
    ap.add_argument("--json", help="append JSON lines here")
    args = ap.parse_args()
    rows = measure(args.task, [int(x) for x in args.worlds.split(",")], args.device, args.threads, args.reps)
    print(f"{'nworld':>7} {'raw C step':>11} {'Sim.step':>10} {'env.step':>10} {'Sim ovh':>8} {'env ovh':>8}  (us; overhead: median per-round difference)")
    for r in rows:
        print(f"{r['nworld']:>7} {r['raw_c_step_us']:>11.1f} {r['sim_step_us']:>10.1f} {r['env_step_us']:>10.1f} "
              f"{r['sim_overhead_us']:>8.1f} {r['env_overhead_us']:>8.1f}  {r['device']}")
    if args.json:
        with open(args.json, "a") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
