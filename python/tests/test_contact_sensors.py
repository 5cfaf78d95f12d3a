"""Contact, insidesite and distance sensors reach Sim.sensordata, against analytic oracles:
spheres of radius r at rest on a floor (contact found 1, normal force m g, dist from the
penetration, the floor's normal, a distance sensor equal to z - r before landing), and
insidesite switching as the sphere falls through a site. The MuJoCo 4.0 oracle itself runs in
tests/test_contact_sensor.c."""

from __future__ import annotations

import numpy as np
import pytest

import sapsim

XML = """<mujoco><option timestep='0.002'/><worldbody>
<geom name='floor' type='plane' size='5 5 .1'/>
<site name='zone' type='box' pos='0 0 0.5' size='1 1 0.1'/>
<body name='ball' pos='0 0 1'><freejoint/><geom name='ball' size='{r}' mass='{m}'/></body>
</worldbody><sensor>
<contact name='c' geom1='floor' geom2='ball' data='found force dist normal' reduce='mindist'/>
<contact name='touching' body1='ball' data='found dist'/>
<distance name='d' geom1='ball' geom2='floor' cutoff='2'/>
<fromto name='ft' geom1='ball' geom2='floor' cutoff='2'/>
<insidesite name='in' objtype='body' objname='ball' site='zone'/>
</sensor></mujoco>"""


@pytest.mark.parametrize("r,m", [(0.02, 0.05), (0.3, 40.0)])
def test_resting_sphere(tmp_path, r, m):
    path = tmp_path / "ball.xml"
    path.write_text(XML.format(r=r, m=m))
    sim = sapsim.Sim(str(path), nworld=2, preset="approx64")
    assert sim.sensordata.shape == (2, 8 + 2 + 1 + 6 + 1)
    # before landing: no contact, distance = z - r, fromto from the ball's bottom to the floor
    z = np.array(sim.qpos)[:, 2]
    np.testing.assert_allclose(sim.sensor("d")[:, 0], z - r, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sim.sensor("ft"), [[0, 0, zi - r, 0, 0, 0] for zi in z], rtol=0, atol=1e-12)
    assert np.all(sim.sensor("c") == 0) and np.all(sim.sensor("touching") == 0)
    seen_inside = False
    for _ in range(60):
        sim.step(25)
        zc = np.array(sim.qpos)[:, 2]
        inside = (np.abs(zc - 0.5) < 0.1).astype(float)
        np.testing.assert_array_equal(sim.sensor("in")[:, 0], inside)
        seen_inside |= bool(inside.any())
    assert seen_inside
    c = sim.sensor("c")
    zc = np.array(sim.qpos)[:, 2]
    np.testing.assert_array_equal(c[:, 0], 1)
    np.testing.assert_allclose(c[:, 1], m * 9.81, rtol=1e-4)  # normal force, floor on ball
    np.testing.assert_allclose(c[:, 2:4], 0, atol=1e-4 * m * 9.81)
    np.testing.assert_allclose(c[:, 4], zc - r, rtol=0, atol=1e-9)  # penetration (the step's start)
    np.testing.assert_allclose(c[:, 5:8], [[0, 0, 1]] * 2, rtol=0, atol=1e-12)
    assert np.all(zc - r < 0)
    # the position-stage sensor (no force): the ball's contact, flipped to point out of the ball
    np.testing.assert_array_equal(sim.sensor("touching")[:, 0], 1)
    np.testing.assert_allclose(sim.sensor("touching")[:, 1], zc - r, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sim.sensor("d")[:, 0], zc - r, rtol=0, atol=1e-12)
