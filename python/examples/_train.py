"""Shared driver of the training examples: stable-baselines3 PPO on a sapsim vector
env (sapsim.sb3.SB3VecEnv), a learning curve (mean episode return against env steps,
from SB3's VecMonitor) written as PNG and CSV, an evaluation of the final policy
(deterministic actions) and the wall time."""

from __future__ import annotations

import argparse
import csv
import json
import os
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np


def run(task: str, default_steps: int, ppo_kwargs: dict[str, Any], env_kwargs: dict[str, Any],
        evaluate: Callable[[Any, Any], dict[str, float]], num_envs: int, normalize: bool) -> None:
    ap = argparse.ArgumentParser(description=f"train PPO (stable-baselines3) on sapsim's {task} vector env")
    ap.add_argument("--steps", type=int, default=default_steps, help="env steps in all (default %(default)s)")
    ap.add_argument("--envs", type=int, default=num_envs, help="worlds in the batch (default %(default)s)")
    ap.add_argument("--device", default="cpu", help="sapsim's device: cpu or cuda (torch policy stays on cpu)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="torch and OpenMP threads (default 1)")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[2] / "docs"),
                    help="folder of the curve (PNG, CSV) and the summary (JSON)")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))

    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

    from sapsim.sb3 import SB3VecEnv
    from sapsim.vector import SapsimVectorEnv

    torch.set_num_threads(args.threads)
    env = SapsimVectorEnv(task, num_envs=args.envs, device=args.device, seed=args.seed, threads=args.threads,
                          **env_kwargs)
    venv = VecMonitor(SB3VecEnv(env))
    venv.seed(args.seed)
    if normalize:
        venv = VecNormalize(venv, gamma=ppo_kwargs.get("gamma", 0.99))

    curve: list[tuple[int, float, float]] = []
    t0 = time.perf_counter()

    class Curve(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.returns: list[float] = []

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "episode" in info:
                    self.returns.append(info["episode"]["r"])
            return True

        def _on_rollout_end(self) -> None:
            if self.returns:
                curve.append((self.num_timesteps, float(np.mean(self.returns[-50:])), time.perf_counter() - t0))
                print(f"{self.num_timesteps:>9d} steps  return {curve[-1][1]:9.2f}  {curve[-1][2]:7.1f} s", flush=True)

    model = PPO("MlpPolicy", venv, seed=args.seed, device="cpu", verbose=0, **ppo_kwargs)
    model.learn(total_timesteps=args.steps, callback=Curve())
    wall = time.perf_counter() - t0
    build = Path(__file__).resolve().parents[2] / "build"
    model.save(build / f"train_{task}_ppo.zip")  # the policy, for replays
    if normalize:
        venv.save(str(build / f"train_{task}_vecnormalize.pkl"))

    # evaluation: deterministic actions on a fresh batch (normalisation frozen)
    eval_env = SapsimVectorEnv(task, num_envs=16, device=args.device, seed=args.seed + 1000,
                               threads=args.threads, **env_kwargs)
    obs_norm = venv.normalize_obs if normalize else (lambda o: o)
    summary = evaluate(eval_env, lambda o: model.predict(obs_norm(np.asarray(o, dtype=np.float32)),
                                                         deterministic=True)[0])
    summary.update(task=task, env_steps=args.steps, num_envs=args.envs, wall_s=round(wall, 1),
                   seed=args.seed, device=args.device, threads=args.threads)
    print(json.dumps(summary), flush=True)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / f"train_{task}.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["env_steps", "mean_return_last50", "wall_s"])
        w.writerows(curve)
    (out / f"train_{task}.json").write_text(json.dumps(summary, indent=1) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.plot([c[0] for c in curve], [c[1] for c in curve])
    ax.set_xlabel("env steps")
    ax.set_ylabel("mean episode return (last 50)")
    ax.set_title(f"sapsim {task}: PPO (stable-baselines3), {args.envs} worlds, {wall / 60:.1f} min CPU")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / f"train_{task}.png", dpi=110)
    print(f"wrote {out / f'train_{task}.png'}", flush=True)


def rollout(env: Any, policy: Callable[[Any], Any], steps: int,
            record: bool = False) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Run `policy` for `steps` vector steps from a reset; returns the per-world return
    of each world's first episode, its length, and per-world means over that episode
    of the info terms (``x_velocity``, ...); with `record`, ``qpos`` (T, nq) of world 0
    before each step's autoreset."""
    obs, _ = env.reset()
    ret = np.zeros(env.num_envs)
    length = np.zeros(env.num_envs, dtype=int)
    live = np.ones(env.num_envs, dtype=bool)
    sums: dict[str, Any] = {}
    frames = []
    for _ in range(steps):
        obs, r, te, tr, info = env.step(policy(obs))
        if record and live[0]:
            frames.append(env.sim.get("qpos", [0])[0] if not (te[0] or tr[0]) else None)
        ret += np.where(live, r, 0)
        length += live
        for key in ("x_velocity", "reward_forward", "reward_ctrl"):
            if key in info:
                sums[key] = sums.get(key, 0) + np.where(live, np.asarray(info[key]), 0)
        live &= ~(np.asarray(te) | np.asarray(tr))
        if not live.any():
            break
    means = {k: v / np.maximum(length, 1) for k, v in sums.items()}
    if record:
        means["qpos"] = np.array([f for f in frames if f is not None])
    return ret, length, means
