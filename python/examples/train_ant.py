"""Train ant locomotion (sapsim's Ant-v5 counterpart: torso x velocity + 1 alive - 0.5
|a|^2, falls terminate, 1000 steps of 0.05 s) with stable-baselines3 PPO on one sapsim
batch, on the CPU. Reports the trained policy's forward speed (mean torso x velocity
over each world's first episode, deterministic actions) beside a zero-action
baseline, and renders world 0's episode to docs/train_ant.mp4 when MuJoCo's Python
bindings and imageio are installed.

    python python/examples/train_ant.py [--steps N] [--envs N] [--device cuda]
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from _train import rollout, run


def evaluate(env, policy):
    ret, length, terms = rollout(env, policy, 1000, record=True)
    zret, zlen, zterms = rollout(env, lambda o: np.zeros((env.num_envs, env.sim.nu)), 1000)
    out = {"eval_mean_return": float(ret.mean()), "eval_mean_length": float(length.mean()),
           "eval_forward_speed_m_s": float(terms["x_velocity"].mean()),
           "eval_ctrl_cost_per_step": float(-terms["reward_ctrl"].mean()),
           "eval_worlds_full_episode": int((length >= 1000).sum()),
           "zero_action_return": float(zret.mean()), "zero_action_speed_m_s": float(zterms["x_velocity"].mean())}
    try:
        from sapsim.render import render_trajectory

        q = terms["qpos"][::2]  # every other 0.05 s step: 10 frames per simulated second
        video = Path(__file__).resolve().parents[2] / "docs" / "train_ant.mp4"
        render_trajectory(Path(__file__).resolve().parents[2] / "scenes" / "ant.xml", q, video,
                          fps=10, width=320, height=240)
        out["video"] = "docs/train_ant.mp4"
    except ImportError as e:
        out["video"] = f"not rendered ({e})"
    return out


if __name__ == "__main__":
    run("ant", 1_000_000,
        dict(n_steps=128, batch_size=1024, n_epochs=10, learning_rate=3e-4, gamma=0.99, gae_lambda=0.95,
             clip_range=0.2, ent_coef=0.0, max_grad_norm=0.5,
             policy_kwargs=dict(net_arch=dict(pi=[128, 128], vf=[128, 128]))),
        {}, evaluate, num_envs=32, normalize=True)
