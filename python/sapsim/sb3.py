"""stable-baselines3 adapter: :class:`SB3VecEnv` wraps a :class:`~sapsim.vector.SapsimVectorEnv`
as SB3's ``VecEnv`` (numpy in and out), so SB3's algorithms train on one sapsim batch.

SB3's ``VecEnv`` autoresets in the same step, like ``SapsimVectorEnv``; the last
observation of a finished episode goes to ``infos[i]["terminal_observation"]`` and a
time-limit end sets ``infos[i]["TimeLimit.truncated"]`` (SB3 then bootstraps the value).
Needs stable-baselines3 (not a dependency of sapsim).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from .vector import SapsimVectorEnv

__all__ = ["SB3VecEnv"]


def _np(x: Any) -> np.ndarray:
    return x.detach().cpu().numpy() if hasattr(x, "detach") else np.asarray(x)


class SB3VecEnv(VecEnv):
    """SB3 ``VecEnv`` over a :class:`SapsimVectorEnv` (tensors are moved to numpy)."""

    def __init__(self, env: SapsimVectorEnv) -> None:
        self.env = env
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
        self._actions: Optional[np.ndarray] = None
        self._seed: Optional[int] = None

    def reset(self) -> np.ndarray:
        obs, _ = self.env.reset(seed=self._seed)
        self._seed = None
        return _np(obs).astype(np.float32)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        obs, reward, terminated, truncated, info = self.env.step(self._actions)
        obs, reward = _np(obs).astype(np.float32), _np(reward).astype(np.float32)
        terminated, truncated = _np(terminated), _np(truncated)
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            final = _np(info["final_obs"]).astype(np.float32)
            for i in np.flatnonzero(dones):
                infos[i]["terminal_observation"] = final[i]
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return obs, reward, dones, infos

    def close(self) -> None:
        self.env.close()

    def seed(self, seed: Optional[int] = None) -> Sequence[Optional[int]]:
        self._seed = seed
        return [seed] * self.num_envs

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self.env, attr_name)] * len(self._get_indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
        return [getattr(self.env, method_name)(*args, **kwargs)] * len(self._get_indices(indices))

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(self._get_indices(indices))
