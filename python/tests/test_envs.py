"""sapsim.envs: shapes and dtypes, determinism under a seed, same-step autoreset on
termination and truncation."""

from __future__ import annotations

import numpy as np

from sapsim.envs import LocomotionEnv


def test_shapes_and_determinism():
    envs = [LocomotionEnv("ant", num_envs=4, seed=3) for _ in range(2)]
    outs = []
    for env in envs:
        obs, info = env.reset()
        assert obs.shape == env.observation_shape == (4, 13 + 14) and obs.dtype == np.float64
        actions = np.random.default_rng(0).uniform(-1, 1, (5,) + env.action_shape)
        for a in actions:
            obs, reward, terminated, truncated, info = env.step(a)
        assert reward.shape == (4,) and terminated.dtype == np.bool_ and truncated.shape == (4,)
        assert info["converged"].shape == (4,) and info["ncon"].dtype == np.int32
        outs.append((obs, reward))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    np.testing.assert_array_equal(outs[0][1], outs[1][1])
    other = LocomotionEnv("ant", num_envs=4, seed=4)
    assert not np.array_equal(other.reset()[0], envs[0].reset(seed=3)[0])


def test_autoreset_same_step():
    env = LocomotionEnv("ant", num_envs=3, seed=1, max_episode_steps=2)
    first, _ = env.reset(seed=1)
    zero = np.zeros(env.action_shape)
    obs, _, terminated, truncated, info = env.step(zero)
    assert not terminated.any() and not truncated.any() and "final_obs" not in info
    obs, _, terminated, truncated, info = env.step(zero)
    assert truncated.all() and not terminated.any()
    assert info["final_obs"].shape == (3, env.observation_shape[1])
    np.testing.assert_array_equal(info["done_worlds"], [0, 1, 2])
    # the returned rows are fresh episodes: time back to 0, a keyframe-near pose
    np.testing.assert_array_equal(env.sim.time, 0.0)
    assert np.abs(obs[:, 0] - first[:, 0]).max() < 1e-12  # torso height: keyframe, no noise on it
    env.healthy_z = (10.0, 20.0)  # every world "falls"
    obs, reward, terminated, truncated, info = env.step(zero)
    assert terminated.all() and not truncated.any()
