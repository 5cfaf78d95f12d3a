"""Per-world physical parameters (domain randomization) of a :class:`~sapsim.Sim`.

Each world may override the model's values of the parameters in :data:`PARAMS`;
worlds without an override share the model's arrays (the C library allocates a
per-world table for a parameter only at its first override). Overrides survive
``Sim.reset`` (the state) and are undone by :meth:`ParamsMixin.reset_params`.

>>> sim = sapsim.Sim("scenes/ant.xml", nworld=256)
>>> rng = np.random.default_rng(0)
>>> mass = sim.get_param("body_mass")                       # (256, nbody)
>>> sim.set_param("body_mass", mass * rng.uniform(0.8, 1.2, mass.shape))
>>> sim.randomize(worlds=[0, 5], gravity=[0, 0, -3.7],      # several at once, atomic
...               geom_friction=sim.get_param("geom_friction", [0]) * 0.5)
>>> sim.reset_params(worlds=[5])                            # world 5 back to the model

Every value is checked before anything changes (non-finite, negative where the
sign is physical, principal inertias off the triangle inequality, unknown names,
world ids out of range) and raises with sapsim's message naming the world and
element. Semantics of each parameter: ``sap_setParam`` in include/sapsim/sapsim.h.
"""

from __future__ import annotations

from ctypes import POINTER, c_double, c_int
from typing import Any, Iterable, Optional, Union

import numpy as np
import numpy.typing as npt

from ._capi import check, last_error, lib
from .errors import ArgumentError

__all__ = ["PARAMS", "ParamsMixin"]

#: per-world parameters, in sapParam order (include/sapsim/sapsim.h)
PARAMS: tuple[str, ...] = (
    "body_mass",         # (nbody,)      kg
    "body_inertia",      # (nbody, 3)    principal moments about the com, kg m^2
    "geom_friction",     # (ngeom, 3)    sliding, torsional (m), rolling (m)
    "geom_k",            # (ngeom,)      SAP contact stiffness, N/m (pairs: in series)
    "geom_taud",         # (ngeom,)      SAP dissipation time scale, s (pairs: summed)
    "actuator_gain",     # (nu,)         sapsim's actuator law (model.h)
    "actuator_bias",     # (nu,)
    "actuator_kp",       # (nu,)         position servo stiffness; -bias[1] of general and muscle laws
    "actuator_kv",       # (nu,)         servo damping; -bias[2] of general and muscle laws
    "dof_damping",       # (nv,)
    "dof_armature",      # (nv,)
    "dof_frictionloss",  # (nv,)
    "gravity",           # (3,)          m/s^2
)
_PARAM_ID = {name: i for i, name in enumerate(PARAMS)}
_PER_ELEMENT = {"body_inertia": 3, "geom_friction": 3}

WorldSelection = Union[None, Iterable[int], npt.NDArray[Any]]


def _param_id(name: str) -> int:
    if name not in _PARAM_ID:
        code = lib.sap_paramFind(str(name).encode())  # sapsim's message lists the names
        raise ArgumentError(last_error() if code < 0 else f"unknown per-world parameter '{name}'")
    return _PARAM_ID[name]


class ParamsMixin:
    """Per-world parameter methods of :class:`~sapsim.Sim` (needs ``self._h``)."""

    _h: Any

    def _ids(self, worlds: WorldSelection) -> Optional[np.ndarray]:
        from .sim import _world_ids  # the same world selection rules as get/set

        return _world_ids(worlds, self._h.nworld)

    def param_shape(self, name: str) -> tuple[int, ...]:
        """Shape of one world's values of parameter ``name`` (one of :data:`PARAMS`):
        ``(nbody,)``, ``(nbody, 3)``, ``(3,)``, ..."""
        size = lib.sap_paramSize(self._h.sim, _param_id(name))
        per = _PER_ELEMENT.get(name, 1)
        return (3,) if name == "gravity" else ((size // per, per) if per > 1 else (size,))

    def get_param(self, name: str, worlds: WorldSelection = None) -> np.ndarray:
        """The values in force of parameter ``name`` for ``worlds`` (None: all; ids or a
        boolean mask of shape (nworld,)): a new array of shape (n,) + param_shape(name),
        a world's own values where it has an override, else the model's."""
        pid, shape = _param_id(name), self.param_shape(name)
        ids = self._ids(worlds)
        n = self._h.nworld if ids is None else len(ids)
        out = np.empty((n,) + shape, dtype=np.float64)
        if n and out.size:
            check(lib.sap_getParam(self._h.sim, pid, None if ids is None else ids.ctypes.data_as(POINTER(c_int)),
                                   n, out.ctypes.data_as(POINTER(c_double))))
        return out

    def set_param(self, name: str, values: npt.ArrayLike, worlds: WorldSelection = None) -> None:
        """Override parameter ``name`` of ``worlds`` (None: all) with ``values``,
        broadcast to (n,) + param_shape(name) (so one row sets every selected world).

        Raises:
            ArgumentError: unknown name, a world id out of range, a shape that does not
                broadcast, or a value out of its range (negative mass, friction, damping,
                ...; inertia violating a + b >= c); the message names world and element.
            NonFiniteError: a NaN or infinite value.
            Nothing changes when any value is bad.
        """
        pid, shape = _param_id(name), self.param_shape(name)
        ids = self._ids(worlds)
        n = self._h.nworld if ids is None else len(ids)
        try:
            buf = np.ascontiguousarray(np.broadcast_to(np.asarray(values, dtype=np.float64), (n,) + shape))
        except ValueError as e:
            raise ArgumentError(f"{name}: values of shape {np.shape(values)} do not fit ({n},) + {shape}: {e}") from None
        if n and buf.size:
            check(lib.sap_setParam(self._h.sim, pid, None if ids is None else ids.ctypes.data_as(POINTER(c_int)),
                                   n, buf.ctypes.data_as(POINTER(c_double))))

    def param_overridden(self, name: str) -> np.ndarray:
        """Boolean array (nworld,): which worlds read their own values of ``name``."""
        pid = _param_id(name)
        return np.array([bool(lib.sap_paramOverridden(self._h.sim, pid, w)) for w in range(self._h.nworld)])

    def reset_params(self, names: Union[None, str, Iterable[str]] = None, worlds: WorldSelection = None) -> None:
        """Return ``worlds`` (None: all) to the model's values of ``names`` (one name, a
        list, or None for every parameter)."""
        ids = self._ids(worlds)
        n = self._h.nworld if ids is None else len(ids)
        ptr = None if ids is None else ids.ctypes.data_as(POINTER(c_int))
        if names is None:
            check(lib.sap_resetParam(self._h.sim, -1, ptr, n))
            return
        for name in [names] if isinstance(names, str) else list(names):
            check(lib.sap_resetParam(self._h.sim, _param_id(name), ptr, n))

    def randomize(self, worlds: WorldSelection = None, **values: npt.ArrayLike) -> None:
        """Set several parameters of ``worlds`` at once: ``sim.randomize(worlds=idx,
        body_mass=m, geom_friction=f, gravity=g)``; each value broadcasts as in
        :meth:`set_param`. All or nothing: when one parameter is refused, the ones set
        before it are restored (values and override flags) and the error is raised."""
        for name in values:
            _param_id(name)
        ids = self._ids(worlds)
        done: list[tuple[str, np.ndarray, np.ndarray]] = []
        try:
            for name, value in values.items():
                done.append((name, self.get_param(name, ids), self.param_overridden(name)))
                self.set_param(name, value, ids)
        except Exception:
            done.pop()  # the refused one changed nothing
            sel = np.arange(self._h.nworld) if ids is None else ids
            for name, old, had in reversed(done):
                self.set_param(name, old, sel)
                fresh = sel[~had[sel]]
                if fresh.size:
                    self.reset_params(name, fresh)
            raise
