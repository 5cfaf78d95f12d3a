#!/usr/bin/env python3
"""Write a MJCF scene with large convex meshes (for `sapsim bench`): four balls, each
a Fibonacci point set of N points on a sphere of radius 0.1 m whose radii are jittered
inward by up to NOISE (0: every point is a hull vertex; > 0: a noisy point cloud whose
convex hull, computed by MuJoCo's compiler, keeps a fraction), dropped on a plane, a
box and each other. Deterministic (fixed seed).

  python3 bench/mesh_scene.py N [NOISE] > /tmp/mesh_balls.xml
"""
import math
import random
import sys


def points(n, noise, seed=1):
    rng = random.Random(seed)
    golden = math.pi * (3.0 - math.sqrt(5.0))
    out = []
    for i in range(n):
        z = 1.0 - 2.0 * (i + 0.5) / n
        r = math.sqrt(max(0.0, 1.0 - z * z))
        a = golden * i
        s = 0.1 * (1.0 - noise * rng.random())
        out.append("%.7g %.7g %.7g" % (s * r * math.cos(a), s * r * math.sin(a), s * z))
    return "  ".join(out)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 40000
    noise = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    bodies = []
    for i, (x, y, z) in enumerate([(0, 0, 0.12), (0.05, 0.02, 0.35), (0.45, 0, 0.15), (-0.4, 0.1, 0.11)]):
        bodies.append('    <body name="ball%d" pos="%g %g %g" euler="0.3 0.2 %g"><freejoint/>'
                      '<geom type="mesh" mesh="ball" density="500"/></body>' % (i, x, y, z, 0.7 * i))
    print('<!-- mesh_balls: written by `python3 bench/mesh_scene.py %d %g`: four free convex mesh\n'
          '     balls (%d points on a 0.1 m sphere, radii jittered inward by up to %g; MuJoCo\n'
          '     compiles the convex hull, sapsim collides on it) dropped on a plane, a box and\n'
          '     each other. -->' % (n, noise, n, noise))
    print('<mujoco model="mesh_balls">\n  <option timestep="0.005"/>\n'
          '  <asset><mesh name="ball" vertex="%s"/></asset>\n  <worldbody>\n'
          '    <geom name="ground" type="plane" size="5 5 0.1"/>\n'
          '    <geom name="block" type="box" pos="0.45 0 0.02" size="0.1 0.1 0.02"/>\n%s\n'
          '  </worldbody>\n</mujoco>' % (points(n, noise), "\n".join(bodies)))


if __name__ == "__main__":
    main()
