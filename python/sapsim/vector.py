"""Gymnasium vector environments over one sapsim batch (``gymnasium.vector.VectorEnv``).

One :class:`~sapsim.Sim` holds every sub-environment as a world; a vector step writes
the actions into ``ctrl``, advances the batch ``frame_skip`` steps and computes
observations, rewards and terminations for all worlds at once.

Arrays. ``device="cpu"`` returns numpy arrays (views of the batch are read without a
copy and the results are new arrays). ``device="cuda"`` returns torch tensors on the GPU
when torch is installed: the env reads and writes the batch through DLPack views
(``torch.from_dlpack(sim.qpos_device)``), steps on torch's current stream
(``Sim.step(stream=...)``), and nothing crosses to the host in a step without resets.
``array_backend="torch"`` also gives torch (CPU) tensors on the CPU.

Autoreset: ``AutoresetMode.SAME_STEP`` (``metadata["autoreset_mode"]``). A world that
terminates or is truncated in ``step`` is reset inside that call; its row of the
returned observation is the new episode's first observation, and
``info["final_obs"]`` (rows where ``info["_final_obs"]`` is True) holds the
observation that ended the episode. Chosen because the reset then costs no extra
step, and it is what stable-baselines3's ``VecEnv`` and most GPU RL libraries expect.

``info`` (every step, per world): ``newton_iter`` (Newton iterations of the last
simulation step), ``world_flags`` (:class:`~sapsim.WorldFlag` bits), ``ncon`` (live
contacts), and the reward terms of the task (``reward_forward``, ``reward_ctrl``,
``reward_healthy``, ``x_velocity``, ...).

Options of every task: ``frame_skip`` (simulation steps per env step),
``obs_noise`` (std of Gaussian noise added to returned observations),
``action_delay`` (k: the action applied is the one given k env steps earlier; zero
actions for the first k steps of an episode), ``reset_noise_scale``,
``max_episode_steps``, ``seed``, and any :class:`~sapsim.Sim` option (``preset``,
``threads``, ...). Determinism: ``reset(seed=s)`` seeds every random draw (reset
noise, observation noise); the same seed and actions give the same results.

Gymnasium's own MuJoCo v5 tasks (:data:`GYM_V5`, :class:`GymV5VectorEnv`, ``make_vec("Ant-v5",
num_envs)``): ``Ant-v5``, ``HalfCheetah-v5``, ``Hopper-v5``, ``Walker2d-v5``, ``Humanoid-v5``,
``InvertedPendulum-v5``, ``InvertedDoublePendulum-v5``, ``Swimmer-v5``, ``Reacher-v5``, ``Pusher-v5``,
``HumanoidStandup-v5`` on Gymnasium's XML (loaded from the
installed gymnasium package). Observation, reward terms (Ant's and Humanoid's contact costs from
``cfrc_ext``), termination, frame_skip, time limit, reset noise and constructor parameters are
Gymnasium 1.x's v5 definitions; what Gymnasium reads of mjData after ``mj_step`` and
``mj_rnePostConstraint`` (``xpos``, ``xipos``, ``cfrc_ext``, ``cinert``, ``cvel``,
``qfrc_actuator`` of the last substep's start state) comes from sapsim with MuJoCo's conventions
(option ``body_outputs``). What differs is the physics: SAP contact and near-rigid limits
against MuJoCo's soft ones, sapsim's first-order integrator where the XML asks for RK4, and a
world whose state turns non-finite is frozen and terminated (MuJoCo returns NaN); the double
pendulum's ``qfrc_constraint`` is SAP's constraint force of the step (:func:`qfrc_constraint`).
numpy only.

sapsim's own tasks (:data:`TASKS`) on sapsim's scenes, following Gymnasium's MuJoCo v5
definitions where one exists:

- ``cartpole`` (InvertedPendulum-v5): obs qpos, qvel (4); reward 1 per step while
  alive; terminated when |pole angle| > 0.2 rad or the state is not finite;
  reset noise U(-0.01, 0.01) on qpos and qvel; 1000 steps (maximum return 1000).
  Differs: scenes/cartpole.xml (a 1 kg cart and a 0.1 kg pole, gear 100, timestep
  0.005): actions in [-1, 1] are scaled by 0.1 (at most 10 N, classic CartPole's force;
  the full 100 N tips the light pole within a step), frame_skip 4 (0.02 s env step).
- ``ant`` (Ant-v5): obs qpos[2:], qvel (27); reward = x velocity of the torso (its
  ``xpos``, as Gymnasium's ``body("torso").xpos``) + healthy_reward 1 - 0.5 |a|^2;
  terminated when the torso height leaves [0.2, 1.0] or the state is not finite;
  reset noise U(-0.1, 0.1) on qpos (the root quaternion renormalised) and 0.1 N(0,1)
  on qvel. Differs: no contact cost and no cfrc_ext in the observation (``Ant-v5`` has
  both); scenes/ant.xml (gear 60, timestep 0.005, frame_skip 10: env step 0.05 s
  as Ant-v5); starts from the keyframe "init".
- ``humanoid`` (Humanoid-v5): obs qpos[2:], qvel (26 + 27); reward = 1.25 x velocity of
  the centre of mass (mass-weighted ``xipos``) + 5 - 0.1 |a|^2; terminated when the
  torso height leaves [1.0, 2.0]; reset noise U(-0.01, 0.01) on qpos and qvel.
  Differs: no contact cost, no cinert/cvel/qfrc_actuator/cfrc_ext observations
  (``Humanoid-v5`` has them); scenes/humanoid.xml (timestep 0.005, frame_skip 3: 0.015 s as Humanoid-v5).
- ``quadruped`` (no Gymnasium counterpart): scenes/quadruped_roll.xml, a 12-kg-class
  quadruped on condim-6 feet with 8 position servos (the Menagerie-style actuation:
  actions are joint targets, scaled from [-1, 1] to the servos' range); obs qpos[2:],
  qvel (13 + 14); reward = torso x velocity + 0.5 (alive) - 0.05 |a|^2; terminated when
  the torso drops below 0.12 m or tips over (body z axis below 0.3 of vertical);
  reset noise U(-0.05, 0.05) on the joints and qvel; timestep 0.002, frame_skip 10.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

try:
    import gymnasium
    from gymnasium import spaces
    from gymnasium.vector import VectorEnv
    from gymnasium.vector.utils import batch_space
    from gymnasium.vector.vector_env import AutoresetMode
except ImportError as e:  # pragma: no cover
    raise ImportError("sapsim.vector needs gymnasium 1.x: pip install 'gymnasium>=1.0'") from e

from .envs import _scene_path
from .errors import ArgumentError
from .sim import Sim, WorldFlag

__all__ = ["qfrc_constraint", "GYM_V5", "GymV5Spec", "GymV5VectorEnv", "SapsimVectorEnv", "TASKS", "TaskSpec", "gymnasium_asset", "make_vec"]


@dataclass(frozen=True)
class TaskSpec:
    """A task's scene and constants (see the module doc for the definitions)."""

    scene: str
    keyframe: Optional[str]
    frame_skip: int
    max_episode_steps: int
    reset_noise_scale: float
    qvel_noise: str  # "uniform" or "normal" (Gymnasium's per-task choice)
    free_root: bool  # qpos[:7] is a free joint (obs drops x, y)
    ctrl_cost_weight: float = 0.0
    healthy_reward: float = 0.0
    forward_weight: float = 0.0
    healthy_z: tuple[float, float] = (-np.inf, np.inf)
    extra: dict[str, Any] = field(default_factory=dict)


#: the tasks of :class:`SapsimVectorEnv`
TASKS: dict[str, TaskSpec] = {
    "cartpole": TaskSpec("cartpole.xml", None, 4, 1000, 0.01, "uniform", False,
                         extra={"max_angle": 0.2, "action_scale": 0.1}),
    "ant": TaskSpec("ant.xml", "init", 10, 1000, 0.1, "normal", True, 0.5, 1.0, 1.0, (0.2, 1.0)),
    "humanoid": TaskSpec("humanoid.xml", "stand", 3, 1000, 0.01, "uniform", True, 0.1, 5.0, 1.25, (1.0, 2.0)),
    "quadruped": TaskSpec("quadruped_roll.xml", None, 10, 1000, 0.05, "uniform", True, 0.05, 0.5, 1.0,
                          (0.12, np.inf), extra={"min_upright": 0.3}),
}


def _torch() -> Any:
    try:
        import torch
    except ImportError as e:
        raise ImportError("sapsim.vector: torch tensors (device='cuda' or array_backend='torch') need "
                          "torch installed") from e
    return torch


class SapsimVectorEnv(VectorEnv):
    """A Gymnasium vector environment of ``num_envs`` worlds of one task.

    Args:
        task: a name of :data:`TASKS` (``"cartpole"``, ``"ant"``, ``"humanoid"``,
            ``"quadruped"``).
        num_envs: sub-environments (worlds of the batch).
        device: ``"cpu"`` or ``"cuda"``.
        array_backend: ``"numpy"`` or ``"torch"``; default numpy on the CPU and
            torch on the GPU.
        frame_skip, max_episode_steps, reset_noise_scale: override the task's.
        obs_noise: std of Gaussian noise on returned observations (0: none).
        action_delay: steps k between an action's arrival and its application.
        seed: seed of the first reset's draws (``reset(seed=...)`` reseeds).
        **sim_options: passed to :class:`~sapsim.Sim`.
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, task: str = "cartpole", num_envs: int = 16, device: str = "cpu",
                 array_backend: Optional[str] = None, frame_skip: Optional[int] = None,
                 max_episode_steps: Optional[int] = None, reset_noise_scale: Optional[float] = None,
                 obs_noise: float = 0.0, action_delay: int = 0, seed: Optional[int] = None,
                 **sim_options: Any) -> None:
        if task not in TASKS:
            raise ArgumentError(f"unknown task '{task}' (tasks: {', '.join(TASKS)})")
        if action_delay < 0 or obs_noise < 0:
            raise ArgumentError(f"action_delay ({action_delay}) and obs_noise ({obs_noise}) must be >= 0")
        self.task = task
        self.spec_ = spec = TASKS[task]
        self.frame_skip = int(frame_skip or spec.frame_skip)
        if self.frame_skip < 1:
            raise ArgumentError(f"frame_skip must be >= 1, got {frame_skip}")
        self.max_episode_steps = int(max_episode_steps or spec.max_episode_steps)
        self.reset_noise_scale = spec.reset_noise_scale if reset_noise_scale is None else float(reset_noise_scale)
        self.obs_noise = float(obs_noise)
        self.action_delay = int(action_delay)
        self.num_envs = int(num_envs)
        self.sim = Sim(_scene_path(spec.scene), nworld=self.num_envs, device=device, **sim_options)
        sim, model = self.sim, self.sim.model
        self.backend = array_backend or ("torch" if sim.on_gpu else "numpy")
        if self.backend not in ("numpy", "torch"):
            raise ArgumentError(f"array_backend must be 'numpy' or 'torch', got {array_backend!r}")
        self.dt = sim.timestep * self.frame_skip
        self._key = model.keyframe(spec.keyframe) if spec.keyframe else None

        # spaces: actions in the actuators' control range clipped to [-1, 1] (position
        # servos: [-1, 1] scaled to their range)
        rng_ = model.ctrl_range
        self._servo = task == "quadruped"
        if self._servo:
            self._ctrl_lo, self._ctrl_hi = rng_[:, 0].copy(), rng_[:, 1].copy()
            lo, hi = -np.ones(sim.nu), np.ones(sim.nu)
        else:
            lo, hi = np.clip(rng_[:, 0], -1, 1), np.clip(rng_[:, 1], -1, 1)
        self.single_action_space = spaces.Box(lo.astype(np.float32), hi.astype(np.float32), dtype=np.float32)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        nobs = (sim.nq - 2 if spec.free_root else sim.nq) + sim.nv
        self.single_observation_space = spaces.Box(-np.inf, np.inf, (nobs,), dtype=np.float64)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)

        # views of the batch: numpy (CPU) or torch through DLPack (no copy)
        self._mass = model.array("body_mass").copy()
        self._torso = model.body_names.index("torso") if "torso" in model.body_names else 1
        if self.backend == "torch":
            torch = _torch()
            self._t = torch
            self._dev = torch.device("cuda" if sim.on_gpu else "cpu")
            self._v = {n: torch.from_dlpack(sim.device_array(n))
                       for n in ("qpos", "qvel", "ctrl", "xpos", "xipos", "xmat", "world_flags", "newton_iter",
                                 "ncon")}
            self._mass_t = torch.as_tensor(self._mass, device=self._dev)
            self._lo_t = torch.as_tensor(lo, device=self._dev)
            self._hi_t = torch.as_tensor(hi, device=self._dev)
            if self._servo:
                self._clo_t = torch.as_tensor(self._ctrl_lo, device=self._dev)
                self._chi_t = torch.as_tensor(self._ctrl_hi, device=self._dev)
            self._gen = torch.Generator(device=self._dev)
        elif sim.on_gpu:
            self._v = None  # host snapshots per step (slow path; torch recommended on the GPU)
        else:
            self._v = {"qpos": sim.qpos, "qvel": sim.qvel, "ctrl": sim.ctrl, "xpos": sim.xpos,
                       "xipos": sim.array("xipos"), "xmat": sim.array("xmat"), "world_flags": sim.world_flags,
                       "newton_iter": sim.newton_iter, "ncon": sim.ncon}
        self._lo, self._hi = lo, hi
        self._steps = np.zeros(self.num_envs, dtype=np.int64)
        self._delay_buf = self._zeros((self.action_delay, self.num_envs, sim.nu)) if self.action_delay else None
        self._rng = np.random.default_rng(seed)
        self._seeded = seed

    # ---- array helpers (numpy or torch) ---------------------------------------------

    def _zeros(self, shape: tuple[int, ...]) -> Any:
        if self.backend == "torch":
            return self._t.zeros(shape, dtype=self._t.float64, device=self._dev)
        return np.zeros(shape)

    def _views(self) -> dict[str, Any]:
        if self._v is not None:
            return self._v
        s = self.sim  # numpy on a GPU batch: snapshots
        return {"qpos": s.qpos, "qvel": s.qvel, "xpos": s.xpos, "xipos": s.array("xipos"), "xmat": s.array("xmat"),
                "world_flags": s.world_flags, "newton_iter": s.newton_iter, "ncon": s.ncon}

    def _cat(self, parts: list[Any]) -> Any:
        return self._t.cat(parts, dim=1) if self.backend == "torch" else np.concatenate(parts, axis=1)

    def _host(self, x: Any) -> np.ndarray:
        return x.cpu().numpy() if self.backend == "torch" else np.asarray(x)

    # ---- the task ---------------------------------------------------------------------

    def _obs(self, v: dict[str, Any]) -> Any:
        qpos = v["qpos"][:, 2:] if self.spec_.free_root else v["qpos"]
        obs = self._cat([qpos, v["qvel"]])
        return obs.clone() if self.backend == "torch" else np.array(obs)

    def _noisy(self, obs: Any) -> Any:
        if self.obs_noise <= 0:
            return obs
        if self.backend == "torch":
            return obs + self.obs_noise * self._t.randn(obs.shape, generator=self._gen, dtype=obs.dtype,
                                                        device=self._dev)
        return obs + self.obs_noise * self._rng.standard_normal(obs.shape)

    def _forward_x(self, v: dict[str, Any]) -> Any:
        """The x coordinate whose rate is the task's forward velocity."""
        if self.task == "humanoid":  # centre of mass: sum m_b xipos_b / sum m_b
            xi = v["xipos"].reshape(self.num_envs, -1, 3)[:, :, 0]
            m = self._mass_t if self.backend == "torch" else self._mass
            return (xi * m).sum(1) / m.sum()
        return v["xpos"][:, self._torso, 0] * 1.0  # a copy: the view changes with the step

    def _reward_done(self, v: dict[str, Any], x0: Any, a: Any) -> tuple[Any, Any, dict[str, Any]]:
        spec, qpos = self.spec_, v["qpos"]
        xp = self._t if self.backend == "torch" else np
        flags = v["world_flags"]
        nonfinite = (flags & int(WorldFlag.NONFINITE)) != 0
        terms: dict[str, Any] = {}
        if self.task == "cartpole":
            alive = (qpos[:, 1].abs() if self.backend == "torch" else np.abs(qpos[:, 1])) <= spec.extra["max_angle"]
            terminated = ~alive | nonfinite
            reward = xp.ones_like(qpos[:, 0])
            terms["reward_survive"] = reward
            return reward, terminated, terms
        z = qpos[:, 2]
        healthy = (z >= spec.healthy_z[0]) & (z <= spec.healthy_z[1]) & ~nonfinite
        if self.task == "quadruped":  # upright: the torso's z axis (xmat row 2, column 2)
            upright = v["xmat"].reshape(self.num_envs, -1, 9)[:, self._torso, 8]
            healthy = healthy & (upright >= spec.extra["min_upright"])
        x_vel = (self._forward_x(v) - x0) / self.dt
        forward = spec.forward_weight * x_vel
        ctrl_cost = spec.ctrl_cost_weight * (a * a).sum(1)
        healthy_reward = spec.healthy_reward * xp.ones_like(z)
        reward = forward + healthy_reward - ctrl_cost
        reward = xp.where(nonfinite, xp.zeros_like(reward), reward)
        terms.update(x_velocity=x_vel, reward_forward=forward, reward_ctrl=-ctrl_cost, reward_healthy=healthy_reward)
        return reward, ~healthy, terms

    def _reset_worlds(self, done: np.ndarray) -> None:
        """Reset the worlds in the boolean mask `done` (host): keyframe or initial
        state, then the task's reset noise (drawn on the host from the seeded
        generator, written through Sim.set: validated, poses recomputed)."""
        n = int(done.sum())
        if n == 0:
            return
        if self.backend == "torch" and self.sim.on_gpu:
            self._t.cuda.current_stream().synchronize()  # host calls below: the stream's work first
        sim, spec, s = self.sim, self.spec_, self.reset_noise_scale
        sim.reset(self._key, worlds=done)
        qpos = sim.get("qpos", done)
        qvel = sim.get("qvel", done)
        first = 7 if spec.free_root and self.task == "quadruped" else 0
        qpos[:, first:] += self._rng.uniform(-s, s, (n, sim.nq - first))
        if spec.free_root:
            qpos[:, 3:7] /= np.linalg.norm(qpos[:, 3:7], axis=1, keepdims=True)
        if spec.qvel_noise == "normal":
            qvel += s * self._rng.standard_normal((n, sim.nv))
        else:
            qvel += self._rng.uniform(-s, s, (n, sim.nv))
        sim.set("qpos", qpos, done)
        sim.set("qvel", qvel, done)
        self._steps[done] = 0
        if self.backend == "torch" and self.sim.on_gpu:  # the reset's pose kernels before torch reads
            self.sim.stream_wait(self._t.cuda.current_stream())
        if self._delay_buf is not None:
            idx = np.flatnonzero(done)
            if self.backend == "torch":
                idx = self._t.as_tensor(idx, device=self._dev)
            self._delay_buf[:, idx] = 0

    # ---- the Gymnasium API --------------------------------------------------------------

    def reset(self, *, seed: Optional[Union[int, list[int]]] = None,
              options: Optional[dict[str, Any]] = None) -> tuple[Any, dict[str, Any]]:
        """Reset every world (``options={"reset_mask": mask}``: only those); ``seed``
        reseeds every random draw of the env."""
        if isinstance(seed, (list, tuple)):
            seed = seed[0]
        if seed is None and self._seeded is not None and not hasattr(self, "_started"):
            seed = self._seeded  # the constructor's seed, on the first reset
        self._started = True
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            if self.backend == "torch":  # observation noise's generator, on the device
                self._gen.manual_seed(int(np.random.SeedSequence([int(seed), 1]).generate_state(1)[0]))
        mask = np.ones(self.num_envs, dtype=bool)
        if options and "reset_mask" in options:
            mask = np.asarray(self._host(options["reset_mask"]), dtype=bool)
        self._reset_worlds(mask)
        return self._noisy(self._obs(self._views())), {}

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """Apply (num_envs, nu) actions for ``frame_skip`` simulation steps; returns
        (obs, reward, terminated, truncated, info) as arrays of the env's backend."""
        sim = self.sim
        if self.backend == "torch":
            a = self._t.as_tensor(actions, dtype=self._t.float64, device=self._dev)
        else:
            a = np.asarray(actions, dtype=np.float64)
        if tuple(a.shape) != (self.num_envs, sim.nu):
            raise ArgumentError(f"actions must have shape ({self.num_envs}, {sim.nu}), got {tuple(a.shape)}")
        if self.backend == "torch":
            a = self._t.minimum(self._t.maximum(a, self._lo_t), self._hi_t)
        else:
            a = np.clip(a, self._lo, self._hi)
        applied = a
        if self._delay_buf is not None:  # FIFO of k actions: apply the oldest
            applied = self._delay_buf[0].clone() if self.backend == "torch" else self._delay_buf[0].copy()
            self._delay_buf[:-1] = self._delay_buf[1:].clone() if self.backend == "torch" else self._delay_buf[1:]
            self._delay_buf[-1] = a
        ctrl = applied * self.spec_.extra.get("action_scale", 1.0)
        if self._servo:  # joint targets in the servos' range
            lo, hi = (self._clo_t, self._chi_t) if self.backend == "torch" else (self._ctrl_lo, self._ctrl_hi)
            ctrl = lo + (applied + 1) * 0.5 * (hi - lo)
        v = self._views()
        x0 = self._forward_x(v) if self.task != "cartpole" else None
        if self.backend == "torch":
            self._v["ctrl"].copy_(ctrl)
            stream = self._t.cuda.current_stream() if sim.on_gpu else None
            sim.step(self.frame_skip, stream=stream)
        else:
            if sim.on_gpu:
                sim.ctrl = ctrl
            else:
                sim.ctrl[:] = ctrl
            sim.step(self.frame_skip)
        v = self._views()
        self._steps += 1
        reward, terminated, terms = self._reward_done(v, x0, applied)
        trunc_host = self._steps >= self.max_episode_steps
        term_host = self._host(terminated).astype(bool)
        trunc_host &= ~term_host
        obs = self._obs(v)
        info: dict[str, Any] = {"newton_iter": v["newton_iter"] * 1, "world_flags": v["world_flags"] * 1,
                                "ncon": v["ncon"] * 1, **terms}
        done = term_host | trunc_host
        if done.any():
            info["final_obs"] = self._noisy(obs)
            info["_final_obs"] = done
            self._reset_worlds(done)
            obs = self._obs(self._views())
        if self.backend == "torch":
            truncated = self._t.as_tensor(trunc_host, device=self._dev)
            terminated = terminated.to(self._t.bool)
        else:
            truncated = trunc_host
            terminated = np.asarray(terminated, dtype=bool)
        return self._noisy(obs), reward, terminated, truncated, info

    def close_extras(self, **kwargs: Any) -> None:
        """Free the batch."""
        self.sim = None  # type: ignore[assignment]
        self._v = None


# ---- Gymnasium's MuJoCo v5 tasks on Gymnasium's own XML -----------------------------------


@dataclass(frozen=True)
class GymV5Spec:
    """A Gymnasium MuJoCo v5 task: the XML of gymnasium/envs/mujoco/assets, frame_skip, the time
    limit of Gymnasium's registration and the task's constructor defaults (its parameters)."""

    xml: str
    frame_skip: int
    max_episode_steps: int
    params: dict[str, Any]
    body_outputs: bool = False  # the observation or reward reads cfrc_ext, cinert, cvel, qfrc_actuator


_INF = float("inf")
#: Gymnasium 1.x MuJoCo v5 tasks (``make_vec("Ant-v5", num_envs)``); params are the v5 classes' defaults
GYM_V5: dict[str, GymV5Spec] = {
    "Ant-v5": GymV5Spec("ant.xml", 5, 1000, dict(
        forward_reward_weight=1.0, ctrl_cost_weight=0.5, contact_cost_weight=5e-4, healthy_reward=1.0, main_body=1,
        terminate_when_unhealthy=True, healthy_z_range=(0.2, 1.0), contact_force_range=(-1.0, 1.0),
        reset_noise_scale=0.1, exclude_current_positions_from_observation=True,
        include_cfrc_ext_in_observation=True), body_outputs=True),
    "HalfCheetah-v5": GymV5Spec("half_cheetah.xml", 5, 1000, dict(
        forward_reward_weight=1.0, ctrl_cost_weight=0.1, reset_noise_scale=0.1,
        exclude_current_positions_from_observation=True)),
    "Hopper-v5": GymV5Spec("hopper.xml", 4, 1000, dict(
        forward_reward_weight=1.0, ctrl_cost_weight=1e-3, healthy_reward=1.0, terminate_when_unhealthy=True,
        healthy_state_range=(-100.0, 100.0), healthy_z_range=(0.7, _INF), healthy_angle_range=(-0.2, 0.2),
        reset_noise_scale=5e-3, exclude_current_positions_from_observation=True)),
    "Walker2d-v5": GymV5Spec("walker2d_v5.xml", 4, 1000, dict(
        forward_reward_weight=1.0, ctrl_cost_weight=1e-3, healthy_reward=1.0, terminate_when_unhealthy=True,
        healthy_z_range=(0.8, 2.0), healthy_angle_range=(-1.0, 1.0), reset_noise_scale=5e-3,
        exclude_current_positions_from_observation=True)),
    "Humanoid-v5": GymV5Spec("humanoid.xml", 5, 1000, dict(
        forward_reward_weight=1.25, ctrl_cost_weight=0.1, contact_cost_weight=5e-7, contact_cost_range=(-_INF, 10.0),
        healthy_reward=5.0, terminate_when_unhealthy=True, healthy_z_range=(1.0, 2.0), reset_noise_scale=1e-2,
        exclude_current_positions_from_observation=True, include_cinert_in_observation=True,
        include_cvel_in_observation=True, include_qfrc_actuator_in_observation=True,
        include_cfrc_ext_in_observation=True), body_outputs=True),
    "InvertedPendulum-v5": GymV5Spec("inverted_pendulum.xml", 2, 1000, dict(reset_noise_scale=0.01)),
    "InvertedDoublePendulum-v5": GymV5Spec("inverted_double_pendulum.xml", 5, 1000, dict(
        healthy_reward=10.0, reset_noise_scale=0.1)),
    "Swimmer-v5": GymV5Spec("swimmer.xml", 4, 1000, dict(
        forward_reward_weight=1.0, ctrl_cost_weight=1e-4, reset_noise_scale=0.1,
        exclude_current_positions_from_observation=True)),
    "Reacher-v5": GymV5Spec("reacher.xml", 2, 50, dict(reward_dist_weight=1.0, reward_control_weight=1.0)),
    "Pusher-v5": GymV5Spec("pusher_v5.xml", 5, 100, dict(
        reward_near_weight=0.5, reward_dist_weight=1.0, reward_control_weight=0.1)),
    "HumanoidStandup-v5": GymV5Spec("humanoidstandup.xml", 5, 1000, dict(
        uph_cost_weight=1.0, ctrl_cost_weight=0.1, impact_cost_weight=0.5e-6, impact_cost_range=(-_INF, 10.0),
        reset_noise_scale=1e-2, exclude_current_positions_from_observation=True, include_cinert_in_observation=True,
        include_cvel_in_observation=True, include_qfrc_actuator_in_observation=True,
        include_cfrc_ext_in_observation=True), body_outputs=True),
}


def qfrc_constraint(sim: Sim) -> np.ndarray:
    """(nworld, nv) generalized constraint force of each world's last step, MuJoCo's
    ``qfrc_constraint`` (J' f: limits, contacts, equalities, SAP drives): from SAP's momentum
    balance A (v_{n+1} - v*) = J' gamma, J' gamma / h = A (v_{n+1} - v*) / h, with A = M +
    armature + h damping (``sim.mass_matrix(w)``) and v* the step's free-motion velocity. Valid
    after a step (not after a reset or state edit)."""
    n, nv, h = sim.nworld, sim.nv, sim.timestep
    A = np.stack([sim.mass_matrix(w) for w in range(n)]) if n else np.zeros((0, nv, nv))
    dv = np.array(sim.qvel).reshape(n, nv) - np.array(sim.array("vstar")).reshape(n, nv)
    return np.einsum("nij,nj->ni", A, dv) / h


def gymnasium_asset(xml: str) -> str:
    """Path of a model of the installed gymnasium package (gymnasium/envs/mujoco/assets)."""
    import importlib.util
    spec = importlib.util.find_spec("gymnasium.envs")
    base = Path(spec.origin).parent if spec and spec.origin else Path(gymnasium.__file__).parent / "envs"
    path = base / "mujoco" / "assets" / xml
    if not path.is_file():
        raise ArgumentError(f"gymnasium {gymnasium.__version__} has no MuJoCo asset {xml} (looked in {path.parent})")
    return str(path)


class GymV5VectorEnv(VectorEnv):
    """Gymnasium's MuJoCo v5 task ``task`` (a name of :data:`GYM_V5`) on ``num_envs`` sapsim worlds.

    The model is Gymnasium's own XML, loaded from the installed gymnasium package. Observation,
    reward terms (contact cost from ``cfrc_ext``), termination, ``frame_skip``, reset noise and
    every constructor parameter (passed by name, e.g. ``ctrl_cost_weight=0.2``) are Gymnasium
    1.x's v5 definitions; what MuJoCo computes and Gymnasium reads (``xpos``, ``xipos``,
    ``cfrc_ext``, ``cinert``, ``cvel``, ``qfrc_actuator`` after ``mj_step`` and
    ``mj_rnePostConstraint``: the last step's start state) sapsim gives with MuJoCo's
    conventions (option ``body_outputs``). The dynamics are sapsim's (SAP contact), not
    MuJoCo's soft contact. Arrays are numpy (``device="cuda"``: host snapshots of the batch).
    Autoreset, ``info`` (``final_obs``) and seeding as :class:`SapsimVectorEnv`. A world whose
    state turns non-finite is frozen by sapsim (flag ``NONFINITE``) and terminated.
    Other keyword arguments go to :class:`~sapsim.Sim` (``preset``, ``threads``, ...).
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, task: str = "Ant-v5", num_envs: int = 16, device: str = "cpu",
                 frame_skip: Optional[int] = None, max_episode_steps: Optional[int] = None,
                 seed: Optional[int] = None, xml_file: Optional[str] = None, **kwargs: Any) -> None:
        if task not in GYM_V5:
            raise ArgumentError(f"unknown Gymnasium v5 task '{task}' (tasks: {', '.join(GYM_V5)})")
        spec = GYM_V5[task]
        self.task, self.spec_ = task, spec
        self.p = dict(spec.params)
        for key in list(kwargs):
            if key in self.p:
                self.p[key] = kwargs.pop(key)
        if kwargs.get("array_backend", "numpy") != "numpy":
            raise ArgumentError(f"{task}: the Gymnasium v5 tasks return numpy arrays only "
                                f"(array_backend={kwargs['array_backend']!r} is not supported)")
        kwargs.pop("array_backend", None)
        self.frame_skip = int(frame_skip or spec.frame_skip)
        if self.frame_skip < 1:
            raise ArgumentError(f"frame_skip must be >= 1, got {frame_skip}")
        self.max_episode_steps = int(max_episode_steps or spec.max_episode_steps)
        self.num_envs = int(num_envs)
        needs_body = spec.body_outputs and (task != "Ant-v5" or self.p["contact_cost_weight"] != 0 or
                                            self.p["include_cfrc_ext_in_observation"])
        if needs_body:
            kwargs.setdefault("body_outputs", 1)
        self.sim = Sim(xml_file or gymnasium_asset(spec.xml), nworld=self.num_envs, device=device, **kwargs)
        sim, model = self.sim, self.sim.model
        self.dt = sim.timestep * self.frame_skip
        self._names = model.body_names
        self._mass = model.array("body_mass").copy()
        self._init_qpos = model.array("qpos0").copy()
        self._qfrc_c = np.zeros((self.num_envs, sim.nv))  # qfrc_constraint: 0 after a reset (mj_forward)
        if task == "InvertedDoublePendulum-v5":
            # the site "tip" (sapsim keeps no sites): its body and position in that body, from
            # MuJoCo's compiled model of the same file
            from .render import import_mujoco
            mm = import_mujoco().MjModel.from_xml_path(xml_file or gymnasium_asset(spec.xml))
            self._site_body, self._site_pos = int(mm.site_bodyid[0]), np.array(mm.site_pos[0])
        rng_ = model.ctrl_range  # MujocoEnv's action space: the actuators' ctrlrange
        self.single_action_space = spaces.Box(rng_[:, 0].astype(np.float32), rng_[:, 1].astype(np.float32),
                                              dtype=np.float32)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        nobs = self._obs(self._state()).shape[1]
        self.single_observation_space = spaces.Box(-np.inf, np.inf, (nobs,), dtype=np.float64)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._steps = np.zeros(self.num_envs, dtype=np.int64)
        self._rng = np.random.default_rng(seed)
        self._seeded = seed
        self._pos_before = np.zeros((self.num_envs, 2))

    # ---- what Gymnasium reads of mjData -------------------------------------------------

    def _state(self) -> dict[str, np.ndarray]:
        """Copies of the arrays the task reads (numpy, one row per world)."""
        sim, n = self.sim, self.num_envs
        v = {"qpos": np.array(sim.qpos), "qvel": np.array(sim.qvel), "ctrl": np.array(sim.ctrl),
             "xpos": np.array(sim.xpos).reshape(n, -1, 3), "xipos": np.array(sim.array("xipos")).reshape(n, -1, 3),
             "world_flags": np.array(sim.world_flags)}
        if sim._body_outputs:
            for name in ("cfrc_ext", "cinert", "cvel", "qfrc_actuator"):
                v[name] = np.array(getattr(sim, name))
        if self.task == "InvertedDoublePendulum-v5":
            b = self._site_body  # site_xpos = xpos_b + xmat_b site_pos (the step's start poses, as MuJoCo's)
            R = np.array(sim.array("xmat")).reshape(n, -1, 3, 3)[:, b]
            v["site_xpos"] = (v["xpos"][:, b] + R @ self._site_pos)[:, None, :]
            v["qfrc_constraint"] = self._qfrc_c.copy()
        return v

    def _position(self, v: dict[str, np.ndarray]) -> np.ndarray:
        """(num_envs, 2): the positions whose rate is the task's forward (x, y) velocity."""
        t = self.task
        if t == "Ant-v5":
            b = self.p["main_body"]
            b = self._names.index(b) if isinstance(b, str) else int(b)
            return v["xpos"][:, b, :2].copy()
        if t == "Humanoid-v5":  # mass_center: sum m_b xipos_b / sum m_b
            return (np.einsum("b,nbj->nj", self._mass, v["xipos"]) / self._mass.sum())[:, :2]
        if t == "Swimmer-v5":
            return v["qpos"][:, 0:2].copy()
        return np.stack([v["qpos"][:, 0], np.zeros(self.num_envs)], axis=1)

    def _contact_forces(self, v: dict[str, np.ndarray]) -> np.ndarray:
        lo, hi = self.p["contact_force_range"]
        return np.clip(v["cfrc_ext"], lo, hi)

    def _obs(self, v: dict[str, np.ndarray]) -> np.ndarray:
        t, p, qpos, qvel, n = self.task, self.p, v["qpos"], v["qvel"], self.num_envs
        excl = p.get("exclude_current_positions_from_observation", False)
        if t == "Ant-v5":
            parts = [qpos[:, 2:] if excl else qpos, qvel]
            if p["include_cfrc_ext_in_observation"]:
                parts.append(self._contact_forces(v)[:, 1:].reshape(n, -1))
        elif t in ("Humanoid-v5", "HumanoidStandup-v5"):
            parts = [qpos[:, 2:] if excl else qpos, qvel]
            for key, name, first in (("include_cinert_in_observation", "cinert", 1),
                                     ("include_cvel_in_observation", "cvel", 1),
                                     ("include_qfrc_actuator_in_observation", "qfrc_actuator", 6),
                                     ("include_cfrc_ext_in_observation", "cfrc_ext", 1)):
                if p[key]:
                    parts.append(v[name][:, first:].reshape(n, -1))
        elif t in ("HalfCheetah-v5",):
            parts = [qpos[:, 1:] if excl else qpos, qvel]
        elif t in ("Hopper-v5", "Walker2d-v5"):
            parts = [qpos[:, 1:] if excl else qpos, np.clip(qvel, -10, 10)]
        elif t == "Swimmer-v5":
            parts = [qpos[:, 2:] if excl else qpos, qvel]
        elif t == "InvertedPendulum-v5":
            parts = [qpos, qvel]
        elif t == "InvertedDoublePendulum-v5":
            parts = [qpos[:, :1], np.sin(qpos[:, 1:]), np.cos(qpos[:, 1:]), np.clip(qvel, -10, 10),
                     np.clip(v["qfrc_constraint"], -10, 10)[:, :1]]
        elif t == "Pusher-v5":  # get_body_com: the bodies' frame origins (xpos)
            com = [v["xpos"][:, self._names.index(b)] for b in ("tips_arm", "object", "goal")]
            parts = [qpos[:, :7], qvel[:, :7], *com]
        else:  # Reacher-v5
            tip = v["xpos"][:, self._names.index("fingertip")] - v["xpos"][:, self._names.index("target")]
            parts = [np.cos(qpos[:, :2]), np.sin(qpos[:, :2]), qpos[:, 2:], qvel[:, :2], tip[:, :2]]
        return np.concatenate(parts, axis=1)

    def _healthy(self, v: dict[str, np.ndarray]) -> np.ndarray:
        t, p, qpos = self.task, self.p, v["qpos"]
        finite = (v["world_flags"] & int(WorldFlag.NONFINITE)) == 0
        if t == "Ant-v5":
            state = np.concatenate([qpos, v["qvel"]], axis=1)
            lo, hi = p["healthy_z_range"]
            return finite & np.isfinite(state).all(1) & (lo <= state[:, 2]) & (state[:, 2] <= hi)
        if t == "Humanoid-v5":
            lo, hi = p["healthy_z_range"]
            return finite & (lo < qpos[:, 2]) & (qpos[:, 2] < hi)
        if t in ("Hopper-v5", "Walker2d-v5"):
            z, angle = qpos[:, 1], qpos[:, 2]
            (zl, zh), (al, ah) = p["healthy_z_range"], p["healthy_angle_range"]
            ok = finite & (zl < z) & (z < zh) & (al < angle) & (angle < ah)
            if t == "Hopper-v5":
                sl, sh = p["healthy_state_range"]
                state = np.concatenate([qpos, v["qvel"]], axis=1)[:, 2:]
                ok &= ((sl < state) & (state < sh)).all(1)
            return ok
        return finite

    def _reward(self, v: dict[str, np.ndarray], pos_before: np.ndarray, action: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """(reward, terminated, reward terms) of Gymnasium's step at the state v."""
        t, p = self.task, self.p
        finite = (v["world_flags"] & int(WorldFlag.NONFINITE)) == 0
        if t == "InvertedPendulum-v5":
            obs = self._obs(v)
            terminated = ~np.isfinite(obs).all(1) | (np.abs(obs[:, 1]) > 0.2) | ~finite
            reward = (~terminated).astype(np.float64)
            return reward, terminated, {"reward_survive": reward}
        if t == "InvertedDoublePendulum-v5":
            x, y = v["site_xpos"][:, 0, 0], v["site_xpos"][:, 0, 2]
            terminated = (y <= 1) | ~finite
            v1, v2 = v["qvel"][:, 1], v["qvel"][:, 2]
            dist = 0.01 * x ** 2 + (y - 2) ** 2
            vel = 1e-3 * v1 ** 2 + 5e-3 * v2 ** 2
            alive = p["healthy_reward"] * (~terminated)
            return alive - dist - vel, terminated, {"reward_survive": alive, "distance_penalty": -dist,
                                                    "velocity_penalty": -vel}
        if t == "Pusher-v5":
            xpos = {b: v["xpos"][:, self._names.index(b)] for b in ("tips_arm", "object", "goal")}
            near = -np.linalg.norm(xpos["object"] - xpos["tips_arm"], axis=1) * p["reward_near_weight"]
            dist = -np.linalg.norm(xpos["object"] - xpos["goal"], axis=1) * p["reward_dist_weight"]
            ctrl = -np.square(action).sum(1) * p["reward_control_weight"]
            return dist + ctrl + near, ~finite, {"reward_dist": dist, "reward_ctrl": ctrl, "reward_near": near}
        if t == "HumanoidStandup-v5":
            # Gymnasium 1.x's rule as written: the height over the model's timestep (not dt), and
            # uph_cost_weight accepted but not applied (its _get_rew never reads it)
            uph = v["qpos"][:, 2] / self.sim.timestep
            ctrl = p["ctrl_cost_weight"] * np.square(v["ctrl"]).sum(1)
            lo, hi = p["impact_cost_range"]
            impact = np.clip(p["impact_cost_weight"] * np.square(v["cfrc_ext"]).sum((1, 2)), lo, hi)
            return uph - ctrl - impact + 1, ~finite, {"reward_linup": uph, "reward_quadctrl": -ctrl,
                                                      "reward_impact": -impact}
        if t == "Reacher-v5":
            tip = v["xpos"][:, self._names.index("fingertip")] - v["xpos"][:, self._names.index("target")]
            dist = -np.linalg.norm(tip, axis=1) * p["reward_dist_weight"]
            ctrl = -np.square(action).sum(1) * p["reward_control_weight"]
            return dist + ctrl, ~finite, {"reward_dist": dist, "reward_ctrl": ctrl}
        vel = (self._position(v) - pos_before) / self.dt
        forward = p["forward_reward_weight"] * vel[:, 0]
        # Humanoid's control cost reads data.ctrl (the action as written); the others the action
        ctrl_cost = p["ctrl_cost_weight"] * np.square(v["ctrl"] if t == "Humanoid-v5" else action).sum(1)
        terms: dict[str, np.ndarray] = {"x_velocity": vel[:, 0], "reward_forward": forward, "reward_ctrl": -ctrl_cost}
        if t in ("Ant-v5", "Swimmer-v5"):
            terms["y_velocity"] = vel[:, 1]
        reward = forward - ctrl_cost
        terminated = ~finite
        if t in ("Ant-v5", "Humanoid-v5", "Hopper-v5", "Walker2d-v5"):
            healthy = self._healthy(v)
            survive = healthy * p["healthy_reward"]
            reward = reward + survive
            terms["reward_survive"] = survive
            if p["terminate_when_unhealthy"]:
                terminated = ~healthy | ~finite
        if t == "Ant-v5":
            contact = p["contact_cost_weight"] * np.square(self._contact_forces(v)).sum((1, 2))
            reward = reward - contact
            terms["reward_contact"] = -contact
        if t == "Humanoid-v5":
            lo, hi = p["contact_cost_range"]
            contact = np.clip(p["contact_cost_weight"] * np.square(v["cfrc_ext"]).sum((1, 2)), lo, hi)
            reward = reward - contact
            terms["reward_contact"] = -contact
        return reward, terminated, terms

    # ---- resets ------------------------------------------------------------------------

    def _reset_worlds(self, done: np.ndarray) -> None:
        """Reset the worlds of the mask `done`: mj_resetData (qpos0, zero velocity, control,
        xfrc_applied) and the task's reset_model noise, drawn from the env's generator."""
        n = int(done.sum())
        if n == 0:
            return
        sim, t, p, r = self.sim, self.task, self.p, self._rng
        sim.reset(None, worlds=done)
        nq, nv = sim.nq, sim.nv
        if t == "Reacher-v5":
            qpos = self._init_qpos + r.uniform(-0.1, 0.1, (n, nq))
            for i in range(n):  # the goal: uniform in the disc of radius 0.2 (rejection)
                while True:
                    goal = r.uniform(-0.2, 0.2, 2)
                    if np.linalg.norm(goal) < 0.2:
                        break
                qpos[i, -2:] = goal
            qvel = r.uniform(-0.005, 0.005, (n, nv))
            qvel[:, -2:] = 0
        elif t == "Pusher-v5":  # the arm at init_qpos; the cylinder uniform, at least 0.17 from the goal (0, 0)
            qpos = np.repeat(self._init_qpos[None], n, axis=0)
            for i in range(n):
                while True:
                    cyl = np.array([r.uniform(-0.3, 0), r.uniform(-0.2, 0.2)])
                    if np.linalg.norm(cyl) > 0.17:
                        break
                qpos[i, -4:-2] = cyl
            qpos[:, -2:] = 0
            qvel = r.uniform(-0.005, 0.005, (n, nv))
            qvel[:, -4:] = 0
        else:
            s = p["reset_noise_scale"]
            qpos = self._init_qpos + r.uniform(-s, s, (n, nq))
            if t in ("Ant-v5", "HalfCheetah-v5", "InvertedDoublePendulum-v5"):
                qvel = s * r.standard_normal((n, nv))
            else:
                qvel = r.uniform(-s, s, (n, nv))
        sim.set("qpos", qpos, done)
        sim.set("qvel", qvel, done)
        self._steps[done] = 0
        self._qfrc_c[done] = 0

    def reset(self, *, seed: Optional[Union[int, list[int]]] = None,
              options: Optional[dict[str, Any]] = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every world (``options={"reset_mask": mask}``: only those); ``seed`` reseeds."""
        if isinstance(seed, (list, tuple)):
            seed = seed[0]
        if seed is None and self._seeded is not None and not hasattr(self, "_started"):
            seed = self._seeded
        self._started = True
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        mask = np.ones(self.num_envs, dtype=bool)
        if options and "reset_mask" in options:
            mask = np.asarray(options["reset_mask"], dtype=bool)
        self._reset_worlds(mask)
        v = self._state()
        self._pos_before[mask] = self._position(v)[mask]
        return self._obs(v), {}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Write the (num_envs, nu) actions to ctrl (unclipped, as MujocoEnv.do_simulation;
        sapsim clamps to ctrlrange as MuJoCo), step ``frame_skip`` times; Gymnasium's obs,
        reward, terminated, truncated (time limit) and info, with same-step autoreset."""
        sim = self.sim
        a = np.asarray(actions, dtype=np.float64)
        if a.shape != (self.num_envs, sim.nu):
            raise ArgumentError(f"actions must have shape ({self.num_envs}, {sim.nu}), got {a.shape}")
        if sim.on_gpu:
            sim.ctrl = a
        else:
            sim.ctrl[:] = a
        before = self._pos_before.copy()
        if self.task in ("HalfCheetah-v5", "Hopper-v5", "Walker2d-v5", "Swimmer-v5"):
            before = self._position(self._state())  # qpos-based: the state before the step
        sim.step(self.frame_skip)
        self._steps += 1
        if self.task == "InvertedDoublePendulum-v5":
            self._qfrc_c = qfrc_constraint(sim)
        v = self._state()
        #: the arrays the last step's observation and reward read (before any autoreset)
        self.last_state = v
        obs = self._obs(v)
        reward, terminated, terms = self._reward(v, before, a)
        self._pos_before = self._position(v)
        truncated = (self._steps >= self.max_episode_steps) & ~terminated
        info: dict[str, Any] = {"world_flags": v["world_flags"], "newton_iter": np.array(sim.newton_iter),
                                "ncon": np.array(sim.ncon), **terms}
        done = terminated | truncated
        if done.any():
            info["final_obs"] = obs.copy()
            info["_final_obs"] = done
            self._reset_worlds(done)
            v2 = self._state()
            obs[done] = self._obs(v2)[done]  # the other worlds keep this step's observation
            self._pos_before[done] = self._position(v2)[done]
        return obs, reward, terminated, truncated, info

    def close_extras(self, **kwargs: Any) -> None:
        """Free the batch."""
        self.sim = None  # type: ignore[assignment]


def make_vec(task: str, num_envs: int = 16, **kwargs: Any) -> Union[SapsimVectorEnv, GymV5VectorEnv]:
    """``GymV5VectorEnv(task, ...)`` for a Gymnasium v5 name (``"Ant-v5"``, :data:`GYM_V5`),
    else ``SapsimVectorEnv(task, ...)`` (:data:`TASKS`)."""
    if task in GYM_V5:
        return GymV5VectorEnv(task, num_envs, **kwargs)
    return SapsimVectorEnv(task, num_envs, **kwargs)


# the gymnasium registry: gymnasium.make_vec("sapsim/Ant-v0", num_envs=64, vectorization_mode="vector_entry_point")
for _name, _id in (("cartpole", "Cartpole"), ("ant", "Ant"), ("humanoid", "Humanoid"), ("quadruped", "Quadruped")):
    _env_id = f"sapsim/{_id}-v0"
    if _env_id not in gymnasium.registry:
        gymnasium.register(_env_id, entry_point=None,
                           vector_entry_point=f"sapsim.vector:{SapsimVectorEnv.__name__}",
                           kwargs={"task": _name})
# Gymnasium's v5 tasks: gymnasium.make_vec("sapsim/Ant-v5", num_envs=64, vectorization_mode="vector_entry_point")
for _name in GYM_V5:
    _env_id = f"sapsim/{_name}"
    if _env_id not in gymnasium.registry:
        gymnasium.register(_env_id, entry_point=None,
                           vector_entry_point=f"sapsim.vector:{GymV5VectorEnv.__name__}",
                           kwargs={"task": _name})
