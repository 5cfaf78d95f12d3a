"""Train cartpole balance (sapsim's InvertedPendulum-v5 counterpart: reward 1 per step
while |angle| <= 0.2 rad, 1000 steps, maximum return 1000) with stable-baselines3 PPO
on one sapsim batch, on the CPU. `make train-example` runs it (and train_ant.py).

    python python/examples/train_cartpole.py [--steps N] [--envs N] [--device cuda]
"""

from __future__ import annotations

import numpy as np
from _train import rollout, run


def evaluate(env, policy):
    ret, length, _ = rollout(env, policy, 1000)
    return {"eval_mean_return": float(ret.mean()), "eval_min_return": float(ret.min()),
            "eval_max_possible": 1000.0, "eval_worlds_at_max": int((length >= 1000).sum())}


if __name__ == "__main__":
    run("cartpole", 1_000_000,
        dict(n_steps=256, batch_size=1024, n_epochs=10, learning_rate=3e-4, gamma=0.99, gae_lambda=0.95,
             clip_range=0.2, ent_coef=0.0),
        {}, evaluate, num_envs=16, normalize=False)
