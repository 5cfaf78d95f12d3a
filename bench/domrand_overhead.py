"""Cost of per-world parameters: a humanoid batch stepped plain and with every world
randomized (mass, inertia, friction, damping, gains, gravity), alternated, one thread.

    OMP_NUM_THREADS=1 build/pyenv/bin/python bench/domrand_overhead.py [nworld] [runs]
"""

import sys
import time

import numpy as np

import sapsim


def make(randomized: bool, nworld: int) -> sapsim.Sim:
    sim = sapsim.Sim("scenes/humanoid.xml", nworld=nworld, threads=1)
    if randomized:
        rng = np.random.default_rng(0)
        mass = sim.get_param("body_mass")
        sim.randomize(body_mass=mass * rng.uniform(0.8, 1.2, mass.shape),
                      body_inertia=sim.get_param("body_inertia") * rng.uniform(0.8, 1.2, (nworld, 1, 1)),
                      geom_friction=sim.get_param("geom_friction") * rng.uniform(0.5, 1.5, (nworld, 1, 1)),
                      dof_damping=sim.get_param("dof_damping") * 1.1,
                      actuator_gain=sim.get_param("actuator_gain") * 0.9, gravity=[0, 0, -9.0])
    sim.ctrl[:] = 0.2
    sim.step(5)
    return sim


def main() -> None:
    nworld = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    times: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(runs):
        for randomized in (False, True):
            sim = make(randomized, nworld)
            t = time.perf_counter()
            sim.step(100)
            times[randomized].append((time.perf_counter() - t) / (100 * nworld) * 1e9)
    for randomized, ts in times.items():
        print(f"{'randomized' if randomized else 'plain':10s} ns per world-step: median {np.median(ts):.0f}, "
              f"min {min(ts):.0f} ({nworld} worlds, {runs} runs)")


if __name__ == "__main__":
    main()
