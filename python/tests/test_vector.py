"""sapsim.vector: Gymnasium 1.x vector-env conformance (spaces, shapes, dtypes,
same-step autoreset, seeding determinism, data not reused, gymnasium's registry and a
vector wrapper), the options (frame_skip, action delay, observation noise) and the
rewards against a hand computation.

Reward oracle: a second, plain Sim (not the env) is put in the env's state, stepped
frame_skip times with the same controls, and the task's definition (module doc,
Gymnasium's Ant-v5/Humanoid-v5/InvertedPendulum-v5 terms) is applied to its arrays
read through Sim.get / Sim.array: forward velocity from body positions (the
mass-weighted centre of mass for the humanoid), control cost, healthy reward."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import sapsim
from sapsim.vector import TASKS, SapsimVectorEnv

from conftest import SCENES

TASK_SIZES = {"cartpole": (4, 1), "ant": (27, 8), "humanoid": (53, 21), "quadruped": (27, 8)}


@pytest.mark.parametrize("task", list(TASKS))
def test_spaces_shapes_and_autoreset(task):
    n = 5
    env = SapsimVectorEnv(task, num_envs=n, seed=1, max_episode_steps=3)
    nobs, nu = TASK_SIZES[task]
    assert env.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    assert env.single_observation_space.shape == (nobs,) and env.observation_space.shape == (n, nobs)
    assert env.single_action_space.shape == (nu,) and env.action_space.shape == (n, nu)
    assert env.single_action_space.dtype == np.float32
    obs, info = env.reset(seed=1)
    assert obs.dtype == np.float64 and env.observation_space.contains(obs) and isinstance(info, dict)
    rng = np.random.default_rng(0)
    for k in range(3):
        a = rng.uniform(-1, 1, (n, nu)).astype(np.float32)
        prev = obs.copy()
        obs, r, te, tr, info = env.step(a)
        assert r.shape == (n,) and r.dtype == np.float64 and np.isfinite(r).all()
        assert te.dtype == np.bool_ and tr.dtype == np.bool_ and te.shape == tr.shape == (n,)
        assert env.observation_space.contains(obs)
        assert not np.shares_memory(obs, env.sim.qpos) and not np.array_equal(obs, prev)
        for key in ("newton_iter", "world_flags", "ncon"):
            assert info[key].shape == (n,) and info[key].dtype == np.int32, key
        assert (info["newton_iter"] >= 0).all()
    # third step: every world still running was truncated and reset in the same step
    done = te | tr
    assert (tr | te).all() and not (te & tr).any()
    assert info["_final_obs"].tolist() == done.tolist() and info["final_obs"].shape == (n, nobs)
    assert not np.array_equal(info["final_obs"], obs)
    np.testing.assert_array_equal(env.sim.time, 0.0)  # fresh episodes
    obs, *_ = env.step(np.zeros((n, nu), dtype=np.float32))  # and they go on
    np.testing.assert_allclose(env.sim.time, env.dt)


def test_seeding_determinism():
    def run(seed):
        env = SapsimVectorEnv("ant", num_envs=4, seed=seed, obs_noise=0.01, max_episode_steps=4)
        out = [env.reset(seed=seed)[0]]
        for a in np.random.default_rng(7).uniform(-1, 1, (9, 4, 8)):
            obs, r, te, tr, _ = env.step(a)
            out += [obs, r, te, tr]
        return out

    a, b, c = run(3), run(3), run(4)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], c[0])
    # reset(seed) reseeds the same env
    env = SapsimVectorEnv("cartpole", num_envs=3)
    first = env.reset(seed=11)[0]
    env.step(np.ones((3, 1)))
    np.testing.assert_array_equal(env.reset(seed=11)[0], first)


def _oracle_reward(task: str, env: SapsimVectorEnv, a: np.ndarray, ctrl: np.ndarray):
    """The reward of one env step from a plain Sim put in the env's state."""
    spec = TASKS[task]
    src = env.sim
    sim = sapsim.Sim(SCENES / spec.scene, nworld=env.num_envs)
    for field in ("qpos", "qvel", "qvel_prev", "time"):  # qvel_prev after qvel: the warm start's
        sim.set(field, src.get(field))
    model = sim.model
    torso = model.body_names.index("torso") if "torso" in model.body_names else 1
    mass = model.array("body_mass")

    def fwd():
        if task == "humanoid":
            xi = sim.array("xipos").reshape(env.num_envs, -1, 3)[:, :, 0]
            return (xi * mass).sum(1) / mass.sum()
        return sim.get("xpos").reshape(env.num_envs, -1, 3)[:, torso, 0]

    # the env's x before its step is the pose of the state the previous step started
    # from (MuJoCo's and Gymnasium's xpos after mj_step); take it from the env
    if task == "humanoid":
        x0 = (src.array("xipos").reshape(env.num_envs, -1, 3)[:, :, 0] * mass).sum(1) / mass.sum()
    else:
        x0 = src.get("xpos").reshape(env.num_envs, -1, 3)[:, torso, 0]
    sim.set("ctrl", ctrl)
    sim.step(env.frame_skip)
    if task == "cartpole":
        return np.ones(env.num_envs), np.abs(sim.get("qpos")[:, 1]) > 0.2
    vel = (fwd() - x0) / (sim.timestep * env.frame_skip)
    z = sim.get("qpos")[:, 2]
    lo, hi = spec.healthy_z
    reward = spec.forward_weight * vel + spec.healthy_reward - spec.ctrl_cost_weight * (a * a).sum(1)
    return reward, (z < lo) | (z > hi)


@pytest.mark.parametrize("task", ["cartpole", "ant", "humanoid", "quadruped"])
def test_reward_matches_hand_computation(task):
    env = SapsimVectorEnv(task, num_envs=4, seed=2)
    env.reset(seed=2)
    rng = np.random.default_rng(1)
    nu = env.sim.nu
    for _ in range(3):
        a = rng.uniform(-1, 1, (4, nu))
        if task == "cartpole":
            ctrl = 0.1 * a
        elif task == "quadruped":
            lo, hi = env.sim.model.ctrl_range.T
            ctrl = lo + (a + 1) * 0.5 * (hi - lo)
        else:
            ctrl = a
        want, fell = _oracle_reward(task, env, a, ctrl)
        _, r, te, tr, info = env.step(a)
        np.testing.assert_allclose(r, want, rtol=1e-9, atol=1e-9)
        if task != "quadruped":  # (the quadruped also terminates on tipping)
            np.testing.assert_array_equal(te, fell)
        if task in ("ant", "humanoid"):
            np.testing.assert_allclose(info["reward_ctrl"], -TASKS[task].ctrl_cost_weight * (a * a).sum(1))


def test_cartpole_terminates_on_angle():
    env = SapsimVectorEnv("cartpole", num_envs=2, seed=0)
    env.reset(seed=0)
    q = env.sim.get("qpos")
    q[1, 1] = 0.5  # world 1's pole past 0.2 rad
    env.sim.set("qpos", q)
    obs, r, te, tr, info = env.step(np.zeros((2, 1)))
    assert te.tolist() == [False, True] and info["final_obs"][1, 1] > 0.2 and abs(obs[1, 1]) <= 0.011


def test_frame_skip_action_delay_obs_noise():
    env = SapsimVectorEnv("ant", num_envs=2, seed=0, frame_skip=3, action_delay=2)
    env.reset(seed=0)
    acts = [np.full((2, 8), 0.1 * (k + 1)) for k in range(4)]
    for k, a in enumerate(acts):
        env.step(a)
        np.testing.assert_allclose(env.sim.time, 3 * (k + 1) * env.sim.timestep)
        want = np.zeros((2, 8)) if k < 2 else acts[k - 2]
        np.testing.assert_array_equal(env.sim.ctrl, want)  # applied: the action of 2 steps ago
    # noise: same seed with and without noise differs by about the noise's std
    clean = SapsimVectorEnv("ant", num_envs=64, seed=5).reset(seed=5)[0]
    noisy = SapsimVectorEnv("ant", num_envs=64, seed=5, obs_noise=0.05).reset(seed=5)[0]
    diff = noisy - clean
    assert 0.04 < diff.std() < 0.06 and abs(diff.mean()) < 0.01
    with pytest.raises(sapsim.ArgumentError, match="unknown task"):
        SapsimVectorEnv("walker")
    with pytest.raises(sapsim.ArgumentError, match="actions must have shape"):
        env.step(np.zeros((3, 8)))


def test_gymnasium_registry_and_wrapper():
    env = gymnasium.make_vec("sapsim/Cartpole-v0", num_envs=3, vectorization_mode="vector_entry_point")
    env = gymnasium.wrappers.vector.RecordEpisodeStatistics(env)
    env.reset(seed=0)
    ended = False
    for _ in range(30):
        _, _, te, tr, info = env.step(np.ones((3, 1), dtype=np.float32))  # pushes the pole over
        if "episode" in info:
            ended = True
            assert (info["episode"]["r"][info["_episode"]] >= 1).all()
    assert ended
    env.close()


def test_torch_backend_on_cpu_when_installed():
    torch = pytest.importorskip("torch")
    a = SapsimVectorEnv("ant", num_envs=3, seed=4, array_backend="torch")
    b = SapsimVectorEnv("ant", num_envs=3, seed=4)
    oa, ob = a.reset(seed=4)[0], b.reset(seed=4)[0]
    assert isinstance(oa, torch.Tensor)
    np.testing.assert_array_equal(oa.numpy(), ob)
    for act in np.random.default_rng(0).uniform(-1, 1, (4, 3, 8)):
        ra = a.step(torch.as_tensor(act))
        rb = b.step(act)
        for x, y in zip(ra[:4], rb[:4]):  # sums in another order: rewards to 1e-12
            np.testing.assert_allclose(x.numpy(), y, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(ra[0].numpy(), rb[0])  # observations: the same state
