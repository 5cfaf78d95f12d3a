#!/usr/bin/env python3
"""Write a MJCF scene of N separate free objects on a plane (for `sapsim bench` and the
island scaling plot, docs/performance.md): spheres, boxes and capsules of varied sizes on a
grid with 0.5 m spacing, so that no two touch; a third rest on the plane, a third slide on it
(initial velocity in a keyframe), a third fall from heights up to 1 m. Deterministic (fixed
seed).

  python3 bench/many_objects.py N > /tmp/many_N.xml
"""
import math
import random
import sys


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    rng = random.Random(7)
    side = int(math.ceil(math.sqrt(n)))
    bodies, qpos, qvel = [], [], []
    for i in range(n):
        x = 0.5 * (i % side - side / 2)
        y = 0.5 * (i // side - side / 2)
        kind = ("sphere", "box", "capsule")[i % 3]
        s = rng.uniform(0.04, 0.1)
        if kind == "sphere":
            geom = "type='sphere' size='%.4g'" % s
            zr = s
        elif kind == "box":
            geom = "type='box' size='%.4g %.4g %.4g'" % (s, 0.8 * s, 0.6 * s)
            zr = 0.6 * s
        else:  # lying capsule (axis along x)
            geom = "type='capsule' size='%.4g %.4g' euler='0 90 0'" % (0.6 * s, s)
            zr = 0.6 * s
        mode = (i // 3) % 3  # 0 rest, 1 slide, 2 fall
        z = zr if mode < 2 else zr + rng.uniform(0.2, 1.0)
        v = (rng.uniform(0.2, 1.0), rng.uniform(-0.3, 0.3)) if mode == 1 else (0.0, 0.0)
        bodies.append("    <body pos='%.4g %.4g %.6g'><freejoint/><geom %s/></body>" % (x, y, z, geom))
        qpos.append("%.4g %.4g %.6g 1 0 0 0" % (x, y, z))
        qvel.append("%.3g %.3g 0 0 0 0" % v)
    print("<mujoco model='many_objects_%d'>" % n)
    print("  <option timestep='0.002'/>")
    print("  <size memory='%dM'/>" % max(16, n // 4))
    print("  <default><geom friction='0.6 0.005 0.0001' density='800'/></default>")
    print("  <worldbody>")
    print("    <geom name='ground' type='plane' size='%g %g 0.1'/>" % (side + 2, side + 2))
    print("\n".join(bodies))
    print("  </worldbody>")
    print("  <keyframe><key qpos='%s' qvel='%s'/></keyframe>" % (" ".join(qpos), " ".join(qvel)))
    print("</mujoco>")


if __name__ == "__main__":
    main()
