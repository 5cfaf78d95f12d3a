"""Frame files of ``sap_run`` (``Sim.run(frames=...)``, ``sapsim run --format binary``): the
binary format of docs/frames.md, read into numpy arrays.

Layout (little-endian): a 64-byte header -- magic ``b"SAPFRAME"``, uint32 version (1), uint32
header bytes (64), uint32 nworld, nq, nv, uint32 dtype (8: float64, 4: float32), float64 h,
zero padding -- then frames of int64 step, float64 time[nworld], dtype qpos[nworld, nq],
dtype qvel[nworld, nv].
"""

from __future__ import annotations

import os
from typing import Any, Union

import numpy as np

__all__ = ["read_frames", "FRAMES_MAGIC"]

FRAMES_MAGIC = b"SAPFRAME"


def read_frames(path: Union[str, "os.PathLike[str]"], allow_partial: bool = False) -> dict[str, Any]:
    """Read a binary frame file.

    Returns a dict: ``step`` (F,) int64, ``time`` (F, nworld) float64, ``qpos`` (F, nworld, nq)
    and ``qvel`` (F, nworld, nv) in the file's dtype, and ``h``, ``nworld``, ``nq``, ``nv``,
    ``dtype``, ``version``.

    Raises:
        ValueError: not a sapsim frame file (magic, version, dtype), or a truncated last frame
            (a run cut short) unless ``allow_partial`` drops it.
    """
    data = np.fromfile(path, dtype=np.uint8)
    if data.size < 64 or data[:8].tobytes() != FRAMES_MAGIC:
        raise ValueError(f"{path}: not a sapsim frame file (magic {FRAMES_MAGIC!r} missing)")
    version, header, nworld, nq, nv, size = (int(x) for x in data[8:32].view("<u4"))
    if version != 1:
        raise ValueError(f"{path}: frame format version {version} (this reader knows 1)")
    if size not in (4, 8):
        raise ValueError(f"{path}: dtype code {size} is neither 8 (float64) nor 4 (float32)")
    h = float(data[32:40].view("<f8")[0])
    dtype = np.dtype("<f8" if size == 8 else "<f4")
    frame = 8 + 8 * nworld + size * nworld * (nq + nv)
    body = data[header:]
    nframe, rest = divmod(body.size, frame)
    if rest and not allow_partial:
        raise ValueError(f"{path}: {rest} bytes after {nframe} whole frames (a truncated frame; "
                         "allow_partial=True drops it)")
    rec = np.dtype([("step", "<i8"), ("time", "<f8", (nworld,)), ("qpos", dtype, (nworld, nq)),
                    ("qvel", dtype, (nworld, nv))])
    frames = body[: nframe * frame].view(rec)
    return {"step": frames["step"].copy(), "time": frames["time"].copy(), "qpos": frames["qpos"].copy(),
            "qvel": frames["qvel"].copy(), "h": h, "nworld": nworld, "nq": nq, "nv": nv, "dtype": dtype,
            "version": version}
