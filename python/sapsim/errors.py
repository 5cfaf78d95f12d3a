"""Exceptions raised by sapsim: one class per ``sapStatus``, each carrying the C
library's message (``sap_lastError``). Classes also derive from the matching
built-in exception (``ValueError``, ``FileNotFoundError``-like ``OSError``, ...), so
generic handlers keep working."""

from __future__ import annotations

__all__ = [
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
    "raise_for_status",
]


class SapsimError(Exception):
    """Base class: a sapsim call failed. ``status`` is the C ``sapStatus`` value."""

    status: int = -1

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status


class ArgumentError(SapsimError, ValueError):
    """A bad argument: null, out of range, wrong size (``SAP_ERR_ARG``)."""

    status = 1


class SceneError(SapsimError, ValueError):
    """The scene file is missing or malformed (``SAP_ERR_SCENE``)."""

    status = 2


class UnsupportedError(SapsimError, ValueError):
    """The scene uses a feature sapsim does not support (``SAP_ERR_UNSUPPORTED``)."""

    status = 3


class OptionError(SapsimError, ValueError):
    """Unknown option name or bad value (``SAP_ERR_OPTION``)."""

    status = 4


class OutOfMemoryError(SapsimError, MemoryError):
    """An allocation failed or the sizes are impossible (``SAP_ERR_MEMORY``)."""

    status = 5


class NonFiniteError(SapsimError, ValueError):
    """A non-finite state, control or force was given (``SAP_ERR_NONFINITE``);
    nothing was changed."""

    status = 6


class CudaError(SapsimError, RuntimeError):
    """A CUDA runtime call failed (``SAP_ERR_CUDA``)."""

    status = 7


class NoDeviceError(SapsimError, RuntimeError):
    """``device="cuda"`` but no usable GPU, or a build without CUDA (``SAP_ERR_NO_DEVICE``)."""

    status = 8


class SapsimIOError(SapsimError, OSError):
    """Writing an output file failed (``SAP_ERR_IO``)."""

    status = 9


_BY_STATUS: dict[int, type[SapsimError]] = {
    cls.status: cls
    for cls in (
        ArgumentError,
        SceneError,
        UnsupportedError,
        OptionError,
        OutOfMemoryError,
        NonFiniteError,
        CudaError,
        NoDeviceError,
        SapsimIOError,
    )
}


def raise_for_status(status: int, message: str) -> None:
    """Raise the exception class of ``status`` with ``message`` (no-op for 0)."""
    if status == 0:
        return
    raise _BY_STATUS.get(status, SapsimError)(message, status)
