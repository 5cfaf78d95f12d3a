"""Train ant locomotion (sapsim's Ant-v5 counterpart: torso x velocity + 1 alive - 0.5
|a|^2, falls terminate, 1000 steps of 0.05 s) with stable-baselines3 PPO on one sapsim
batch, on the CPU. Reports the trained policy's forward speed (torso x displacement
over a 1000-step episode, deterministic actions) beside a zero-action baseline.

    python python/examples/train_ant.py [--steps N] [--envs N] [--device cuda]
"""

from __future__ import annotations

import numpy as np
from _train import rollout, run


def evaluate(env, policy):
    def speed(pol):
        x0 = env.sim.qpos[:, 0].copy() if not env.sim.on_gpu else env.sim.get("qpos")[:, 0]
        ret, length, _ = rollout(env, pol, 1000)
        # worlds that finished were reset (x back near 0): speed from the return's
        # forward term is not separable, so report the survivors' displacement
        x1 = env.sim.get("qpos")[:, 0]
        alive = length >= 1000
        v = (x1 - x0) / (1000 * env.dt)
        return ret, length, v, alive

    ret, length, v, alive = speed(policy)
    zret, zlen, zv, _ = speed(lambda o: np.zeros((env.num_envs, env.sim.nu)))
    return {"eval_mean_return": float(ret.mean()), "eval_mean_length": float(length.mean()),
            "eval_forward_speed_m_s": float(v[alive].mean()) if alive.any() else float("nan"),
            "eval_worlds_full_episode": int(alive.sum()),
            "zero_action_return": float(zret.mean()), "zero_action_speed_m_s": float(zv.mean())}


if __name__ == "__main__":
    run("ant", 2_000_000,
        dict(n_steps=128, batch_size=1024, n_epochs=10, learning_rate=3e-4, gamma=0.99, gae_lambda=0.95,
             clip_range=0.2, ent_coef=0.0, max_grad_norm=0.5,
             policy_kwargs=dict(net_arch=dict(pi=[128, 128], vf=[128, 128]))),
        {}, evaluate, num_envs=32, normalize=True)
