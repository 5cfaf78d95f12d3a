"""sapsim: batched rigid-body simulation with the SAP convex contact solver, from Python.

>>> import sapsim
>>> sim = sapsim.Sim("scenes/ant.xml", nworld=64, keyframe=0)
>>> sim.ctrl[:] = 0.3          # a numpy view of the C batch: written in place
>>> sim.step(10)
>>> sim.qpos.shape, sim.converged.all()
((64, 15), True)

Device arrays without a copy: ``torch.from_dlpack(sim.qpos_device)`` (DLPack and
``__cuda_array_interface__``, :mod:`sapsim.dlpack`). Gymnasium vector environments:
:mod:`sapsim.vector` (cartpole, ant, humanoid, quadruped). Videos: :mod:`sapsim.render`.

The package wraps sapsim's C library (``libsapsim.so``) with ctypes and adds no
physics of its own. See :class:`Sim` for the arrays and the rules for writing them.
"""

from __future__ import annotations

from ._capi import library_path
from .dlpack import DeviceArray
from .errors import (
    ArgumentError,
    CudaError,
    NoDeviceError,
    NonFiniteError,
    OptionError,
    OutOfMemoryError,
    SapsimError,
    SapsimIOError,
    SceneError,
    UnsupportedError,
)
from .frames import read_frames
from .params import PARAMS
from .sim import (
    FIELDS,
    LINE_SEARCHES,
    PRESETS,
    Model,
    Sim,
    StateArray,
    WorldFlag,
    cuda_available,
    cuda_device_name,
)

#: version of the package (and of the C library, SAPSIM_VERSION)
__version__: str = "0.1.0"

__all__ = [
    "Sim",
    "DeviceArray",
    "Model",
    "StateArray",
    "WorldFlag",
    "FIELDS",
    "PARAMS",
    "PRESETS",
    "LINE_SEARCHES",
    "cuda_available",
    "cuda_device_name",
    "library_path",
    "read_frames",
    "SapsimError",
    "ArgumentError",
    "SceneError",
    "UnsupportedError",
    "OptionError",
    "OutOfMemoryError",
    "NonFiniteError",
    "CudaError",
    "NoDeviceError",
    "SapsimIOError",
    "__version__",
]
