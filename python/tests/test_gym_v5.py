"""Gymnasium's MuJoCo v5 tasks on sapsim (sapsim.vector.GymV5VectorEnv) against Gymnasium's own
env classes (gymnasium 1.x with MuJoCo 4's Python bindings) as the oracle:

- reset: Gymnasium's ``set_state`` (mj_forward) at sapsim's reset state gives sapsim's reset
  observation (cinert, cvel, qfrc_actuator computed by MuJoCo, not copied);
- step: Gymnasium's ``_get_obs``, ``_get_rew`` / ``step`` formulas and ``is_healthy`` on an mjData
  holding sapsim's state and the quantities MuJoCo leaves after ``mj_step`` +
  ``mj_rnePostConstraint`` (xpos, xipos, cfrc_ext, cinert, cvel, qfrc_actuator: sapsim's body
  outputs, which tests/test_body_outputs.c checks against MuJoCo) give sapsim's observation,
  reward, its terms and termination. The dynamics differ (SAP contact vs MuJoCo's soft
  contact), so trajectories are not compared.

Skips cleanly without gymnasium or mujoco.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

if importlib.util.find_spec("mujoco") is None:
    pytest.skip("Gymnasium's MuJoCo envs need MuJoCo's Python bindings (pip install mujoco==4.0.0)",
                allow_module_level=True)
# MuJoCo imported as sapsim.render does (its offscreen GL platform chosen first), so that the
# render tests of the same process still work
mujoco = pytest.importorskip("sapsim.render").import_mujoco()
gymnasium = pytest.importorskip("gymnasium")

from sapsim.vector import GYM_V5, GymV5VectorEnv, make_vec  # noqa: E402

_CLASSES = {
    "Ant-v5": ("ant_v5", "AntEnv"), "HalfCheetah-v5": ("half_cheetah_v5", "HalfCheetahEnv"),
    "Hopper-v5": ("hopper_v5", "HopperEnv"), "Walker2d-v5": ("walker2d_v5", "Walker2dEnv"),
    "Humanoid-v5": ("humanoid_v5", "HumanoidEnv"), "InvertedPendulum-v5": ("inverted_pendulum_v5", "InvertedPendulumEnv"),
    "Swimmer-v5": ("swimmer_v5", "SwimmerEnv"), "Reacher-v5": ("reacher_v5", "ReacherEnv"),
    "InvertedDoublePendulum-v5": ("inverted_double_pendulum_v5", "InvertedDoublePendulumEnv"),
    "Pusher-v5": ("pusher_v5", "PusherEnv"), "HumanoidStandup-v5": ("humanoidstandup_v5", "HumanoidStandupEnv"),
}


def _gym_env(task: str):
    import importlib

    mod, cls = _CLASSES[task]
    return getattr(importlib.import_module(f"gymnasium.envs.mujoco.{mod}"), cls)()


def _load(data, sim_state: dict, w: int) -> None:
    """mjData of Gymnasium's env := world w of sapsim (the state and what mj_step left)."""
    for name, arr in sim_state.items():
        if hasattr(data, name) and name != "world_flags":
            getattr(data, name)[:] = np.asarray(arr[w]).reshape(getattr(data, name).shape)


def _close(a, b, what: str, tol: float = 1e-12) -> None:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, f"{what}: shape {a.shape}, Gymnasium {b.shape}"
    err = np.max(np.abs(a - b)) / (1 + np.max(np.abs(b))) if a.size else 0.0
    assert err <= tol, f"{what}: relative error {err:.3g} (sapsim {a}, Gymnasium {b})"


def test_tasks_and_spaces():
    """Every task loads Gymnasium's XML; spaces, dt and time limits are Gymnasium's."""
    for task in GYM_V5:
        env = make_vec(task, 2, preset="approx64")
        ref = _gym_env(task)
        assert env.single_observation_space.shape == ref.observation_space.shape, task
        np.testing.assert_array_equal(env.single_action_space.low, ref.action_space.low)
        np.testing.assert_array_equal(env.single_action_space.high, ref.action_space.high)
        assert env.dt == pytest.approx(ref.dt, rel=1e-15), task
        assert env.max_episode_steps == gymnasium.spec(task).max_episode_steps, task
        ref.close()


@pytest.mark.parametrize("task", list(GYM_V5))
def test_reset_matches_gymnasium(task):
    """sapsim's reset observation is Gymnasium's at the same qpos, qvel (MuJoCo's mj_forward)."""
    env = make_vec(task, 3, preset="approx64", seed=3)
    obs, _ = env.reset()
    ref = _gym_env(task)
    ref.reset(seed=0)
    q, v = np.array(env.sim.qpos), np.array(env.sim.qvel)
    s = GYM_V5[task].params.get("reset_noise_scale", 0.1)
    for w in range(3):
        mujoco.mj_resetData(ref.model, ref.data)
        ref.set_state(q[w], v[w])
        _close(obs[w], ref._get_obs(), f"{task} reset obs world {w}")
        if task not in ("Reacher-v5", "InvertedDoublePendulum-v5", "Pusher-v5"):  # reset noise (IDP: normal qvel): within Gymnasium's bounds around init_qpos
            assert np.all(np.abs(q[w] - ref.init_qpos) <= s + 1e-15), task
        if task == "Pusher-v5":  # Gymnasium's reset_model: the arm at init_qpos, the cylinder in
            # [-0.3, 0] x [-0.2, 0.2] at least 0.17 from the goal at (0, 0), the goal and the
            # cylinder at rest, the arm's velocity within 0.005
            np.testing.assert_array_equal(q[w, :-4], ref.init_qpos[:-4])
            cyl = q[w, -4:-2]
            assert -0.3 <= cyl[0] <= 0 and -0.2 <= cyl[1] <= 0.2 and np.linalg.norm(cyl) > 0.17, cyl
            np.testing.assert_array_equal(q[w, -2:], 0)
            np.testing.assert_array_equal(v[w, -4:], 0)
            assert np.all(np.abs(v[w, :-4]) <= 0.005), v[w]
    ref.close()


@pytest.mark.parametrize("task", list(GYM_V5))
def test_step_matches_gymnasium(task):
    """obs, reward, its terms and termination of sapsim's steps equal Gymnasium's formulas on the
    same mjData; autoreset's final_obs is the episode's last observation."""
    n, nsteps = 3, 40
    env = make_vec(task, n, preset="approx64", seed=5)
    env.reset()
    ref = _gym_env(task)
    ref.reset(seed=0)
    rng = np.random.default_rng(1)
    lo, hi = env.single_action_space.low, env.single_action_space.high
    contact_seen, done_seen = 0.0, 0
    before = env._state()  # what Gymnasium's mjData holds before a step: the last step's, or the reset's
    for k in range(nsteps):
        a = rng.uniform(lo, hi, (n, env.sim.nu)) * 1.2  # also beyond ctrlrange: Gymnasium does not clip
        obs, reward, term, trunc, info = env.step(a)
        done = term | trunc
        after = env.last_state  # the arrays of this step, before any autoreset
        for w in range(n):
            d = ref.data
            _load(d, before, w)
            if task == "Ant-v5":
                pos0 = d.body(ref._main_body).xpos[:2].copy()
            elif task == "Humanoid-v5":
                from gymnasium.envs.mujoco.humanoid_v5 import mass_center
                pos0 = mass_center(ref.model, d)
            elif task == "Swimmer-v5":
                pos0 = d.qpos[0:2].copy()
            else:
                pos0 = d.qpos[0:1].copy()
            _load(d, after, w)
            d.ctrl[:] = a[w]
            want_obs = ref._get_obs()
            got_obs = info["final_obs"][w] if done[w] else obs[w]
            _close(got_obs, want_obs, f"{task} step {k} world {w} obs")
            if task == "InvertedPendulum-v5":
                want_term = bool(not np.isfinite(want_obs).all() or np.abs(want_obs[1]) > 0.2)
                want_r, terms = int(not want_term), {"reward_survive": int(not want_term)}
            elif task in ("Reacher-v5", "Pusher-v5"):
                want_r, terms = ref._get_rew(a[w])
                want_term = False
            elif task == "HumanoidStandup-v5":
                want_r, terms = ref._get_rew(d.qpos[2], a[w])
                want_term = False
            elif task == "InvertedDoublePendulum-v5":
                x, _, y = d.site_xpos[0]
                want_term = bool(y <= 1)
                want_r, terms = ref._get_rew(x, y, want_term)
            else:
                if task == "Ant-v5":
                    pos1 = d.body(ref._main_body).xpos[:2]
                elif task == "Humanoid-v5":
                    pos1 = mass_center(ref.model, d)
                elif task == "Swimmer-v5":
                    pos1 = d.qpos[0:2]
                else:
                    pos1 = d.qpos[0:1]
                vel = (pos1 - pos0) / ref.dt
                want_r, terms = ref._get_rew(vel[0], a[w])
                healthy = getattr(ref, "is_healthy", True)
                want_term = bool(not healthy and getattr(ref, "_terminate_when_unhealthy", False))
            for key in ("reward_contact", "reward_impact"):
                if key in terms:
                    contact_seen = max(contact_seen, abs(terms[key]))
            _close(reward[w], want_r, f"{task} step {k} world {w} reward")
            for key, val in terms.items():
                _close(info[key][w], val, f"{task} step {k} world {w} {key}")
            assert bool(term[w]) == want_term, f"{task} step {k} world {w}: terminated {term[w]}, Gymnasium {want_term}"
        done_seen += int(done.sum())
        fresh = env._state()
        before = {key: np.where(done.reshape((-1,) + (1,) * (np.ndim(val) - 1)), fresh[key], val)
                  for key, val in after.items()}
    if task in ("Ant-v5", "Humanoid-v5", "HumanoidStandup-v5"):
        assert contact_seen > 0, f"{task}: the contact cost never acted"
    ref.close()


def test_unknown_and_refused():
    with pytest.raises(Exception, match="unknown Gymnasium v5 task"):
        GymV5VectorEnv("Pusher-v4", 2)
    with pytest.raises(Exception, match="numpy arrays only"):
        make_vec("Hopper-v5", 2, array_backend="torch")


def test_parameters_pass_through():
    """A Gymnasium constructor parameter changes the task as in Gymnasium (ctrl_cost_weight)."""
    env = make_vec("HalfCheetah-v5", 2, preset="approx64", seed=0, ctrl_cost_weight=0.7)
    env.reset()
    a = np.full((2, 6), 0.5)
    _, _, _, _, info = env.step(a)
    np.testing.assert_allclose(info["reward_ctrl"], -0.7 * 6 * 0.25, rtol=1e-15)


def test_qfrc_constraint_static_limit(tmp_path):
    """qfrc_constraint (the step's J' f from SAP's momentum balance) of a pendulum resting on its
    joint limit balances gravity's torque m g l sin(q) (and is 0 off the limit)."""
    from sapsim import Sim
    from sapsim.vector import qfrc_constraint

    xml = tmp_path / "p.xml"
    xml.write_text("<mujoco><option timestep='0.005'/><worldbody><body><joint type='hinge' axis='0 1 0' "
                   "limited='true' range='20 60'/><geom type='sphere' size='0.05' pos='0 0 -0.8' mass='1.7'/>"
                   "</body></worldbody></mujoco>")
    sim = Sim(xml, nworld=2, preset="approx64", optimality_rel_tol=1e-13, cost_rel_tol=0)
    sim.qpos = [[0.5], [0.9]]  # gravity pulls both onto the lower limit (20 deg)
    sim.step(3000)
    q = sim.qpos[:, 0]
    f = qfrc_constraint(sim)[:, 0]
    want = 1.7 * 9.81 * 0.8 * np.sin(q)  # the limit holds the weight's torque -m g l sin(q)
    assert np.all(np.abs(q - np.radians(20)) < 1e-3), q
    np.testing.assert_allclose(f, want, rtol=1e-7)
    free = Sim(xml, nworld=1, preset="approx64")
    free.qpos = [[0.8]]  # within the range: no constraint force
    free.step(1)
    assert abs(qfrc_constraint(free)[0, 0]) <= 1e-12
