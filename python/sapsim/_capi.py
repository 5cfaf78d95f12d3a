"""ctypes declarations of sapsim's C API (include/sapsim/sapsim.h) and the loader.

The binding is ctypes over ``libsapsim.so``, the shared library the Makefile builds
from the same objects as the CLI. Why ctypes: the C API is flat (opaque handles,
status codes, plain arrays), so a binding needs no compiled glue; the package then
works on any CPython 3.9+ without rebuilding per interpreter version, and numpy
views are made straight from the addresses the library reports. A call costs about
a microsecond, which is noise beside a batched step.

Where the library comes from, in order: the ``SAPSIM_LIB`` environment variable,
the copy ``pip install ./python`` puts inside the package (``sapsim/_lib``, with
MuJoCo's library beside it), or a source checkout's ``build/libsapsim.so``.
"""

from __future__ import annotations

import ctypes
import os
from ctypes import POINTER, c_char_p, c_double, c_int, c_ubyte, c_ulonglong, c_void_p
from pathlib import Path
from typing import Optional

from .errors import raise_for_status

__all__ = ["lib", "library_path", "check", "SapWorldInfo", "SapTimers", "SapRunOptions", "SapRunSummary",
           "RUN_CALLBACK", "FRAME_FN", "SAP_NFIELD"]


class SapWorldInfo(ctypes.Structure):
    """Mirror of ``sapWorldInfo``: per-world diagnostics of the last step."""

    _fields_ = [
        ("flags", c_int),
        ("ncon", c_int),
        ("ncon_dropped", c_int),
        ("newton_iter", c_int),
        ("ls_iter", c_int),
        ("nfactor", c_int),
        ("ls_eval", c_int),
        ("band_redo", c_int),
    ]


class SapTimers(ctypes.Structure):
    """Mirror of ``sapTimers``: per-stage wall time of the last ``sap_step``."""

    _fields_ = [
        (name, c_double)
        for name in ("kinematics", "collision", "free_motion", "solve", "integrate", "total")
    ]


#: sapRunCallback and sapFrameFn (include/sapsim/sapsim.h)
RUN_CALLBACK = ctypes.CFUNCTYPE(c_int, c_void_p, ctypes.c_long, POINTER(SapWorldInfo), c_void_p)
FRAME_FN = ctypes.CFUNCTYPE(c_int, c_void_p, ctypes.c_long, c_void_p)


class SapRunOptions(ctypes.Structure):
    """Mirror of ``sapRunOptions``: the limits, callbacks and frame output of ``sap_run``."""

    _fields_ = [
        ("max_steps", ctypes.c_long),
        ("end_time", c_double),
        ("wall_time", c_double),
        ("stop_flags", c_int),
        ("before", RUN_CALLBACK),
        ("after", RUN_CALLBACK),
        ("user", c_void_p),
        ("frame_every", c_int),
        ("writer", c_void_p),
        ("frame_fn", FRAME_FN),
        ("frame_user", c_void_p),
    ]


class SapRunSummary(ctypes.Structure):
    """Mirror of ``sapRunSummary``."""

    _fields_ = [
        ("stop", c_int),
        ("steps", ctypes.c_long),
        ("frames", ctypes.c_long),
        *[(n, c_double) for n in ("world_steps", "wall_s", "step_s", "world_steps_per_s", "time_min",
                                  "time_max", "newton_mean", "newton_p95", "newton_max", "ls_mean",
                                  "ls_p95", "ls_max")],
        ("flag_steps", ctypes.c_long * 8),
        ("unconverged", ctypes.c_long),
        ("ncon_peak", c_int),
        ("retries", ctypes.c_longlong),
        ("h_min", c_double),
    ]


class SapWorldRetry(ctypes.Structure):
    """Mirror of ``sapWorldRetry``: step retry counters of one world."""

    _fields_ = [("retries", ctypes.c_longlong), ("level", c_int), ("level_max", c_int), ("h_min", c_double)]


SAP_NFIELD = 21  # sapField values: qpos, qvel, ctrl, time, qfrc_applied, xpos, xquat, qacc_free,
#               mocap_pos, mocap_quat, sensordata, act, xfrc_applied, cfrc_ext, cvel, cinert,
#               subtree_com, qfrc_actuator, qvel_prev, ctrl_history, tree_asleep

# sapOptions is only ever handled through a pointer to storage the library fills
# (sap_optionsDefault): this upper bound of its size keeps the binding independent
# of the struct's exact layout
_OPTIONS_BYTES = 4096


def _candidates() -> list[Path]:
    env = os.environ.get("SAPSIM_LIB")
    if env:
        return [Path(env)]
    here = Path(__file__).resolve().parent
    return [here / "_lib" / "libsapsim.so", here.parent.parent / "build" / "libsapsim.so"]


def _load() -> tuple[ctypes.CDLL, Path]:
    tried = []
    for path in _candidates():
        if path.is_file():
            try:
                return ctypes.CDLL(str(path)), path
            except OSError as e:  # e.g. MuJoCo's library not found
                raise ImportError(f"sapsim: cannot load {path}: {e}") from e
        tried.append(str(path))
    raise ImportError(
        "sapsim: the C library libsapsim.so was not found (looked at "
        + ", ".join(tried)
        + "); install the package with 'pip install ./python' from a sapsim checkout, "
        "run 'make build/libsapsim.so', or point SAPSIM_LIB at the library"
    )


lib, library_path = _load()


def _declare(name: str, restype: Optional[type], *argtypes: type) -> None:
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)


_P = c_void_p
_declare("sap_lastError", c_char_p)
_declare("sap_statusName", c_char_p, c_int)
_declare("sap_optionsDefault", None, _P)
_declare("sap_optionsSet", c_int, _P, c_char_p, c_char_p)
_declare("sap_optionsExpand", c_int, _P, _P)
_declare("sap_optionsDescribe", c_int, _P, c_char_p, c_int)
_declare("sap_loadModel", c_int, c_char_p, POINTER(c_void_p))
_declare("sap_loadModelString", c_int, c_char_p, POINTER(c_void_p))
_declare("sap_freeModel", None, _P)
_declare("sap_create", c_int, _P, _P, c_int, POINTER(c_void_p))
_declare("sap_free", None, _P)
_declare("sap_step", c_int, _P, c_int)
_declare("sap_reset", c_int, _P, c_int, POINTER(c_ubyte))
_declare("sap_fieldSize", c_int, _P, c_int)
_declare("sap_fieldName", c_char_p, c_int)
_declare("sap_get", c_int, _P, c_int, POINTER(c_int), c_int, POINTER(c_double))
_declare("sap_set", c_int, _P, c_int, POINTER(c_int), c_int, POINTER(c_double))
_declare("sap_worldInfo", c_int, _P, POINTER(c_int), c_int, POINTER(SapWorldInfo))
_declare("sap_setEqActive", c_int, _P, c_int, c_int, c_int)
_declare("sap_setEqActiveArray", c_int, _P, POINTER(c_int))
_declare("sap_getEqActive", c_int, _P, POINTER(c_int))
_declare("sap_getMassMatrix", c_int, _P, c_int, POINTER(c_double))
_declare("sap_nworld", c_int, _P)
_declare("sap_model", c_void_p, _P)
_declare("sap_options", c_void_p, _P)
_declare("sap_onGPU", c_int, _P)
_declare("sap_deviceName", c_char_p, _P)
_declare("sap_bytesPerWorld", c_ulonglong, _P)
_declare("sap_bytesShared", c_ulonglong, _P)
_declare("sap_sync", c_int, _P)
_declare("sap_timers", None, _P, POINTER(SapTimers))
_declare("sap_modelArray", c_void_p, _P, c_char_p, POINTER(c_int), POINTER(c_int))
_declare("sap_dataArray", c_void_p, _P, c_char_p, POINTER(c_int), POINTER(c_int))
_declare("sap_checkInputs", c_int, _P)
_declare("sap_cudaUsable", c_int, c_char_p, c_int)
_declare("sap_paramName", c_char_p, c_int)
_declare("sap_paramFind", c_int, c_char_p)
_declare("sap_paramSize", c_int, _P, c_int)
_declare("sap_setParam", c_int, _P, c_int, POINTER(c_int), c_int, POINTER(c_double))
_declare("sap_getParam", c_int, _P, c_int, POINTER(c_int), c_int, POINTER(c_double))
_declare("sap_resetParam", c_int, _P, c_int, POINTER(c_int), c_int)
_declare("sap_paramOverridden", c_int, _P, c_int, c_int)
_declare("sap_deviceArray", c_void_p, _P, c_char_p, POINTER(c_int), POINTER(c_int))
_declare("sap_stepStream", c_int, _P, c_int, c_void_p)
_declare("sap_streamWait", c_int, _P, c_void_p)
_declare("sap_commit", c_int, _P, POINTER(c_ubyte), c_void_p)
_declare("sap_cudaStream", c_void_p, _P)
_declare("sap_runOptionsDefault", None, POINTER(SapRunOptions))
_declare("sap_run", c_int, _P, POINTER(SapRunOptions), POINTER(SapRunSummary))
_declare("sap_runStopName", c_char_p, c_int)
_declare("sap_frameWriterOpen", c_int, _P, c_char_p, c_int, POINTER(c_void_p))
_declare("sap_frameWriterClose", c_int, _P)
_declare("sap_worldRetry", c_int, _P, POINTER(c_int), c_int, POINTER(SapWorldRetry))
_declare("sap_retryClear", c_int, _P)


def last_error() -> str:
    """The message of the last failed call on this thread (``sap_lastError``)."""
    return lib.sap_lastError().decode("utf-8", "replace")


def check(status: int) -> None:
    """Raise the exception of a non-OK ``sapStatus``, carrying sapsim's message."""
    if status != 0:
        raise_for_status(status, last_error())


def new_options() -> ctypes.Array:
    """Storage for one ``sapOptions``, filled with the defaults."""
    buf = ctypes.create_string_buffer(_OPTIONS_BYTES)
    lib.sap_optionsDefault(buf)
    return buf
