"""MuJoCo 4's sleeping trees through the Python API: the ``tree_asleep`` state field. The
oracle for the reset values is MuJoCo 4.0's own mj_resetData on the same scene (the mujoco
bindings); the C tests (tests/test_sleep.c) hold the lockstep against MuJoCo."""

from __future__ import annotations

import numpy as np
import pytest

import sapsim

XML = """<mujoco><option sleep_tolerance='0.02'><flag sleep='enable'/></option><worldbody>
<geom type='plane' size='5 5 .1'/>
<body name='a' pos='0 0 0.1' sleep='init'><freejoint/><geom size='.1'/></body>
<body name='b' pos='1 0 0.5' sleep='never'><freejoint/><geom size='.1'/></body>
<body name='c' pos='2 0 0.5'><freejoint/><geom type='box' size='.1 .1 .1'/></body>
</worldbody></mujoco>"""


def test_reset_values_and_bad_set(tmp_path):
    mujoco = pytest.importorskip("mujoco")
    path = tmp_path / "sleep.xml"
    path.write_text(XML)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    mujoco.mj_resetData(m, d)
    sim = sapsim.Sim(path, nworld=2, preset="approx64", device="cpu")
    ta = sim.get("tree_asleep")
    assert ta.shape == (2, 3)
    np.testing.assert_array_equal(ta, np.tile(d.tree_asleep, (2, 1)))
    before = ta.copy()
    bad = ta.copy()
    bad[1, 2] = 1  # tree 2 -> tree 1, which is awake: no cycle
    with pytest.raises(sapsim.SapsimError, match="tree 2"):
        sim.set("tree_asleep", bad)
    np.testing.assert_array_equal(sim.get("tree_asleep"), before)
    sim.step(5)
    q = sim.get("qpos")
    assert (sim.get("tree_asleep")[:, 0] == 0).all() and (q[:, 2] == 0.1).all()  # 'a' sleeps in place
