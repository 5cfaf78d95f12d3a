"""Zero-copy export of sapsim's batch arrays: DLPack and ``__cuda_array_interface__``.

:class:`DeviceArray` describes one per-world array of a batch (its address, shape and
dtype) and hands it to array libraries without a copy:

- ``__dlpack__`` / ``__dlpack_device__`` (the DLPack protocol; ``torch.from_dlpack``,
  ``jax.dlpack.from_dlpack``, ``numpy.from_dlpack`` for host memory, cupy). The capsule
  is a ``DLManagedTensor`` built here with ctypes (no compiled dependency): the
  consumer's deleter releases the reference that keeps the batch alive.
- ``__cuda_array_interface__`` version 3 (numba, cupy, ``torch.as_tensor``), with the
  ``stream`` key set to sapsim's CUDA stream, so a consumer orders its reads after the
  work sapsim has enqueued there.

Device arrays of a GPU batch (``device="cuda"``) point into the device allocation; a
CPU batch exports its host memory the same way (DLPack device ``kDLCPU``), so the same
code runs on both. Ordering with a consumer's stream: ``__dlpack__(stream=s)`` makes
``s`` wait (an event, no host wait) for the steps sapsim has enqueued so far; a view
kept across steps stays ordered when the steps run on the consumer's stream
(``Sim.step(n, stream=s)``), and after a reset, set or commit (whose pose kernels run
on sapsim's stream) ``Sim.stream_wait(s)`` orders ``s`` after them. sapsim's stream is
a blocking stream, so work on the legacy default stream is ordered with it anyway.

Write rules (the C API's, include/sapsim/sapsim.h): ``ctrl``, ``qfrc_applied`` and ``xfrc_applied`` may
be written through a view at any time (a step refuses a world whose inputs are not
finite, flag ``BADINPUT``). Writes to ``qpos``, ``qvel``, ``time``, ``mocap_pos`` or
``mocap_quat`` through a view must be followed by :meth:`sapsim.Sim.commit` before
the next step, reset, get or set (checks the values, freezes and names a world with
a non-finite one, recomputes poses). Every other array is read-only by contract.
"""

from __future__ import annotations

import ctypes
from ctypes import CFUNCTYPE, POINTER, Structure, c_char_p, c_int, c_int64, c_uint8, c_uint16, c_uint64, c_void_p
from typing import Any, Callable, Optional

import numpy as np

__all__ = ["DeviceArray", "KDL_CPU", "KDL_CUDA"]

KDL_CPU = 1  #: DLPack device type of host memory
KDL_CUDA = 2  #: DLPack device type of CUDA device memory


class _DLDevice(Structure):
    _fields_ = [("device_type", c_int), ("device_id", c_int)]


class _DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class _DLTensor(Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", _DLDevice),
        ("ndim", c_int),
        ("dtype", _DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("byte_offset", c_uint64),
    ]


class _DLManagedTensor(Structure):
    pass


_Deleter = CFUNCTYPE(None, POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", c_void_p), ("deleter", _Deleter)]

# DLPack type codes: kDLInt 0, kDLUInt 1, kDLFloat 2
_DL_DTYPE = {np.dtype(np.float64): (2, 64), np.dtype(np.float32): (2, 32), np.dtype(np.int32): (0, 32),
             np.dtype(np.uint8): (1, 8)}

# tensors handed out and not yet released: address of the DLManagedTensor ->
# (the struct, its shape array, the keeper of the batch)
_LIVE: dict[int, tuple[Any, Any, Any]] = {}


def _release(addr: int) -> None:
    _LIVE.pop(addr, None)


@_Deleter
def _deleter(ptr: Any) -> None:  # called by the consumer when it frees the tensor
    _release(ctypes.cast(ptr, c_void_p).value or 0)


_CAPSULE_NAME = b"dltensor"
_USED_NAME = b"used_dltensor"
_PyCapsule_Destructor = CFUNCTYPE(None, c_void_p)
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [c_void_p, c_char_p, _PyCapsule_Destructor]
_capsule_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_valid.restype = c_int
_capsule_valid.argtypes = [c_void_p, c_char_p]
_capsule_ptr = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_ptr.restype = c_void_p
_capsule_ptr.argtypes = [c_void_p, c_char_p]


@_PyCapsule_Destructor
def _capsule_destructor(capsule: int) -> None:
    # a capsule never consumed (still named "dltensor") releases its tensor itself;
    # a consumed one was renamed "used_dltensor" and its consumer calls the deleter
    if _capsule_valid(capsule, _CAPSULE_NAME):
        addr = _capsule_ptr(capsule, _CAPSULE_NAME)
        if addr:
            _release(addr)


class DeviceArray:
    """A per-world array of a batch, exported without a copy (see the module doc).

    Attributes:
        name: the ``sapData`` field name (``"qpos"``, ``"xpos"``, ...).
        shape: (nworld, ...) shape.
        dtype: numpy dtype of the elements.
        ptr: address of world 0's first element (device or host memory).
        device_type: :data:`KDL_CUDA` or :data:`KDL_CPU`.
        device_id: CUDA device ordinal (0) or 0 for the CPU.
    """

    def __init__(self, name: str, ptr: int, shape: tuple[int, ...], dtype: np.dtype, device_type: int,
                 keeper: Any, stream: int = 0, stream_wait: Optional[Callable[[int], None]] = None,
                 device_id: int = 0) -> None:
        self.name = name
        self.ptr = int(ptr)
        self.shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)
        self.device_type = device_type
        self.device_id = device_id
        self._keeper = keeper
        self._stream = int(stream)
        self._stream_wait = stream_wait

    @property
    def size(self) -> int:
        """Number of elements."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        """Size in bytes."""
        return self.size * self.dtype.itemsize

    def __repr__(self) -> str:
        where = "cuda" if self.device_type == KDL_CUDA else "cpu"
        return f"sapsim.DeviceArray({self.name}, shape={self.shape}, dtype={self.dtype}, device={where}, ptr={self.ptr:#x})"

    # ---- __cuda_array_interface__ (version 3) --------------------------------------

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """Numba's CUDA array interface, version 3; ``stream`` is sapsim's stream. Only
        for device memory (AttributeError for a CPU batch's array)."""
        if self.device_type != KDL_CUDA:
            raise AttributeError("__cuda_array_interface__: this array is host memory (a CPU batch); "
                                 "use __array_interface__ or DLPack")
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self.ptr, False),
            "version": 3,
            "strides": None,
            "stream": self._stream or None,
        }

    @property
    def __array_interface__(self) -> dict[str, Any]:
        """numpy's array interface, for host memory only (a CPU batch's array)."""
        if self.device_type != KDL_CPU:
            raise AttributeError("__array_interface__: this array is device memory; use DLPack or "
                                 "__cuda_array_interface__")
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False), "version": 3,
                "strides": None}

    # ---- DLPack ----------------------------------------------------------------------

    def __dlpack_device__(self) -> tuple[int, int]:
        """(device type, device id): (2, 0) for CUDA, (1, 0) for the CPU."""
        return (self.device_type, self.device_id)

    def __dlpack__(self, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Optional[bool] = None) -> Any:
        """A ``dltensor`` capsule of this array (a view; DLPack 0.x layout, which every
        consumer accepts). ``stream``: the consumer's CUDA stream as an integer (None
        or 1: the legacy default stream, 2: the per-thread default, -1: no ordering);
        it is made to wait for sapsim's work enqueued so far."""
        if copy:
            raise BufferError("sapsim exports views of its batch only (copy=True was asked)")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"sapsim: the array is on device {self.__dlpack_device__()}, "
                              f"not {tuple(dl_device)}")
        if self.device_type == KDL_CUDA and self._stream_wait is not None and stream != -1:
            self._stream_wait(1 if stream is None else int(stream))
        shape = (c_int64 * max(1, len(self.shape)))(*self.shape)
        mt = _DLManagedTensor()
        mt.dl_tensor.data = self.ptr
        mt.dl_tensor.device = _DLDevice(self.device_type, self.device_id)
        mt.dl_tensor.ndim = len(self.shape)
        code, bits = _DL_DTYPE[self.dtype]
        mt.dl_tensor.dtype = _DLDataType(code, bits, 1)
        mt.dl_tensor.shape = ctypes.cast(shape, POINTER(c_int64))
        mt.dl_tensor.strides = None  # compact row-major
        mt.dl_tensor.byte_offset = 0
        mt.manager_ctx = None
        mt.deleter = _deleter
        addr = ctypes.addressof(mt)
        _LIVE[addr] = (mt, shape, self._keeper)
        return _capsule_new(addr, _CAPSULE_NAME, _capsule_destructor)
