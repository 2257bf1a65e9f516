"""The numba backend: compiled kernels where they beat numpy, visible delegation elsewhere.

Registered as ``"numba"`` with priority 0 (numpy, priority 1, stays the default). Every
kernel the numpy backend has exists here: compiled (``elementwise``, ``reduce``, ``nn``
families, pure ``@njit`` code in ``compiled_*.py``; each named by its primitive's row, ``numba=``) or delegated to numpy's kernel with
``delegates_to="numpy"`` and a stated reason (``delegated_kernels()``).

Nothing compiles at import: numba compiles a kernel (or loads it from its disk cache,
``cache=True``) the first time it runs on a dtype. ``compile_report()`` says how long that
took, apart from run time.

Example:
    >>> import tapeviz as tv
    >>> from tapeviz.core.backends import numba as nb
    >>> with tv.backend("numba"):
    ...     y = tv.sum(tv.ones((300, 300)), axis=0)
    >>> float(y.numpy()[0])
    300.0
    >>> "Tanh" in nb.delegated_kernels()
    True
"""

from __future__ import annotations

from ...primitives import FAMILIES as FAMILIES_DEFINED
from ...primitives import ROWS
from ...registry import kernel_names as K
from ...registry.kernels import Backend, kernels_for_backend, register_backend, register_kernel
from . import compiled_elementwise, compiled_nn, compiled_reduce, elementwise, nn, reduce
from .runtime import CompileReport, report, settings

__all__ = [
    "NAME",
    "register",
    "compile_report",
    "delegated_kernels",
    "settings",
]

NAME = "numba"
FAMILIES = (elementwise, reduce, nn)
_MODULES = {m.__name__.rsplit(".", 1)[-1]: m for m in FAMILIES}
_NO_KERNEL = "no compiled kernel: numpy's kernel runs"
_SHAPE_REASON = "moves or views memory: numpy's kernel is already a single copy or a view"

# families without a compiled kernel: every kernel of theirs runs numpy's, for this reason
DELEGATED_FAMILIES = {
    "linalg": "matmul is BLAS in numpy already (numba's np.dot calls the same BLAS)",
    "shape": _SHAPE_REASON,
    "decomp": "LAPACK through numpy.linalg already (numba's np.linalg calls the same LAPACK)",
    "contract": "numpy.einsum with optimize dispatches to BLAS already",
    "elementwise_math": "one vectorised numpy ufunc pass; no compiled kernel written (not measured)",
    "scan": "numpy's cumsum/cumprod are one pass; no compiled kernel written (not measured)",
}

_DELEGATIONS: dict[str, str] = {}


def _factory() -> Backend:
    # only the built-in kernels are delegated: a kernel a user registers for numpy alone
    # stays missing on numba, and running it there is the registry's clear error
    return Backend(NAME, priority=0, info={"delegated": dict(_DELEGATIONS)})


def register() -> None:
    """Register the backend, its compiled kernels, and a delegation for every other kernel
    the numpy backend has."""
    register_backend(NAME, _factory, priority=0)
    for row in ROWS:
        if row.declared.numba is not None:
            register_kernel(row.name, NAME, compiled(row.declared.numba))
    _sync_delegations()


def compiled(ref: str):
    """The compiled kernel a row names (``numba="reduce.sum_kernel"``) in this folder."""
    module, name = ref.split(".")
    return getattr(_MODULES[module], name)


def _reason(kernel_name: str) -> str:
    for family in FAMILIES:
        if kernel_name in family.DELEGATED:
            return family.DELEGATED[kernel_name]
    return DELEGATED_FAMILIES.get(_FAMILY_OF.get(kernel_name), _NO_KERNEL)


# kernel name -> the family whose table defines it (core/primitives/<family>.py)
_FAMILY_OF = {d.name: f.__name__.rsplit(".", 1)[-1] for f in FAMILIES_DEFINED for d in f.ROWS}


def _sync_delegations() -> None:
    """Delegate every built-in numpy kernel numba has no compiled kernel for. Only the
    built-in ones: a kernel a user registered for numpy alone (``register_kernel``,
    ``define_op``) stays missing here whenever numba is loaded, before or after it."""
    mine = {c.kernel_name for c in kernels_for_backend(NAME)}
    for config in kernels_for_backend("numpy"):
        name = config.kernel_name
        if name not in K.ALL or (name in mine and name not in _DELEGATIONS):
            continue
        register_kernel(name, NAME, config.fn, delegates_to="numpy")
        _DELEGATIONS[name] = _reason(name)


def delegated_kernels() -> dict[str, str]:
    """``{kernel name: reason}`` for every kernel that runs numpy's code on this backend.

    Example:
        >>> from tapeviz.core.backends import numba as nb
        >>> nb.delegated_kernels()["BatchMatMul"]
        "matmul is BLAS in numpy already (numba's np.dot calls the same BLAS)"
    """
    return {
        c.kernel_name: _DELEGATIONS.get(c.kernel_name, _NO_KERNEL)
        for c in kernels_for_backend(NAME)
        if c.delegates_to == "numpy"
    }


def dispatchers() -> list:
    """Every numba-compiled function of the backend (empty ``.signatures`` until first use)."""
    out = []
    for module in (compiled_elementwise, compiled_reduce, compiled_nn):
        for value in vars(module).values():
            if hasattr(value, "signatures") and hasattr(value, "py_func"):
                if not value.py_func.__name__.startswith("_"):  # inlined helpers
                    out.append(value)
    return out


def compile_report() -> CompileReport:
    """Compile time of the backend's kernels in this process, apart from their run time.

    Returns:
        A ``CompileReport``: per compiled function its signatures, seconds spent compiling
        and disk-cache hits.

    Example:
        >>> from tapeviz.core.backends import numba as nb
        >>> report = nb.compile_report()
        >>> report.total_compile_s >= 0 and "reduce_rows" in str(report)
        True
    """
    return report(dispatchers())


# importing this module registers the backend (core/__init__.py imports it on first use)
if not _DELEGATIONS:
    register()
