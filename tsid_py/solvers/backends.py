"""The QP backends tsid_py knows, and which of them are installed here."""

from __future__ import annotations

import importlib
import importlib.util
import inspect

from tsid_py.errors import InvalidParameterError, UnknownNameError
from tsid_py.solvers.solver_base import Solver
from tsid_py.validation import unknown_name_message

# backend name -> (module that must be importable, "module:class" of the adapter)
_BACKENDS = {
    "quadprog": ("quadprog", "tsid_py.solvers.quadprog_solver:SolverHQuadProg"),
    "daqp": ("daqp", "tsid_py.solvers.daqp_solver:SolverDAQP"),
}


def installed_backends() -> list[str]:
    """Names of the backends whose QP package is importable, default first."""
    return [name for name, (module, _) in _BACKENDS.items() if importlib.util.find_spec(module)]


def make_solver(backend: str = "quadprog", **options: object) -> Solver:
    """A solver for the named backend.

    Args:
        backend: ``"quadprog"`` or ``"daqp"``, installed (:func:`installed_backends`).
        **options: Passed to the solver's class: ``warm_start`` for both, and DAQP's settings for
            ``"daqp"``.

    Raises:
        UnknownNameError: The backend is unknown or not installed.
        InvalidParameterError: The backend takes no such options.
    """
    if backend not in installed_backends():
        raise UnknownNameError(unknown_name_message("installed QP backend", backend, installed_backends()))
    module, name = _BACKENDS[backend][1].split(":")
    cls = getattr(importlib.import_module(module), name)
    try:
        inspect.signature(cls).bind(backend, **options)
    except TypeError as exc:
        raise InvalidParameterError(f"options {sorted(options)} for the {backend} backend: {exc}") from None
    return cls(backend, **options)
