"""MJX beside sapsim on the same card: MuJoCo MJX stepping the same MJCF scene
batched with jax.vmap, timed over a jitted lax.scan of steps after a warm-up.

Usage (on a GPU machine with JAX): python3 bench/mjx_peer.py scenes/humanoid.xml 1024,8192
Prints one JSON line per batch size: world-steps/s and ns per world-step, the mean over
every step of the timed scan (one device sync at its end). Controls are uniform random
in the control range, fixed per world, like `sapsim bench --ctrl-noise 0.5`.
"""
import json
import sys
import time

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
from mujoco import mjx


def bench(path: str, nworld: int, nstep: int = 200) -> dict:
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    if m.nkey:
        mujoco.mj_resetDataKeyframe(m, d, 0)
    mx = mjx.put_model(m)
    dx = mjx.put_data(m, d)
    rng = np.random.default_rng(1)
    lo, hi = m.actuator_ctrlrange[:, 0], m.actuator_ctrlrange[:, 1]
    ctrl = rng.uniform(lo + 0.25 * (hi - lo), hi - 0.25 * (hi - lo), size=(nworld, m.nu))
    batch = jax.vmap(lambda c: dx.replace(ctrl=c))(jnp.asarray(ctrl))

    @jax.jit
    def run(b):
        def body(x, _):
            return jax.vmap(mjx.step, in_axes=(None, 0))(mx, x), None
        out, _ = jax.lax.scan(body, b, None, length=nstep)
        return out

    t0 = time.perf_counter()
    run(batch).qpos.block_until_ready()  # compile and warm up
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = run(batch)
    out.qpos.block_until_ready()
    s = time.perf_counter() - t0
    finite = bool(jnp.all(jnp.isfinite(out.qpos)))
    return {"peer": "mjx", "mujoco": mujoco.__version__, "jax": jax.__version__,
            "device": str(jax.devices()[0].device_kind), "scene": path, "nworld": nworld,
            "nstep": nstep, "dt": float(m.opt.timestep), "steps_per_s": nworld * nstep / s,
            "ns_per_world_step": 1e9 * s / (nworld * nstep), "compile_s": compile_s,
            "finite": finite}


if __name__ == "__main__":
    scene = sys.argv[1] if len(sys.argv) > 1 else "scenes/humanoid.xml"
    sizes = [int(x) for x in (sys.argv[2] if len(sys.argv) > 2 else "1024,8192").split(",")]
    for n in sizes:
        print(json.dumps(bench(scene, n)), flush=True)
