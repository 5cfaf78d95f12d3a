#!/usr/bin/env python3
"""Accuracy of the per-island Newton loop (option island_newton, issue 16) against a tightly
converged solve: the golden runs' setup (tests/test_golden.c: 8 worlds, world w's velocity
offset 0.0625 ((7 i + 13 w) % 11 - 5)), stepped by the one-loop solve (island_newton=0, the
bits before), the per-island solve (1), and a tight solve (optimality_rel_tol=1e-12,
line_search=exact_root, the preset's precisions otherwise).

  one-step: at every step the three start from the tight run's state (qpos, qvel; the warm
            start is then qvel) and take one step; max |qvel - qvel_tight| over worlds and dofs,
            the largest over the steps and the mean of the per-step maxima;
  trajectory: each runs nstep steps on its own; max |qpos - qpos_tight| at the end.

  PYTHONPATH=python SAPSIM_LIB=build-cpu/libsapsim.so python3 bench/island_newton_accuracy.py \
      scenes/box_stack.xml drake 100
"""
import sys

import numpy as np

import sapsim


def make(scene, preset, nworld, **opt):
    s = sapsim.Sim(scene, nworld, preset=preset, threads=1, **opt)
    qv = s.get("qvel")
    nv = qv.shape[1]
    for w in range(nworld):
        for i in range(nv):
            qv[w, i] += 0.0625 * (((7 * i + 13 * w) % 11) - 5)
    s.set("qvel", qv)
    return s


def main():
    scene = sys.argv[1] if len(sys.argv) > 1 else "scenes/box_stack.xml"
    preset = sys.argv[2] if len(sys.argv) > 2 else "drake"
    nstep = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    nworld = 8
    variants = {"one_loop": dict(island_newton=0), "islands": dict(island_newton=1)}
    tight = dict(optimality_rel_tol=1e-12, line_search="exact_root")
    # one-step errors along the tight trajectory
    ref = make(scene, preset, nworld, **tight)
    sims = {k: make(scene, preset, nworld, **v) for k, v in variants.items()}
    probe = make(scene, preset, nworld, **tight)
    err = {k: [] for k in sims}
    for n in range(nstep):
        q, v = ref.get("qpos"), ref.get("qvel")
        probe.set("qpos", q)
        probe.set("qvel", v)
        probe.step(1)
        vt = probe.get("qvel")
        for k, s in sims.items():
            s.set("qpos", q)
            s.set("qvel", v)
            s.step(1)
            err[k].append(float(np.max(np.abs(s.get("qvel") - vt))))
        ref.step(1)
    out = {"scene": scene, "preset": preset, "nstep": nstep}
    for k in sims:
        out["onestep_max_" + k] = max(err[k])
        out["onestep_mean_" + k] = float(np.mean(err[k]))
    # free-running trajectories
    runs = {k: make(scene, preset, nworld, **v) for k, v in variants.items()}
    runs["tight"] = make(scene, preset, nworld, **tight)
    for s in runs.values():
        s.step(nstep)
    qt = runs["tight"].get("qpos")
    for k in variants:
        out["traj_qpos_" + k] = float(np.max(np.abs(runs[k].get("qpos") - qt)))
    out["traj_qpos_one_loop_vs_islands"] = float(np.max(np.abs(runs["one_loop"].get("qpos") - runs["islands"].get("qpos"))))
    print(" ".join("%s=%s" % (k, ("%.3g" % v) if isinstance(v, float) else v) for k, v in out.items()))


if __name__ == "__main__":
    main()
