#!/usr/bin/env python3
"""Write a MJCF scene of N free bodies that all touch: spheres, boxes and capsules of one
size (10 cm across) on a cubic lattice (side ceil(N^(1/3)), spacing 9.9 cm: each presses
1 mm into its neighbours, the bottom layer into the ground plane), so the whole heap is one
island of N trees from the first step under every preset (the block-sparse factor's storage,
docs/performance.md). Deterministic (no randomness).

  python3 bench/pile.py N [spheres|mixed] > /tmp/pile_N.xml
"""
import math
import sys


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 216
    kind = sys.argv[2] if len(sys.argv) > 2 else "mixed"
    if kind not in ("spheres", "mixed"):
        sys.exit("usage: pile.py N [spheres|mixed]")
    r, d = 0.05, 0.099  # half extent, lattice spacing
    side = int(math.ceil(n ** (1 / 3) - 1e-9))
    bodies = []
    for i in range(n):
        x, y, z = i % side, (i // side) % side, i // (side * side)
        shape = "sphere" if kind == "spheres" else ("sphere", "box", "capsule")[i % 3]
        if shape == "sphere":
            geom = "type='sphere' size='%g'" % r
        elif shape == "box":
            geom = "type='box' size='%g %g %g'" % (r, r, r)
        else:  # standing capsule: radius r, total height 2 r
            geom = "type='capsule' size='%g %g'" % (r, 1e-3)
        pos = (d * (x - side / 2), d * (y - side / 2), d / 2 + d * z)
        bodies.append("    <body pos='%.6g %.6g %.6g'><freejoint/><geom %s/></body>" % (pos + (geom,)))
    print("<mujoco model='pile_%d_%s'>" % (n, kind))
    print("  <option timestep='0.002'/>")
    print("  <size memory='%dM'/>" % max(16, n // 4))
    print("  <default><geom friction='0.6 0.005 0.0001' density='800'/></default>")
    print("  <worldbody>")
    print("    <geom name='ground' type='plane' size='%g %g 0.1'/>" % (side + 2, side + 2))
    print("\n".join(bodies))
    print("  </worldbody>")
    print("</mujoco>")


if __name__ == "__main__":
    main()
