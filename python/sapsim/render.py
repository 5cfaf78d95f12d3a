"""Draw sapsim trajectories with MuJoCo's own renderer and write videos.

sapsim's states are MuJoCo's (same qpos layout, quaternions w-x-y-z), so MuJoCo's
Python bindings draw them: the scene is compiled by MuJoCo, each state goes into an
``MjData`` (``qpos``, and the mocap poses when given), ``mj_kinematics`` places the
bodies and ``mujoco.Renderer`` renders offscreen. The OpenGL platform is MuJoCo's
``MUJOCO_GL``: when unset, this module picks ``egl`` on a machine with a usable GPU and
``osmesa`` (Debian's libosmesa6, software) otherwise. Videos: MP4 through
imageio-ffmpeg, GIF through imageio (Pillow).

Needs ``mujoco`` (the same 4.0 as sapsim's C library) and ``imageio`` (with
``imageio-ffmpeg`` for MP4); neither is a dependency of sapsim itself.

>>> frames = render_frames("scenes/ant.xml", qpos)          # (T, H, W, 3) uint8
>>> write_video(frames, "ant.mp4", fps=30)
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

__all__ = ["render_frames", "write_video", "render_trajectory", "load_trajectory_csv", "import_mujoco"]

PathLike = Union[str, "os.PathLike[str]"]


def import_mujoco() -> Any:
    """Import MuJoCo's Python bindings with an offscreen OpenGL platform chosen (see
    the module doc); ImportError with the reason when they cannot be used."""
    if "MUJOCO_GL" not in os.environ:
        gpu = False
        try:
            from .sim import cuda_available

            gpu = cuda_available()
        except Exception:  # noqa: BLE001 - no library: decide for the CPU
            gpu = False
        os.environ["MUJOCO_GL"] = "egl" if gpu else "osmesa"
    if os.environ["MUJOCO_GL"] == "osmesa":
        os.environ.setdefault("PYOPENGL_PLATFORM", "osmesa")
    elif os.environ["MUJOCO_GL"] == "egl":
        os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
    try:
        import mujoco
    except ImportError as e:
        raise ImportError("sapsim.render needs MuJoCo's Python bindings: pip install mujoco==4.0.0") from e
    return mujoco


def _camera(mujoco: Any, model: Any, data: Any, track: int, distance: Optional[float]) -> Any:
    cam = mujoco.MjvCamera()
    mujoco.mjv_defaultFreeCamera(model, cam)
    cam.lookat[:] = data.xpos[track]
    if distance is None:  # frame the tracked body's subtree (a robot), not the floor
        root = model.body_rootid[track]
        geoms = [g for g in range(model.ngeom) if model.body_rootid[model.geom_bodyid[g]] == root and track > 0]
        spread = max((np.linalg.norm(data.geom_xpos[g] - data.xpos[track]) + model.geom_rbound[g] for g in geoms),
                     default=0.0)
        distance = 2.5 * max(spread, 0.1) if geoms else 1.5 * model.stat.extent
    cam.distance = distance
    cam.elevation = -20.0
    cam.azimuth = 120.0
    return cam


def render_frames(scene: PathLike, qpos: npt.ArrayLike, width: int = 480, height: int = 360,
                  mocap_pos: Optional[npt.ArrayLike] = None, mocap_quat: Optional[npt.ArrayLike] = None,
                  track_body: Union[int, str, None] = None, distance: Optional[float] = None) -> np.ndarray:
    """Render the states ``qpos`` (T, nq) of ``scene`` (an MJCF or URDF path).

    Args:
        scene: the scene the states belong to.
        qpos: (T, nq) positions, or (nq,) for one frame.
        width, height: image size in pixels (at most the scene's offscreen buffer,
            640 x 480 unless the scene's ``<visual><global offwidth offheight>`` says).
        mocap_pos, mocap_quat: (T, nmocap, 3 or 4) mocap poses, when the scene has some.
        track_body: body the camera looks at (id or name); default the first body
            after the world (a robot's root).
        distance: camera distance (m); default 2.5 times the radius of the
            tracked body's tree (its geoms' bounding spheres).

    Returns:
        (T, height, width, 3) uint8 frames.
    """
    mujoco = import_mujoco()
    model = mujoco.MjModel.from_xml_path(os.fspath(scene))
    q = np.atleast_2d(np.asarray(qpos, dtype=np.float64))
    if q.shape[1] != model.nq:
        raise ValueError(f"render_frames: qpos has {q.shape[1]} columns, the scene has nq = {model.nq}")
    data = mujoco.MjData(model)
    if isinstance(track_body, str):
        track = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, track_body)
        if track < 0:
            raise ValueError(f"render_frames: the scene has no body '{track_body}'")
    else:
        track = track_body if track_body is not None else min(1, model.nbody - 1)
    mp = None if mocap_pos is None else np.asarray(mocap_pos, dtype=np.float64).reshape(len(q), -1, 3)
    mq = None if mocap_quat is None else np.asarray(mocap_quat, dtype=np.float64).reshape(len(q), -1, 4)
    if model.nlight == 0:  # a scene without lights: a brighter headlight than MuJoCo's default
        model.vis.headlight.ambient[:] = 0.35
        model.vis.headlight.diffuse[:] = 0.75
    renderer = mujoco.Renderer(model, height, width)
    frames = np.empty((len(q), height, width, 3), dtype=np.uint8)
    try:
        for t in range(len(q)):
            data.qpos[:] = q[t]
            if mp is not None:
                data.mocap_pos[:] = mp[t]
            if mq is not None:
                data.mocap_quat[:] = mq[t]
            mujoco.mj_kinematics(model, data)
            renderer.update_scene(data, camera=_camera(mujoco, model, data, track, distance))
            frames[t] = renderer.render()
    finally:
        renderer.close()
    return frames


def write_video(frames: np.ndarray, path: PathLike, fps: float = 30.0) -> Path:
    """Write (T, H, W, 3) uint8 frames as MP4 (``.mp4``, imageio-ffmpeg, H.264) or GIF
    (``.gif``); returns the path."""
    try:
        import imageio.v2 as imageio
    except ImportError as e:
        raise ImportError("sapsim.render.write_video needs imageio (and imageio-ffmpeg for MP4)") from e
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".gif":
        imageio.mimsave(path, list(frames), duration=1.0 / fps, loop=0)
    elif suffix in (".mp4", ".m4v", ".mov"):
        with imageio.get_writer(path, fps=fps, codec="libx264", quality=7, macro_block_size=8) as w:
            for f in frames:
                w.append_data(f)
    else:
        raise ValueError(f"write_video: unknown video type '{suffix}' (use .mp4 or .gif)")
    return path


def load_trajectory_csv(path: PathLike, world: int = 0, nq: Optional[int] = None) -> tuple[np.ndarray, np.ndarray]:
    """Read a trajectory written by ``sapsim run SCENE --out FILE`` (columns step,
    world, time, qpos0.., qvel0..): (time (T,), qpos (T, nq)) of one world."""
    with open(path, newline="") as f:
        rows = csv.reader(f)
        header = next(rows)
        qcols = [i for i, h in enumerate(header) if h.startswith("qpos")]
        if not qcols or "world" not in header or "time" not in header:
            raise ValueError(f"{path}: not a sapsim trajectory (header {header[:5]}...)")
        if nq is not None and len(qcols) != nq:
            raise ValueError(f"{path}: {len(qcols)} qpos columns, the scene has nq = {nq}")
        wcol, tcol = header.index("world"), header.index("time")
        t, q = [], []
        for r in rows:
            if int(r[wcol]) == world:
                t.append(float(r[tcol]))
                q.append([float(r[i]) for i in qcols])
    if not q:
        raise ValueError(f"{path}: no rows of world {world}")
    return np.asarray(t), np.asarray(q)


def render_trajectory(scene: PathLike, qpos: npt.ArrayLike, path: PathLike, fps: float = 30.0,
                      times: Optional[Sequence[float]] = None, **kwargs: Any) -> Path:
    """Render ``qpos`` (T, nq) to a video at ``path``. With ``times`` (T,), frames are
    resampled to ``fps`` in simulated time (the last state at or before each frame's
    time); else every state is one frame."""
    q = np.atleast_2d(np.asarray(qpos, dtype=np.float64))
    if times is not None:
        t = np.asarray(times, dtype=np.float64)
        want = np.arange(t[0], t[-1] + 1e-12, 1.0 / fps)
        q = q[np.clip(np.searchsorted(t, want + 1e-12, side="right") - 1, 0, len(q) - 1)]
    return write_video(render_frames(scene, q, **kwargs), path, fps)
