"""The Python layer's per-step overhead: the raw C step (``sap_step`` called through
ctypes on the batch handle: the library's time plus one ctypes call, about 1 us),
``Sim.step`` (input check + the same call), and a vector-env step
(``SapsimVectorEnv.step`` with frame_skip=1: actions in, observation, reward,
termination out; no resets in the timed steps). Medians over repeated steps.

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


def _median_us(fn, reps: int, sync=None) -> float:
    import numpy as np

    fn()
    if sync:
        sync()
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        if sync:
            sync()
        t.append(time.perf_counter() - t0)
    return float(np.median(t) * 1e6)


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
        raw = _median_us(lambda: lib.sap_step(handle, 1), r, sync)
        py = _median_us(lambda: sim.step(1), r, sync)
        envt = _median_us(lambda: env.step(zeros), r, sync)
        rows.append({"task": task, "device": sim.device_name, "nworld": n, "raw_c_step_us": round(raw, 1),
                     "sim_step_us": round(py, 1), "env_step_us": round(envt, 1),
                     "sim_overhead_us": round(py - raw, 1), "env_overhead_us": round(envt - raw, 1),
                     "env_overhead_pct": round(100 * (envt - raw) / raw, 1)})
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
    print(f"{'nworld':>7} {'raw C step':>11} {'Sim.step':>10} {'env.step':>10} {'Sim ovh':>8} {'env ovh':>8}  (us, medians)")
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
