"""Batched locomotion environments over one :class:`~sapsim.Sim` (numpy in, numpy out).

A first slice of issue 17's vector environments: Gymnasium's vector-env call
signatures (``reset(seed) -> (obs, info)``, ``step(actions) -> (obs, reward,
terminated, truncated, info)``) without requiring gymnasium; the wrapper that
declares ``gymnasium.vector.VectorEnv`` and its spaces comes later.

Autoreset is *same-step*: a world that terminates or is truncated in ``step`` is
reset inside that call; the returned ``obs`` row is the new episode's first
observation, and ``info["final_obs"]`` (rows of finished worlds) holds the last one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Union

import numpy as np
import numpy.typing as npt

from .sim import Sim, WorldFlag

__all__ = ["LocomotionEnv", "SCENES"]

#: scenes of the tasks: name -> (scene file, keyframe, healthy torso height range); the
#: files ship inside the package (sapsim/scenes) and are also found in a checkout
SCENES: dict[str, tuple[str, str, tuple[float, float]]] = {
    "ant": ("ant.xml", "init", (0.2, 1.0)),
    "humanoid": ("humanoid.xml", "stand", (1.0, 2.0)),
}


def _scene_path(name: str) -> Path:
    here = Path(__file__).resolve().parent
    for path in (here / "scenes" / name, here.parent.parent / "scenes" / name):
        if path.is_file():
            return path
    raise FileNotFoundError(f"sapsim.envs: scene {name} is neither in {here / 'scenes'} nor in a checkout")


class LocomotionEnv:
    """Run forward (+x) with a free-floating robot, ``num_envs`` worlds at once.

    Observation (num_envs, nq - 2 + nv) float64: qpos without the torso's x, y, then
    qvel. Action (num_envs, nu) in [-1, 1] (the motors' control range), clipped.
    Reward: forward velocity of the torso + ``healthy_reward`` - ``ctrl_cost`` |a|^2.
    Terminated: the torso's height leaves the healthy range, or the world's state
    became non-finite. Truncated: ``max_episode_steps`` reached.

    Args:
        task: ``"ant"`` or ``"humanoid"`` (see :data:`SCENES`), or a scene path
            (keyframe 0, healthy range (0.2, inf)).
        num_envs: worlds in the batch.
        frame_skip: simulation steps per environment step.
        reset_noise: half-width of the uniform noise added to qpos and qvel at reset.
        seed: seed of the reset noise.
        **sim_options: passed to :class:`~sapsim.Sim` (``preset``, ``device``, ...).
    """

    def __init__(self, task: str = "ant", num_envs: int = 16, frame_skip: int = 5,
                 reset_noise: float = 0.1, ctrl_cost: float = 0.5, healthy_reward: float = 1.0,
                 max_episode_steps: int = 1000, seed: Optional[int] = None, **sim_options: Any) -> None:
        if task in SCENES:
            scene, key, healthy = SCENES[task]
            path: Union[str, Path] = _scene_path(scene)
        else:
            path, key, healthy = task, 0, (0.2, np.inf)
        self.sim: Sim = Sim(path, nworld=num_envs, **sim_options)
        #: number of worlds
        self.num_envs: int = num_envs
        self.frame_skip = frame_skip
        self.reset_noise = reset_noise
        self.ctrl_cost = ctrl_cost
        self.healthy_reward = healthy_reward
        self.healthy_z = healthy
        self.max_episode_steps = max_episode_steps
        self._key = self.sim.model.keyframe(key)
        self._rng = np.random.default_rng(seed)
        self._steps = np.zeros(num_envs, dtype=np.int64)
        self._dt = self.sim.timestep * frame_skip
        self._low, self._high = np.clip(self.sim.model.ctrl_range, -1.0, 1.0).T

    @property
    def observation_shape(self) -> tuple[int, int]:
        """(num_envs, nq - 2 + nv)."""
        return (self.num_envs, self.sim.nq - 2 + self.sim.nv)

    @property
    def action_shape(self) -> tuple[int, int]:
        """(num_envs, nu)."""
        return (self.num_envs, self.sim.nu)

    def _obs(self) -> np.ndarray:
        return np.concatenate([self.sim.qpos[:, 2:], self.sim.qvel], axis=1)

    def _reset_worlds(self, worlds: npt.NDArray[np.bool_]) -> None:
        """Keyframe plus uniform noise on the joint coordinates (after the root's
        free joint) and on every velocity, in the masked worlds."""
        sim = self.sim
        sim.reset(self._key, worlds=worlds)
        n = int(worlds.sum())
        if n == 0:
            return
        qpos = sim.get("qpos", worlds)
        qpos[:, 7:] += self._rng.uniform(-self.reset_noise, self.reset_noise, (n, sim.nq - 7))
        sim.set("qpos", qpos, worlds)
        sim.set("qvel", self._rng.uniform(-self.reset_noise, self.reset_noise, (n, sim.nv)), worlds)
        self._steps[worlds] = 0

    def reset(self, seed: Optional[int] = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every world; returns (obs, info)."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._reset_worlds(np.ones(self.num_envs, dtype=bool))
        return self._obs(), {}

    def step(
        self, actions: npt.ArrayLike
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Apply ``actions`` (num_envs, nu) for ``frame_skip`` steps; returns (obs,
        reward, terminated, truncated, info). ``info`` holds per-world diagnostics
        (``converged``, ``ncon``, ``newton_iter`` of the last step) and, for finished
        worlds, ``final_obs``."""
        a = np.clip(np.asarray(actions, dtype=np.float64), self._low, self._high)
        if a.shape != self.action_shape:
            raise ValueError(f"actions must have shape {self.action_shape}, got {a.shape}")
        sim = self.sim
        x0 = sim.qpos[:, 0].copy()
        sim.ctrl[:] = a
        sim.step(self.frame_skip)
        self._steps += 1
        z = sim.qpos[:, 2]
        nonfinite = (sim.world_flags & WorldFlag.NONFINITE) != 0
        terminated = (z < self.healthy_z[0]) | (z > self.healthy_z[1]) | nonfinite
        truncated = (self._steps >= self.max_episode_steps) & ~terminated
        reward = (sim.qpos[:, 0] - x0) / self._dt + self.healthy_reward - self.ctrl_cost * (a * a).sum(axis=1)
        reward[nonfinite] = 0.0
        info: dict[str, Any] = {"converged": sim.converged, "ncon": sim.ncon.copy(),
                                "newton_iter": sim.newton_iter.copy()}
        done = terminated | truncated
        obs = self._obs()
        if done.any():
            info["final_obs"] = obs[done].copy()
            info["done_worlds"] = np.flatnonzero(done)
            self._reset_worlds(done)
            obs = self._obs()
        return obs, reward, terminated, truncated, info
