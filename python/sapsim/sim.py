"""``Sim``: a batch of replicated worlds stepped by sapsim's C library, with numpy
views of its arrays.

Memory: on the CPU backend every array property is a numpy view of the C batch (no
copy, the same object for the life of the ``Sim``, current after every step).
Writes follow the C API's rules (``sap_set``):

- ``ctrl``, ``qfrc_applied`` and ``xfrc_applied`` are writable views: write actions in place
  (``sim.ctrl[:] = action``); ``step`` checks them first (``sap_checkInputs``) and
  raises ``NonFiniteError`` naming the first bad value, stepping nothing.
- ``qpos``, ``qvel``, ``time``, ``mocap_pos`` and ``mocap_quat`` are :class:`StateArray`
  views: read-only for numpy, but item assignment (``sim.qpos[3, 2] = 0.5``,
  ``sim.qvel[mask] = 0``, ``sim.mocap_pos[:, 0] = target``) goes through ``sap_set``:
  values are validated before anything changes, poses are recomputed after a ``qpos``
  or mocap edit, and a world frozen as non-finite is released (``qpos``, ``qvel``).
- every other array (poses, diagnostics, contacts) is read-only.

On the CUDA backend the same properties return host snapshots (fetched per field,
read-only, ``StateArray`` semantics for the writable fields). Device arrays without a
copy: :meth:`Sim.device_array` and the ``*_device`` properties (``sim.qpos_device``)
export the batch's memory through DLPack and ``__cuda_array_interface__``
(``torch.from_dlpack(sim.qpos_device)``; see :mod:`sapsim.dlpack` for the write
rules: after writing ``qpos``, ``qvel``, ``time`` or mocap poses through such a view,
call :meth:`Sim.commit`). :meth:`Sim.step` takes ``stream=`` to order the steps with
the caller's CUDA stream.

The C batch is freed when the ``Sim`` and every array viewing it are gone.
"""

from __future__ import annotations

import ctypes
import enum
import os
from ctypes import POINTER, byref, c_double, c_int, c_ubyte, c_void_p
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

from . import _capi
from ._capi import check, lib
from .dlpack import KDL_CPU, KDL_CUDA, DeviceArray
from .errors import ArgumentError
from .params import ParamsMixin

__all__ = [
    "Sim",
    "Model",
    "StateArray",
    "WorldFlag",
    "PRESETS",
    "LINE_SEARCHES",
    "FIELDS",
    "cuda_available",
    "cuda_device_name",
]

#: precision presets (``preset=``)
PRESETS: tuple[str, ...] = ("approx32", "approx64", "drake")
#: Newton line searches (``line_search=``)
LINE_SEARCHES: tuple[str, ...] = ("monotone_decay", "armijo_decay", "exact_root", "newton_wolfe")

# sapField ids (include/sapsim/sapsim.h) and the fields sap_set accepts
_FIELD_ID = {
    "qpos": 0,
    "qvel": 1,
    "ctrl": 2,
    "time": 3,
    "qfrc_applied": 4,
    "xpos": 5,
    "xquat": 6,
    "qacc_free": 7,
    "mocap_pos": 8,
    "mocap_quat": 9,
    "sensordata": 10,
    "act": 11,
    "xfrc_applied": 12,
    "cfrc_ext": 13,
    "cvel": 14,
    "cinert": 15,
    "subtree_com": 16,
    "qfrc_actuator": 17,
    "qvel_prev": 18,
    "ctrl_history": 19,
    "tree_asleep": 20,
}
#: fields of ``Sim.get`` / ``Sim.set`` (xpos, xquat, qacc_free, sensordata and the body outputs
#: cfrc_ext, cvel, cinert, subtree_com, qfrc_actuator are read-only). ``qvel_prev`` is the
#: velocity before the last step, the extrapolated warm start's (the default
#: ``warm_start=extrapolate``): set qvel, then qvel_prev, to restore a run bit for bit.
#: ``ctrl_history`` holds the history buffers of delayed actuators and sensors (MuJoCo 4's mjData.history)
#: ``tree_asleep`` (ntree, integers as float64) is MuJoCo 4's mjData.tree_asleep with
#: ``<flag sleep="enable"/>``: < 0 awake, >= 0 asleep (the next tree of the sleeping cycle)
FIELDS: tuple[str, ...] = tuple(_FIELD_ID)
_WRITABLE = ("qpos", "qvel", "ctrl", "time", "qfrc_applied", "mocap_pos", "mocap_quat", "act", "xfrc_applied",
             "qvel_prev", "ctrl_history", "tree_asleep")
#: MuJoCo's com-based outputs, computed with option ``body_outputs=1`` only
BODY_OUTPUTS: tuple[str, ...] = ("cfrc_ext", "cvel", "cinert", "subtree_com", "qfrc_actuator")

_DTYPES = {0: np.float64, 1: np.int32, 2: np.uint8, 3: np.float32}
_CTYPES = {0: ctypes.c_double, 1: ctypes.c_int32, 2: ctypes.c_ubyte, 3: ctypes.c_float}

Scene = Union[str, "os.PathLike[str]"]
WorldSelection = Union[None, Sequence[int], npt.NDArray[Any]]


class WorldFlag(enum.IntFlag):
    """Bits of ``Sim.world_flags`` (``SAP_WORLD_*`` in include/sapsim/data.h)."""

    CONVERGED = 1 << 0  #: the last step's solve met its tolerance
    MAXITER = 1 << 1  #: the Newton loop hit its iteration cap
    LSFAIL = 1 << 2  #: a line search failed
    NONFINITE = 1 << 3  #: the state became non-finite: the world is frozen until reset/set
    CONTACT_OVERFLOW = 1 << 4  #: contacts beyond ncon_max were dropped (deepest kept) and one may push
    BADINPUT = 1 << 5  #: a non-finite control or applied force was rejected
    FACTORFAIL = 1 << 6  #: the Newton matrix had a non-positive pivot


def cuda_available() -> bool:
    """True when the library was built with CUDA and a GPU is usable."""
    return bool(lib.sap_cudaUsable(None, 0))


def cuda_device_name() -> str:
    """The usable GPU's name, or why there is none (e.g. built without CUDA)."""
    buf = ctypes.create_string_buffer(256)
    lib.sap_cudaUsable(buf, len(buf))
    return buf.value.decode("utf-8", "replace")


class _Handle:
    """Owns the C model and batch. Every numpy view keeps a reference, so the memory
    outlives any array that points into it."""

    def __init__(self) -> None:
        self.model = c_void_p()
        self.sim = c_void_p()
        self.nworld = 0
        self.on_gpu = False

    def __del__(self) -> None:
        free_sim, free_model = getattr(lib, "sap_free", None), getattr(lib, "sap_freeModel", None)
        if free_sim is not None and self.sim:
            free_sim(self.sim)
        if free_model is not None and self.model:
            free_model(self.model)
        self.sim = self.model = c_void_p()


def _wrap(address: Optional[int], count: int, typecode: int, shape: tuple[int, ...],
          keeper: _Handle, writable: bool) -> np.ndarray:
    """numpy view of C memory at ``address`` (``count`` elements) shaped ``shape``."""
    dtype = _DTYPES[typecode]
    if count == 0 or not address:
        arr = np.zeros(shape, dtype=dtype)
    else:
        buf = (_CTYPES[typecode] * count).from_address(address)
        buf._sapsim_owner = keeper  # type: ignore[attr-defined]  # the view keeps the batch alive
        arr = np.frombuffer(buf, dtype=dtype).reshape(shape)
    arr.flags.writeable = writable
    return arr


def _world_ids(worlds: WorldSelection, nworld: int) -> Optional[np.ndarray]:
    """World ids as a C int array, None for all worlds; bad ids raise ArgumentError."""
    if worlds is None:
        return None
    ids = np.asarray(worlds)
    if ids.dtype == np.bool_:
        if ids.shape != (nworld,):
            raise ArgumentError(f"a boolean world mask must have shape ({nworld},), got {ids.shape}")
        ids = np.flatnonzero(ids)
    if ids.ndim != 1 or (ids.size and not np.issubdtype(ids.dtype, np.integer)):
        raise ArgumentError(f"worlds must be a 1-D sequence of world ids or a boolean mask, got {worlds!r}")
    bad = ids[(ids < 0) | (ids >= nworld)]
    if bad.size:
        raise ArgumentError(f"world id {int(bad[0])} out of range [0, {nworld})")
    return np.ascontiguousarray(ids, dtype=np.int32)


def _ptr(a: Optional[np.ndarray], ctype: type) -> Any:
    return None if a is None else a.ctypes.data_as(POINTER(ctype))


def _get(h: _Handle, field: str, worlds: WorldSelection = None) -> np.ndarray:
    """``sap_get``: a copy of ``field`` for ``worlds`` (all: None), shape (n, size)."""
    if field not in _FIELD_ID:
        raise ArgumentError(f"unknown field '{field}' (fields: {', '.join(FIELDS)})")
    fid = _FIELD_ID[field]
    ids = _world_ids(worlds, h.nworld)
    n = h.nworld if ids is None else len(ids)
    size = lib.sap_fieldSize(h.sim, fid)
    out = np.empty((n, size), dtype=np.float64)
    if n and size:
        check(lib.sap_get(h.sim, fid, _ptr(ids, c_int), n, _ptr(out, c_double)))
    return out


def _set(h: _Handle, field: str, values: npt.ArrayLike, worlds: WorldSelection = None) -> None:
    """``sap_set``: validate ``values`` ((n, size), broadcast) and write them; nothing
    changes when any value is bad."""
    if field not in _FIELD_ID:
        raise ArgumentError(f"unknown field '{field}' (fields: {', '.join(FIELDS)})")
    fid = _FIELD_ID[field]
    ids = _world_ids(worlds, h.nworld)
    n = h.nworld if ids is None else len(ids)
    size = lib.sap_fieldSize(h.sim, fid)
    try:
        buf = np.ascontiguousarray(np.broadcast_to(np.asarray(values, dtype=np.float64), (n, size)))
    except ValueError as e:
        raise ArgumentError(
            f"{field}: values of shape {np.shape(values)} do not fit ({n}, {size}): {e}") from None
    if n and size:
        check(lib.sap_set(h.sim, fid, _ptr(ids, c_int), n, _ptr(buf, c_double)))


def _flat_poses(value: npt.ArrayLike) -> np.ndarray:
    """Mocap poses ((nworld,) nmocap, 3 or 4) as sap_set's rows ((nworld,) nmocap * 3 or 4)."""
    a = np.asarray(value, dtype=np.float64)
    return a.reshape(a.shape[:-2] + (-1,)) if a.ndim >= 2 else a


def _stream_handle(stream: Any) -> Optional[c_void_p]:
    """A CUDA stream given as an integer, a torch or cupy stream object (``cuda_stream``
    or ``ptr``) or None (NULL: the legacy default stream, or the whole device)."""
    if stream is None:
        return None
    for attr in ("cuda_stream", "ptr"):
        if hasattr(stream, attr):
            stream = getattr(stream, attr)
            break
    if not isinstance(stream, (int, np.integer)) or isinstance(stream, bool) or stream < 0:
        raise ArgumentError(f"stream must be a CUDA stream handle (integer) or a stream object, got {stream!r}")
    return c_void_p(int(stream)) if stream else None


class StateArray(np.ndarray):
    """Array of a state field (``qpos``, ``qvel``, ``time``, ``mocap_pos``,
    ``mocap_quat``; ``ctrl`` and ``qfrc_applied`` on the GPU), shape (nworld, n),
    (nworld, nmocap, 3 or 4) for the mocap poses, or (nworld,) for ``time``.

    On the CPU its memory is the C batch's (a view, current after every step). numpy
    cannot write it directly; item assignment instead goes through ``sap_set``: the
    new values of the worlds the index touches are validated (a non-finite value
    raises :class:`~sapsim.NonFiniteError`, a zero mocap quaternion
    :class:`~sapsim.ArgumentError`, and nothing changes), written, and poses are
    recomputed after a ``qpos`` or mocap edit. Slices and results of arithmetic are plain
    read-only or new ``numpy.ndarray`` objects.
    """

    _sapsim_handle: Optional[_Handle]
    _sapsim_field: str

    def __new__(cls, base: np.ndarray, handle: _Handle, field: str) -> "StateArray":
        obj = base.view(cls)
        obj._sapsim_handle = handle
        obj._sapsim_field = field
        obj.flags.writeable = False
        return obj

    def __array_finalize__(self, obj: Optional[np.ndarray]) -> None:
        # views derived from this one (reshape, transpose, ...) are not bound to the batch
        self._sapsim_handle = None
        self._sapsim_field = ""

    def __array_wrap__(self, arr: np.ndarray, context: Any = None, return_scalar: bool = False) -> Any:
        arr = arr.view(np.ndarray)
        return arr[()] if return_scalar else arr

    def __getitem__(self, key: Any) -> Any:
        item = super().__getitem__(key)
        return item.view(np.ndarray) if isinstance(item, np.ndarray) else item

    def __setitem__(self, key: Any, value: Any) -> None:
        h = self._sapsim_handle
        if h is None:  # a derived view: numpy raises its read-only error
            super().__setitem__(key, value)
            return
        field = self._sapsim_field
        rows = _get(h, field)  # the current values, also on the GPU
        new = rows.copy()
        shaped = new.reshape(self.shape)  # a view of new: (nworld,) for time
        shaped[key] = value
        # the worlds the index touched: world ids laid out like the array, indexed alike
        ids = np.broadcast_to(np.arange(h.nworld).reshape((-1,) + (1,) * (shaped.ndim - 1)), shaped.shape)
        touched = np.unique(np.asarray(ids[key]))
        if touched.size:
            _set(h, field, new[touched], touched)


class Model:
    """Sizes, names and arrays of the model a :class:`Sim` runs (its own copy, with
    the scene's contact material applied). Arrays are read-only numpy views."""

    def __init__(self, handle: _Handle, address: int) -> None:
        self._handle = handle
        self._address = address
        sizes = {
            "nq": "qpos0",
            "nv": "dof_damping",
            "nbody": "body_mass",
            "njnt": "jnt_type",
            "ngeom": "geom_type",
            "nu": "actuator_kind",
            "nkey": "key_time",
            "ntendon": "tendon_adr",
            "nsensor": "sensor_type",
            "neq": "eq_type",
        }
        for size, array in sizes.items():
            setattr(self, size, self.array(array).shape[0])
        self.nmocap = int(np.count_nonzero(self.array("body_mocapid") >= 0))
        #: simulation time step h (s), from the scene or the ``timestep`` option
        self.timestep: float = float(self.array("timestep")[0])
        #: world gravity (m/s^2)
        self.gravity: np.ndarray = self.array("gravity")
        self.body_names: list[str] = self._names("name_bodyadr")
        self.joint_names: list[str] = self._names("name_jntadr")
        self.geom_names: list[str] = self._names("name_geomadr")
        self.actuator_names: list[str] = self._names("name_actuatoradr")
        self.key_names: list[str] = self._names("name_keyadr")
        self.sensor_names: list[str] = self._names("name_sensoradr")
        #: values of all sensors per world (MuJoCo's nsensordata)
        self.nsensordata: int = int(self.array("sensor_dim").sum())
        #: activation states per world (MuJoCo's na: one per actuator with dynamics)
        self.na: int = int(self.array("actuator_actnum").sum())

    nq: int  #: generalized coordinates
    nv: int  #: degrees of freedom
    nbody: int  #: bodies, including the world body 0
    njnt: int  #: joints
    ngeom: int  #: geoms
    nu: int  #: actuators
    nkey: int  #: keyframes
    ntendon: int  #: fixed tendons
    nmocap: int  #: mocap bodies (``body_mocapid`` >= 0)
    nsensor: int  #: sensors (MuJoCo's order; ``sensor_adr``, ``sensor_dim`` give the layout)
    neq: int  #: equality constraints, active at reset or not (``eq_active0``)

    def sensor(self, name: Union[int, str]) -> slice:
        """The columns of sensor ``name`` (or id) in ``Sim.sensordata``:
        ``slice(sensor_adr, sensor_adr + sensor_dim)``, MuJoCo's layout."""
        if isinstance(name, str):
            if name not in self.sensor_names:
                raise ArgumentError(f"no sensor named '{name}' (sensors: {[n for n in self.sensor_names if n]})")
            i = self.sensor_names.index(name)
        elif isinstance(name, (int, np.integer)) and 0 <= name < self.nsensor:
            i = int(name)
        else:
            raise ArgumentError(f"sensor {name!r} does not exist (the scene has {self.nsensor})")
        adr = int(self.array("sensor_adr")[i])
        return slice(adr, adr + int(self.array("sensor_dim")[i]))

    def array(self, name: str) -> np.ndarray:
        """A model array by its ``sapModel`` field name (``"body_mass"``,
        ``"actuator_ctrlrange"``, ``"key_qpos"``, ...), flat and read-only."""
        count, typecode = c_int(), c_int()
        addr = lib.sap_modelArray(self._address, name.encode(), byref(count), byref(typecode))
        if not addr:
            raise ArgumentError(_capi.last_error())
        return _wrap(addr, count.value, typecode.value, (count.value,), self._handle, False)

    def _names(self, adr_name: str) -> list[str]:
        names = self.array("names").tobytes()
        return [names[a : names.index(b"\0", a)].decode() for a in self.array(adr_name)]

    @property
    def ctrl_range(self) -> np.ndarray:
        """(nu, 2) control range; (-inf, inf) for actuators without ``ctrllimited``."""
        r = self.array("actuator_ctrlrange").reshape(self.nu, 2).copy()
        r[self.array("actuator_ctrllimited") == 0] = (-np.inf, np.inf)
        return r

    def keyframe(self, key: Union[int, str]) -> int:
        """Id of a keyframe given by id or name; ArgumentError if it does not exist."""
        if isinstance(key, str):
            if key not in self.key_names:
                raise ArgumentError(f"no keyframe named '{key}' (keyframes: {self.key_names})")
            return self.key_names.index(key)
        if isinstance(key, (int, np.integer)) and 0 <= key < self.nkey:
            return int(key)
        raise ArgumentError(f"keyframe {key!r} does not exist (the scene has {self.nkey})")

    def __repr__(self) -> str:
        return (f"sapsim.Model(nq={self.nq}, nv={self.nv}, nu={self.nu}, nbody={self.nbody}, "
                f"ngeom={self.ngeom}, nkey={self.nkey}, timestep={self.timestep})")


def _option_text(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _parse_value(text: str) -> Union[int, float, str]:
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


class Sim(ParamsMixin):
    """A batch of ``nworld`` replicated worlds of one scene, stepped together.
    Per-world physical parameters (domain randomization): :meth:`set_param`,
    :meth:`get_param`, :meth:`randomize`, :meth:`reset_params` (sapsim.params).

    Args:
        scene: path of an MJCF or URDF file, or the scene's XML text (a string
            starting with ``<``; asset files it names resolve relative to the
            working directory).
        nworld: number of worlds.
        device: ``"cpu"``, ``"cuda"`` (a GPU, or :class:`~sapsim.NoDeviceError`) or
            ``"auto"`` (a GPU when one is usable).
        preset: precision preset, one of :data:`PRESETS`.
        keyframe: initial state of every world: a keyframe id or name, or None for
            the model's reference configuration (qpos0, zero velocity and control).
        **options: any sapsim option (README "Options"), e.g. ``line_search=
            "exact_root"``, ``timestep=0.002``, ``threads=4``, ``contacts=False``.
            Unknown names and bad values raise :class:`~sapsim.OptionError`.

    Raises:
        SceneError, UnsupportedError: the scene cannot be loaded or uses a feature
            sapsim does not support (the message names it).
        OptionError, ArgumentError, NoDeviceError: bad options, sizes or device.
    """

    def __init__(self, scene: Scene, nworld: int = 1, device: str = "cpu", preset: str = "approx32",
                 keyframe: Union[int, str, None] = None, **options: Any) -> None:
        h = _Handle()
        if isinstance(scene, str) and scene.lstrip().startswith("<"):
            check(lib.sap_loadModelString(scene.encode(), byref(h.model)))
        else:
            check(lib.sap_loadModel(os.fsencode(scene), byref(h.model)))
        opt = _capi.new_options()
        for key, value in (("preset", preset), ("device", device), *options.items()):
            check(lib.sap_optionsSet(opt, key.encode(), _option_text(value).encode()))
        if not isinstance(nworld, (int, np.integer)) or isinstance(nworld, bool):
            raise ArgumentError(f"nworld must be an integer, got {nworld!r}")
        if not 1 <= nworld < 2**31:
            raise ArgumentError(f"nworld {nworld} out of range (at least 1)")
        check(lib.sap_create(h.model, opt, int(nworld), byref(h.sim)))
        h.nworld = int(nworld)
        h.on_gpu = bool(lib.sap_onGPU(h.sim))
        self._h = h
        self._model = Model(h, lib.sap_model(h.sim))
        self._views: dict[str, np.ndarray] = {}
        self._body_outputs = str(self.options.get("body_outputs", 0)) in ("1", "on", "true")
        given = options.get("timestep", options.get("dt"))
        self._timestep = float(given) if given is not None else self._model.timestep
        if keyframe is not None:
            self.reset(keyframe)

    # ---- sizes and settings -------------------------------------------------------

    @property
    def nworld(self) -> int:
        """Number of worlds."""
        return self._h.nworld

    @property
    def model(self) -> Model:
        """The model: sizes, names, arrays."""
        return self._model

    @property
    def nq(self) -> int:
        """Generalized coordinates per world."""
        return self._model.nq

    @property
    def nv(self) -> int:
        """Degrees of freedom per world."""
        return self._model.nv

    @property
    def nu(self) -> int:
        """Actuators (controls) per world."""
        return self._model.nu

    @property
    def na(self) -> int:
        """Actuator activation states per world (MuJoCo's ``na``)."""
        return self._model.na

    @property
    def timestep(self) -> float:
        """Time step h (s): the ``timestep`` option when given, else the scene's."""
        return self._timestep

    @property
    def on_gpu(self) -> bool:
        """True when the batch runs on the CUDA backend."""
        return self._h.on_gpu

    @property
    def device_name(self) -> str:
        """The device the batch runs on, e.g. ``"cpu (8 threads)"`` or a GPU's name."""
        return lib.sap_deviceName(self._h.sim).decode()

    @property
    def bytes_per_world(self) -> int:
        """Memory of one world's arrays (bytes)."""
        return int(lib.sap_bytesPerWorld(self._h.sim))

    @property
    def bytes_shared(self) -> int:
        """Memory held beside the worlds' arrays (bytes): on the CPU the solve's Newton matrix
        and factor, one buffer per thread grown to the largest islands stepped so far."""
        return int(lib.sap_bytesShared(self._h.sim))

    @property
    def options(self) -> dict[str, Union[int, float, str]]:
        """The expanded options (preset knobs resolved) as ``{key: value}``; reals are
        printed by the C library as text that reads back to the same double."""
        buf = ctypes.create_string_buffer(8192)
        lib.sap_optionsDescribe(lib.sap_options(self._h.sim), buf, len(buf))
        pairs = (line.split("=", 1) for line in buf.value.decode().splitlines() if "=" in line)
        return {k: _parse_value(v) for k, v in pairs}

    def timers(self) -> dict[str, float]:
        """Per-stage wall time (s) of the last :meth:`step` call."""
        t = _capi.SapTimers()
        lib.sap_timers(self._h.sim, byref(t))
        return {name: getattr(t, name) for name, _ in _capi.SapTimers._fields_}

    # ---- stepping and resets ------------------------------------------------------

    def step(self, n: int = 1, stream: Any = None) -> None:
        """Advance every world by ``n`` steps.

        With ``stream`` (GPU batches: a ``torch.cuda.Stream``, an object with a
        ``cuda_stream`` attribute, or an integer ``cudaStream_t``) the steps are
        enqueued after the work already on that stream, later work on it sees their
        results, and the call returns without waiting (``sap_stepStream``); without
        it the call returns when the steps are done. On the CPU ``stream`` is ignored.

        Raises:
            NonFiniteError: a control or applied force written in place is not
                finite; the message names it, and no world was stepped.
        """
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
            raise ArgumentError(f"step: n must be a non-negative integer, got {n!r}")
        handle = _stream_handle(stream)
        check(lib.sap_checkInputs(self._h.sim))
        if stream is not None:
            # the caller's stream: ordered by events, no host wait (CPU: a plain step)
            check(lib.sap_stepStream(self._h.sim, int(n), handle))
            return
        check(lib.sap_step(self._h.sim, int(n)))

    def commit(self, worlds: WorldSelection = None, stream: Any = None) -> None:
        """Declare state written in place through :meth:`device_array` views (or
        DLPack views of the host arrays): ``qpos``, ``qvel``, ``time``, ``mocap_pos``,
        ``mocap_quat``. Call it after such writes, before the next step, reset, get
        or set (``ctrl`` and ``qfrc_applied`` need no commit: a step refuses a world
        whose inputs are not finite). It waits for ``stream`` (the stream the writes
        were enqueued on: a ``torch.cuda.Stream``, an object with ``cuda_stream``, or
        an integer handle; None: the whole device), checks the worlds' state as
        :meth:`set` does, recomputes their poses and releases worlds frozen as
        non-finite.

        Args:
            worlds: the worlds written (boolean mask or ids); None: all.
            stream: see above.

        Raises:
            NonFiniteError: a value is not finite (the message names it). A world with
                a bad state is frozen (``WorldFlag.NONFINITE``: steps leave it as it
                is) until a reset, a valid set or commit; the other worlds are
                committed. A bad ``ctrl`` or ``qfrc_applied`` is named, freezes nothing.
            ArgumentError: a zero mocap quaternion (its world is frozen).
        """
        ids = _world_ids(worlds, self.nworld)
        mask = None
        if ids is not None:
            mask = np.zeros(self.nworld, dtype=np.uint8)
            mask[ids] = 1
        check(lib.sap_commit(self._h.sim, _ptr(mask, c_ubyte), _stream_handle(stream)))

    def stream_wait(self, stream: Any) -> None:
        """Make ``stream`` (a torch/cupy stream or an integer handle) wait, without a
        host wait, for all the work sapsim has enqueued so far (``sap_streamWait``):
        call it before reading device views on a stream of your own after a reset,
        set or commit (their pose kernels run on sapsim's stream). Steps taken with
        ``step(stream=...)`` need it not. A no-op on the CPU."""
        check(lib.sap_streamWait(self._h.sim, _stream_handle(stream)))

    def device_array(self, name: str) -> DeviceArray:
        """A per-world array of the batch by its ``sapData`` name (``"qpos"``,
        ``"ctrl"``, ``"xpos"``, ``"world_flags"``, ``"con_dist"``, ...) exported without
        a copy: device memory on the GPU, host memory on the CPU, shaped like the
        numpy properties ((nworld, n), (nworld, nbody, 3), (nworld,)). Hand it to
        ``torch.from_dlpack``, ``jax.dlpack.from_dlpack``, ``numpy.from_dlpack`` (host)
        or ``torch.as_tensor`` / cupy (``__cuda_array_interface__``). The address is
        fixed for the life of the ``Sim``; an export keeps the batch alive. Write
        rules: :mod:`sapsim.dlpack` (``qpos`` and other state: :meth:`commit`)."""
        count, typecode = c_int(), c_int()
        if self.on_gpu:
            addr = lib.sap_deviceArray(self._h.sim, name.encode(), byref(count), byref(typecode))
        else:
            addr = lib.sap_dataArray(self._h.sim, name.encode(), byref(count), byref(typecode))
        if not addr:
            raise ArgumentError(_capi.last_error())
        n = count.value
        tails = {"xpos": (self._model.nbody, 3), "xquat": (self._model.nbody, 4),
                 "mocap_pos": (self._model.nmocap, 3), "mocap_quat": (self._model.nmocap, 4)}
        tail = tails.get(name, () if n == 1 else (n,))
        h = self._h
        if not self.on_gpu:
            return DeviceArray(name, addr, (self.nworld,) + tail, np.dtype(_DTYPES[typecode.value]), KDL_CPU, h)

        def wait(consumer: int) -> None:
            check(lib.sap_streamWait(h.sim, c_void_p(consumer) if consumer else None))

        return DeviceArray(name, addr, (self.nworld,) + tail, np.dtype(_DTYPES[typecode.value]), KDL_CUDA, h,
                           lib.sap_cudaStream(h.sim) or 0, wait)

    def reset(self, keyframe: Union[int, str, None] = None, worlds: WorldSelection = None) -> None:
        """Reset worlds to a keyframe (id or name) or, with None, to the model's
        reference state (qpos0, zero velocity, control, applied force and time).

        Args:
            keyframe: keyframe id or name, or None.
            worlds: a boolean mask of shape (nworld,) or a sequence of world ids;
                None resets every world.
        """
        key = -1 if keyframe is None else self._model.keyframe(keyframe)
        ids = _world_ids(worlds, self.nworld)
        mask = None
        if ids is not None:
            mask = np.zeros(self.nworld, dtype=np.uint8)
            mask[ids] = 1
        check(lib.sap_reset(self._h.sim, key, _ptr(mask, c_ubyte)))

    # ---- copies through sap_get / sap_set -----------------------------------------

    def get(self, field: str, worlds: WorldSelection = None) -> np.ndarray:
        """A copy of ``field`` (one of :data:`FIELDS`) for ``worlds`` (None: all),
        shape (len(worlds), size); ``qacc_free`` is (v* - v) / h of the last step."""
        return _get(self._h, field, worlds)

    def set(self, field: str, values: npt.ArrayLike, worlds: WorldSelection = None) -> None:
        """Write ``field`` (qpos, qvel, ctrl, time, qfrc_applied, mocap_pos, mocap_quat)
        of ``worlds`` (None: all) from ``values`` (broadcast to (len(worlds), size)).
        Every value is checked first: a non-finite one raises NonFiniteError (a zero
        mocap quaternion ArgumentError) and changes nothing. Poses are recomputed after
        a qpos or mocap edit."""
        _set(self._h, field, values, worlds)

    # ---- array views ----------------------------------------------------------------

    def _count(self, name: str) -> tuple[int, int, int]:
        """(address, elements per world, type code) of a per-world host array."""
        count, typecode = c_int(), c_int()
        addr = lib.sap_dataArray(self._h.sim, name.encode(), byref(count), byref(typecode))
        if not addr:
            raise ArgumentError(_capi.last_error())
        return addr, count.value, typecode.value

    def _raw(self, name: str, tail: Optional[tuple[int, ...]] = None, writable: bool = False) -> np.ndarray:
        """View of a per-world host array, shape (nworld,) + tail; by default
        (nworld,) for one element per world, else (nworld, count)."""
        addr, count, typecode = self._count(name)
        if tail is None:
            tail = () if count == 1 else (count,)
        return _wrap(addr, self.nworld * count, typecode, (self.nworld,) + tail, self._h, writable)

    def _field(self, name: str) -> np.ndarray:
        """The array of a sap_get/sap_set field: a cached view on the CPU, a snapshot
        on the GPU."""
        size = lib.sap_fieldSize(self._h.sim, _FIELD_ID[name])
        nbody = self._model.nbody
        nmocap = self._model.nmocap
        shape = {"xpos": (nbody, 3), "xquat": (nbody, 4), "time": (), "mocap_pos": (nmocap, 3),
                 "mocap_quat": (nmocap, 4), "xfrc_applied": (nbody, 6), "cfrc_ext": (nbody, 6),
                 "cvel": (nbody, 6), "cinert": (nbody, 10), "subtree_com": (nbody, 3)}.get(name, (size,))
        if name in BODY_OUTPUTS and not self._body_outputs:
            raise ArgumentError(f"Sim.{name} is computed only with option body_outputs=1 "
                                f"(Sim(..., body_outputs=1))")
        if self.on_gpu:
            arr = _get(self._h, name).reshape((self.nworld,) + shape)
            if name in _WRITABLE:
                return StateArray(arr, self._h, name)
            arr.flags.writeable = False
            return arr
        view = self._views.get(name)
        if view is None:
            if name in ("ctrl", "qfrc_applied", "xfrc_applied"):
                view = self._raw(name, shape, writable=True)
            elif name in _WRITABLE:
                view = StateArray(self._raw(name, shape), self._h, name)
            else:
                view = self._raw(name, shape)
            self._views[name] = view
        return view

    def array(self, name: str) -> np.ndarray:
        """Read-only array of any per-world ``sapData`` field by name (``"qfrc_bias"``,
        ``"geom_xpos"``, ``"con_dist"``, ...), shape (nworld, count) or (nworld,).
        A view on the CPU; a snapshot (the whole batch is synchronised) on the GPU."""
        if self.on_gpu:
            check(lib.sap_sync(self._h.sim))
            return np.array(self._raw(name))
        return self._raw(name)

    @property
    def qpos(self) -> StateArray:
        """(nworld, nq) float64 positions (MuJoCo layout; quaternions w-x-y-z).
        Assignment goes through ``sap_set`` (validated, poses recomputed)."""
        return self._field("qpos")  # type: ignore[return-value]

    @qpos.setter
    def qpos(self, value: npt.ArrayLike) -> None:
        _set(self._h, "qpos", value)

    @property
    def qvel(self) -> StateArray:
        """(nworld, nv) float64 velocities (free joint: world linear velocity, body
        angular velocity). Assignment goes through ``sap_set``."""
        return self._field("qvel")  # type: ignore[return-value]

    @qvel.setter
    def qvel(self, value: npt.ArrayLike) -> None:
        _set(self._h, "qvel", value)

    @property
    def time(self) -> StateArray:
        """(nworld,) float64 simulated time. Assignment goes through ``sap_set``."""
        return self._field("time")  # type: ignore[return-value]

    @time.setter
    def time(self, value: npt.ArrayLike) -> None:
        _set(self._h, "time", np.reshape(value, (-1, 1)) if np.ndim(value) else value)

    @property
    def ctrl(self) -> np.ndarray:
        """(nworld, nu) float64 controls. On the CPU a writable view: write in place
        (``sim.ctrl[:] = a``); :meth:`step` rejects non-finite values. Assigning the
        property (``sim.ctrl = a``) validates at once through ``sap_set``."""
        return self._field("ctrl")

    @ctrl.setter
    def ctrl(self, value: npt.ArrayLike) -> None:
        _set(self._h, "ctrl", value)

    @property
    def act(self) -> StateArray:
        """(nworld, na) float64 actuator activations (MuJoCo's ``mjData.act``; layout
        ``actuator_actadr``): state of the integrator, filter and muscle actuators, 0 after
        a reset (or the keyframe's ``act``). Assignment goes through ``sap_set``
        (non-finite values refused)."""
        return self._field("act")  # type: ignore[return-value]

    @act.setter
    def act(self, value: npt.ArrayLike) -> None:
        _set(self._h, "act", value)

    @property
    def qfrc_applied(self) -> np.ndarray:
        """(nworld, nv) float64 user generalized forces; written like :attr:`ctrl`."""
        return self._field("qfrc_applied")

    @qfrc_applied.setter
    def qfrc_applied(self, value: npt.ArrayLike) -> None:
        _set(self._h, "qfrc_applied", value)

    @property
    def xfrc_applied(self) -> np.ndarray:
        """(nworld, nbody, 6) float64 user Cartesian force (0:3) and torque (3:6) on each
        body at its centre of mass, world frame (MuJoCo's ``xfrc_applied``); mapped to
        generalized forces beside :attr:`qfrc_applied`, written like :attr:`ctrl`, cleared by
        a reset."""
        return self._field("xfrc_applied")

    @xfrc_applied.setter
    def xfrc_applied(self, value: npt.ArrayLike) -> None:
        a = np.asarray(value, dtype=np.float64)  # ((nworld,) nbody, 6) as sap_set's rows; scalars broadcast
        _set(self._h, "xfrc_applied", a.reshape(a.shape[:-2] + (-1,)) if a.ndim >= 2 else a)

    @property
    def cfrc_ext(self) -> np.ndarray:
        """(nworld, nbody, 6) float64 external wrench on each body, [torque; force] about the
        subtree com of its tree's root (MuJoCo's ``cfrc_ext`` after ``mj_rnePostConstraint``):
        the contact forces of the last step (SAP impulse / h) plus ``xfrc_applied``; 0 after a
        reset. Needs option ``body_outputs=1``."""
        return self._field("cfrc_ext")

    @property
    def cvel(self) -> np.ndarray:
        """(nworld, nbody, 6) float64 body velocities [angular; linear] at the subtree com of
        the root (MuJoCo's ``cvel``), of the last step's start state (or the state after a reset
        or edit). Needs option ``body_outputs=1``."""
        return self._field("cvel")

    @property
    def cinert(self) -> np.ndarray:
        """(nworld, nbody, 10) float64 body inertias about the subtree com of the root
        (MuJoCo's ``cinert``: Ixx Iyy Izz Ixy Ixz Iyz, m c, m), as :attr:`cvel`. Needs option
        ``body_outputs=1``."""
        return self._field("cinert")

    @property
    def subtree_com(self) -> np.ndarray:
        """(nworld, nbody, 3) float64 centre of mass of each body's subtree (MuJoCo's
        ``subtree_com``), as :attr:`cvel`. Needs option ``body_outputs=1``."""
        return self._field("subtree_com")

    @property
    def qfrc_actuator(self) -> np.ndarray:
        """(nworld, nv) float64 actuator generalized forces of the last step (MuJoCo's
        ``qfrc_actuator``; position/velocity actuators solved as SAP drive rows: their impulse /
        h); after a reset or state edit the actuator laws at the state. Needs option
        ``body_outputs=1``."""
        return self._field("qfrc_actuator")

    @property
    def mocap_pos(self) -> StateArray:
        """(nworld, nmocap, 3) float64 world positions of the mocap bodies (mocap id
        order, ``Model.array("body_mocapid")``). Assignment goes through ``sap_set``
        (validated, poses recomputed); a reset restores the compiled pose or the
        keyframe's ``mpos``."""
        return self._field("mocap_pos")  # type: ignore[return-value]

    @mocap_pos.setter
    def mocap_pos(self, value: npt.ArrayLike) -> None:
        _set(self._h, "mocap_pos", _flat_poses(value))

    @property
    def mocap_quat(self) -> StateArray:
        """(nworld, nmocap, 4) float64 world orientations (w-x-y-z) of the mocap
        bodies. Assignment goes through ``sap_set``: finite, non-zero quaternions,
        normalised when used (the stored values stay as written)."""
        return self._field("mocap_quat")  # type: ignore[return-value]

    @mocap_quat.setter
    def mocap_quat(self, value: npt.ArrayLike) -> None:
        _set(self._h, "mocap_quat", _flat_poses(value))

    @property
    def eq_active(self) -> np.ndarray:
        """(nworld, neq) bool: which equality constraints take part in each world
        (MuJoCo's ``mjData.eq_active``; model order, ``Model.array("eq_type")``). A new
        array: write through assignment (``sim.eq_active = a``, broadcast to (nworld,
        neq)) or :meth:`set_eq_active`. A reset restores ``eq_active0`` (MJCF
        ``active``)."""
        n = self.nworld * self._model.neq
        buf = np.empty(n, dtype=np.int32)
        if n:
            check(lib.sap_getEqActive(self._h.sim, _ptr(buf, c_int)))
        return buf.reshape(self.nworld, self._model.neq) != 0

    @eq_active.setter
    def eq_active(self, value: npt.ArrayLike) -> None:
        shape = (self.nworld, self._model.neq)
        try:
            buf = np.ascontiguousarray(np.broadcast_to(np.asarray(value), shape)).astype(np.int32)
        except ValueError as e:
            raise ArgumentError(f"eq_active: values of shape {np.shape(value)} do not fit {shape}: {e}") from None
        if buf.size:
            check(lib.sap_setEqActiveArray(self._h.sim, _ptr(buf, c_int)))

    def mass_matrix(self, world: int = 0) -> np.ndarray:
        """(nv, nv) world ``world``'s A = M + diag(armature) + h diag(damping) of the last
        step, dense (MuJoCo's ``mj_fullM`` plus armature and h times the damping slope). The
        batch stores A by dof-tree blocks (``array("qA")``, ``Model.array("dof_Aadr")``);
        this expands one world's (``sap_getMassMatrix``), zeros between trees. A new array."""
        nv = self.nv
        buf = np.empty(nv * nv, dtype=np.float64)
        check(lib.sap_getMassMatrix(self._h.sim, int(world), _ptr(buf, c_double)))
        return buf.reshape(nv, nv)

    def set_eq_active(self, eq: int, active: bool, worlds: WorldSelection = None) -> None:
        """Switch equality constraint ``eq`` (model order; -1: all) on or off in
        ``worlds`` (None: all). Out-of-range indices raise :class:`ArgumentError`
        naming them, and change nothing."""
        ids = _world_ids(worlds, self.nworld)
        for w in [-1] if ids is None else [int(i) for i in ids]:
            check(lib.sap_setEqActive(self._h.sim, w, int(eq), 1 if active else 0))

    @property
    def xpos(self) -> np.ndarray:
        """(nworld, nbody, 3) float64 body frame positions (read-only). As MuJoCo's
        ``mj_step`` leaves them, these are the poses of the state a step started from
        (or of the last reset or qpos write), one step behind ``qpos``."""
        return self._field("xpos")

    @property
    def xquat(self) -> np.ndarray:
        """(nworld, nbody, 4) float64 body frame orientations, w-x-y-z (read-only);
        as :attr:`xpos`, those of the state the last step started from."""
        return self._field("xquat")

    @property
    def sensordata(self) -> np.ndarray:
        """(nworld, nsensordata) float64 sensor values (read-only), MuJoCo's layout and
        order (``model.sensor(name)`` gives a sensor's columns). Position and velocity
        sensors describe the current state (after a step, a reset or a state write);
        acceleration sensors (accelerometer, force, torque, touch, actuatorfrc, ...) the
        last step: its solved acceleration (v' - v) / h and contact forces (impulses / h),
        0 after a reset. MuJoCo's ``mj_step`` instead leaves ``sensordata`` of the state the
        step started from. A view on the CPU, a snapshot on the GPU."""
        return self._field("sensordata")

    def sensor(self, name: Union[int, str]) -> np.ndarray:
        """(nworld, sensor_dim) values of one sensor by name or id (see :attr:`sensordata`)."""
        return self.sensordata[:, self._model.sensor(name)]

    def _diag(self, name: str) -> np.ndarray:
        if self.on_gpu:
            info = (_capi.SapWorldInfo * self.nworld)()
            check(lib.sap_worldInfo(self._h.sim, None, self.nworld, info))
            key = {"world_flags": "flags"}.get(name, name)
            arr = np.array([getattr(i, key) for i in info], dtype=np.int32)
            arr.flags.writeable = False
            return arr
        view = self._views.get(name)
        if view is None:
            view = self._views[name] = self._raw(name)
        return view

    @property
    def world_flags(self) -> np.ndarray:
        """(nworld,) int32 :class:`WorldFlag` bits of the last step (read-only)."""
        return self._diag("world_flags")

    @property
    def converged(self) -> np.ndarray:
        """(nworld,) bool: the last step's solve met its tolerance (a new array)."""
        return (self.world_flags & WorldFlag.CONVERGED) != 0

    @property
    def ncon(self) -> np.ndarray:
        """(nworld,) int32 live contacts of the last step (read-only)."""
        return self._diag("ncon")

    @property
    def ncon_dropped(self) -> np.ndarray:
        """(nworld,) int32 contacts dropped by the capacity ncon_max (read-only)."""
        return self._diag("ncon_dropped")

    @property
    def band_redo(self) -> np.ndarray:
        """(nworld,) int32: 1 where option ``contact_band=speed`` redid the last step's collision
        and solve with the whole speculative band (a geom outran its speed budget); all 0 without
        that option (read-only)."""
        if str(self.options.get("contact_band", "margin")) != "speed":
            arr = np.zeros(self.nworld, dtype=np.int32)
            arr.flags.writeable = False
            return arr
        return self._diag("band_redo")

    @property
    def newton_iter(self) -> np.ndarray:
        """(nworld,) int32 Newton iterations of the last step (read-only)."""
        return self._diag("newton_iter")

    @property
    def ls_iter(self) -> np.ndarray:
        """(nworld,) int32 line-search iterations of the last step (read-only)."""
        return self._diag("ls_iter")

    @property
    def nfactor(self) -> np.ndarray:
        """(nworld,) int32 factorizations of the last step (read-only)."""
        return self._diag("nfactor")

    @property
    def ncon_max(self) -> int:
        """Per-world contact capacity (the contact arrays' second dimension)."""
        return self._count("con_dist")[1]

    def contacts(self) -> dict[str, np.ndarray]:
        """The contact arrays of the last step (entries [w, :ncon[w]] are live):
        ``geom`` (nworld, ncon_max, 2) int32 geom ids; ``pos`` (nworld, ncon_max, 2, 3)
        witness points on geom 0 and geom 1; ``frame`` (nworld, ncon_max, 3, 3) rows
        t1, t2, n (n from geom 0 to geom 1); ``dist`` (nworld, ncon_max) signed
        distance; ``mu``, ``k``, ``taud`` (nworld, ncon_max) pair materials.
        Read-only views on the CPU, snapshots on the GPU."""
        c = self.ncon_max
        shapes = {"geom": (c, 2), "pos": (c, 2, 3), "frame": (c, 3, 3), "dist": (c,), "mu": (c,),
                  "k": (c,), "taud": (c,)}
        out = {}
        if self.on_gpu:
            check(lib.sap_sync(self._h.sim))
        for key, tail in shapes.items():
            arr = self._raw("con_" + key, tail)
            out[key] = np.array(arr) if self.on_gpu else arr
        return out

    # ---- the simulation loop (sap_run) and step retry -------------------------------------

    def run(self, max_steps: Optional[int] = None, end_time: Optional[float] = None,
            wall_time: Optional[float] = None, before: Optional[Callable[..., Any]] = None,
            after: Optional[Callable[..., Any]] = None, stop_flags: int = 0, frame_every: int = 0,
            frames: Union[str, "os.PathLike[str]", None] = None, frames_format: str = "binary",
            frame_fn: Optional[Callable[["Sim", int], None]] = None) -> dict[str, Any]:
        """Run until a limit (``sap_run``, seed 000's simulation loop) and return its summary.

        Limits (any number; at least one): ``max_steps`` (steps of this run), ``end_time``
        (every world not frozen is within h/2 of it or past it), ``wall_time`` (seconds),
        a callback returning a true value, ``stop_flags`` (:class:`WorldFlag` bits that end the
        run after a step where a world has one). With no limit given, ``max_steps=1000``.

        Callbacks ``before(sim, step, info)`` and ``after(sim, step, info)``: ``step`` is the
        steps taken so far in this run, ``info`` a dict of (nworld,) int32 arrays of the last
        step (``flags``, ``ncon``, ``ncon_dropped``, ``newton_iter``, ``ls_iter``, ``nfactor``,
        ``ls_eval``). An exception in a callback stops the run and is raised again here.

        Frames at step 0 and every ``frame_every`` steps: to the file ``frames`` in
        ``frames_format`` (``"binary"``, ``"binary32"``: docs/frames.md, read with
        :func:`sapsim.read_frames`; ``"csv"``: the CLI's trajectory) and/or to
        ``frame_fn(sim, step)``.

        Returns a dict: ``stop`` (``"steps"``, ``"end_time"``, ``"wall_time"``, ``"callback"``,
        ``"failure"``), ``steps``, ``frames``, ``world_steps``, ``wall_s``, ``step_s``,
        ``world_steps_per_s``, ``time_min``, ``time_max``, ``newton_mean``, ``newton_p95``,
        ``newton_max``, ``ls_mean``, ``ls_p95``, ``ls_max``, ``flag_steps`` (world-steps per
        :class:`WorldFlag` name), ``unconverged``, ``ncon_peak``, ``retries``, ``h_min``.
        """
        formats = {"csv": 0, "binary": 1, "binary32": 2}
        if frames_format not in formats:
            raise ArgumentError(f"run: frames_format {frames_format!r} is not one of {sorted(formats)}")
        o = _capi.SapRunOptions()
        lib.sap_runOptionsDefault(byref(o))
        if max_steps is not None:
            o.max_steps = -1 if max_steps < 0 else int(max_steps)
        elif end_time is not None or wall_time is not None or before or after or stop_flags:
            o.max_steps = -1
        if end_time is not None:
            o.end_time = float(end_time)
        if wall_time is not None:
            o.wall_time = float(wall_time)
        o.stop_flags = int(stop_flags)
        o.frame_every = int(frame_every)
        errors: list[BaseException] = []
        n = self.nworld
        names = [name for name, _ in _capi.SapWorldInfo._fields_]

        def wrap(fn: Callable[..., Any]) -> Any:
            def call(_s: int, step: int, info: Any, _u: int) -> int:
                try:
                    arr = np.ctypeslib.as_array(ctypes.cast(info, POINTER(c_int)), shape=(n, len(names)))
                    stop = fn(self, int(step), {k: arr[:, i].copy() for i, k in enumerate(names)})
                    return 1 if stop else 0
                except BaseException as e:  # noqa: BLE001 - re-raised after sap_run
                    errors.append(e)
                    return 1
            return _capi.RUN_CALLBACK(call)

        def frame_call(_s: int, step: int, _u: int) -> int:
            try:
                assert frame_fn is not None
                frame_fn(self, int(step))
                return 0
            except BaseException as e:  # noqa: BLE001
                errors.append(e)
                return 1  # SAP_ERR_ARG: stops the run

        keep = []  # the ctypes callbacks must outlive sap_run
        if before is not None:
            keep.append(wrap(before))
            o.before = keep[-1]
        if after is not None:
            keep.append(wrap(after))
            o.after = keep[-1]
        if frame_fn is not None:
            keep.append(_capi.FRAME_FN(frame_call))
            o.frame_fn = keep[-1]
        writer = c_void_p()
        if frames is not None:
            check(lib.sap_frameWriterOpen(self._h.sim, os.fsencode(frames), formats[frames_format], byref(writer)))
            o.writer = writer
        summary = _capi.SapRunSummary()
        try:
            status = lib.sap_run(self._h.sim, byref(o), byref(summary))
        finally:
            closed = lib.sap_frameWriterClose(writer) if writer.value else 0
        if errors:
            raise errors[0]
        check(status)
        check(closed)
        out: dict[str, Any] = {name: getattr(summary, name) for name, _ in _capi.SapRunSummary._fields_}
        out["stop"] = lib.sap_runStopName(summary.stop).decode()
        out["flag_steps"] = {str(f.name): int(summary.flag_steps[int(f.value).bit_length() - 1])
                             for f in WorldFlag}
        return out

    def retry_stats(self) -> dict[str, np.ndarray]:
        """Step retry counters per world (option ``retry_depth``): ``retries`` (substeps
        redone), ``level`` (the world steps with h / 2**level), ``level_max``, ``h_min`` (the
        smallest step used), since creation or :meth:`retry_clear`."""
        rt = (_capi.SapWorldRetry * self.nworld)()
        check(lib.sap_worldRetry(self._h.sim, None, self.nworld, rt))
        return {name: np.array([getattr(r, name) for r in rt]) for name, _ in _capi.SapWorldRetry._fields_}

    def retry_clear(self) -> None:
        """Zero the retry counters (``sap_retryClear``)."""
        check(lib.sap_retryClear(self._h.sim))

    def __repr__(self) -> str:
        return (f"sapsim.Sim(nworld={self.nworld}, nq={self.nq}, nv={self.nv}, nu={self.nu}, "
                f"device='{self.device_name}', preset='{self.options.get('preset')}')")


def _device_property(name: str) -> property:
    def get(self: Sim) -> DeviceArray:
        return self.device_array(name)

    get.__doc__ = (f"``{name}`` exported without a copy (DLPack, ``__cuda_array_interface__``): "
                   f"``Sim.device_array(\"{name}\")``.")
    return property(get)


#: arrays with a ``<name>_device`` property on :class:`Sim` (``sim.qpos_device``)
DEVICE_PROPERTIES: tuple[str, ...] = ("qpos", "qvel", "ctrl", "qfrc_applied", "xfrc_applied", "time", "xpos", "xquat",
                                      "mocap_pos", "mocap_quat", "world_flags", "newton_iter", "ncon")
for _name in DEVICE_PROPERTIES:
    setattr(Sim, _name + "_device", _device_property(_name))
