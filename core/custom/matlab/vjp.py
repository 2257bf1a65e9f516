"""What runs when a gradient flows through a ``DifferentiableFunction`` node: the user's
``backward`` on numpy arrays, once for the inputs that need a gradient (PyTorch's
``needs_input_grad``), each gradient checked; and, for a second derivative, the node outer
tapes record for that backward, differentiated along a tangent by finite differences where
it may be, else a named error."""

from __future__ import annotations

import functools

import numpy as np

from ...engine import dispatch as engine
from ...registry.gradients import GradConfig
from ...registry.validation import GradientError, check_gradient
from ...tensors import recording
from ...tensors.arrays import check_dtype
from ...tensors.tensor import Tensor
from ..builder import outer_tapes, thunks_once

__all__ = ["KERNEL", "BACKWARD_KERNEL", "Spec", "grad_fn", "split_forward"]

KERNEL = "DifferentiableFunction"
BACKWARD_KERNEL = "DifferentiableFunctionBackward"


def split_forward(fn, cls, result):
    m, k = fn.num_outputs, fn.num_memory_values
    expected = m + k
    if expected == 1 and not isinstance(result, (tuple, list)):
        result = (result,)
    if not isinstance(result, (tuple, list)) or len(result) != expected:
        got = f"{len(result)} values" if isinstance(result, (tuple, list)) else "one value"
        raise ValueError(
            f"{cls}.forward returned {got}, expected {expected} "
            f"(num_outputs={m} outputs, then num_memory_values={k} memory values)"
        )
    arrays = []
    for j, a in enumerate(result):
        what = f"Y{j + 1}" if j < m else f"memory{j - m + 1}"
        if not isinstance(a, (np.ndarray, np.generic)):
            raise TypeError(
                f"{cls}.forward: {what} must be a numpy array, got {type(a).__name__}"
                + (" (return .numpy())" if isinstance(a, Tensor) else "")
            )
        arrays.append(check_dtype(np.asarray(a), f"{cls}.forward: {what}"))
    return arrays[:m], arrays[m:]


class Spec:
    """What the gradient of one call needs: the instance, its class name, input names,
    shapes and dtypes, and its primitives."""

    __slots__ = ("fn", "cls", "names", "inputs", "shapes", "prims")

    def __init__(self, fn, cls, names, xs, prims):
        self.fn, self.cls, self.names, self.inputs = fn, cls, names, xs
        self.shapes = [(x.shape, x.dtype) for x in xs]
        self.prims = prims


def grad_fn(spec, dy, saved, attrs, needed=None):
    if needed is None:  # a caller that does not say: every floating input
        needed = {n for n, (_, dt) in zip(spec.names, spec.shapes) if dt.kind == "f"}
    return thunks_once(
        spec.names,
        lambda: _run_backward(spec, dy, saved, needed),
        lambda i: f"{spec.cls}.backward returned None for dLdX{i + 1}, whose gradient is needed",
    )


def _run_backward(spec, dy, saved, needed):
    dys = tuple(dy) if isinstance(dy, tuple) else (dy,)
    flags = tuple(n in needed for n in spec.names)
    args = [d.numpy() for d in dys] + [flags] + [s.numpy() for s in saved]
    result = _call_backward(spec, args)
    n = len(spec.names)
    if not isinstance(result, (tuple, list)) or len(result) != n:
        got = f"{len(result)} gradients" if isinstance(result, (tuple, list)) else "one value"
        raise GradientError(
            f"{spec.cls}.backward returned {got}, expected {n} "
            f"({'dLdX1…dLdX' + str(n) if n > 1 else 'dLdX1'}, one per input)"
        )
    grads = [_check_gradient(spec, i, g, flags[i]) for i, g in enumerate(result)]
    _record_backward(spec, dys, args, grads)
    return grads


def _call_backward(spec, args):
    _check_backward_arity(spec, args)
    try:
        result = spec.fn.backward(*args)
    except Exception as e:
        raise GradientError(f"{spec.cls}.backward raised {type(e).__name__}: {e}") from e
    if len(spec.names) == 1 and not isinstance(result, (tuple, list)):
        result = (result,)
    return result


def _check_backward_arity(spec, args):
    """A ``backward`` whose parameters do not take what is passed (most often: it expects
    the inputs, which were not saved) fails naming the flags, not with Python's bare
    "missing 2 required positional arguments"."""
    import inspect

    fn = spec.fn
    try:
        inspect.signature(fn.backward).bind(*args)
    except TypeError as e:
        n_dy = fn.num_outputs
        passed = [f"dLdY1…dLdY{n_dy}" if n_dy > 1 else "dLdY1", "compute_gradients"]
        flags = []
        for flag, what, count in (
            ("save_inputs_for_backward", "X", len(spec.names)),
            ("save_outputs_for_backward", "Y", n_dy),
        ):
            if getattr(fn, flag):
                passed.append(f"{what}1…{what}{count}" if count > 1 else f"{what}1")
            else:
                flags.append(flag)
        if fn.num_memory_values:
            passed.append(f"mem1…mem{fn.num_memory_values}")
        hint = (
            f"; to receive the inputs (or outputs) pass {' or '.join(f'{f}=True' for f in flags)}"
            f" to super().__init__ in {spec.cls}.__init__"
            if flags
            else ""
        )
        raise GradientError(
            f"{spec.cls}.backward{inspect.signature(fn.backward)} cannot take the {len(args)} "
            f"arguments it is given ({', '.join(passed)}): {e}{hint}"
        ) from None
    except ValueError:  # no signature to read (a builtin): let the call say
        pass


def _check_gradient(spec, i, g, flag):
    where = f"{spec.cls}.backward: dLdX{i + 1} (the gradient of input X{i + 1})"
    shape, dtype = spec.shapes[i]
    if g is None or dtype.kind != "f":  # a non-float input never needs a gradient
        return None
    hint = f"; use .astype(np.{dtype})" if getattr(g, "shape", None) == shape else ""
    g = check_gradient(g, shape, dtype, where, arrays_only=True, hint=hint, whose=f" (X{i + 1}'s)")
    return g if flag else None


def _record_backward(spec, dys, args, grads):
    """On an outer tape, the gradients come from a node ``<class>.backward``. Its gradient
    with respect to dLdY exists (backward is linear in dLdY; core.jvp needs it: see
    ``_through_backward``); with respect
    to the inputs it raises: no tape can see into backward's numpy code."""
    which = [i for i, g in enumerate(grads) if g is not None]
    if not outer_tapes() or not which:
        return
    inputs = {f"dLdY{j + 1}": d for j, d in enumerate(dys)}
    inputs.update(zip(spec.names, spec.inputs))
    grad = GradConfig(BACKWARD_KERNEL, functools.partial(_backward_grad, spec, args, which))
    outs = tuple(grads[i] for i in which)
    engine.record(spec.prims[1], inputs, outs, {}, grad, [], outer_only=True)


def _backward_grad(spec, args, which, dy, saved, attrs):
    ws = [w.numpy() for w in (dy if isinstance(dy, tuple) else (dy,))]
    thunks = {n: functools.partial(_second_order_error, spec) for n in spec.names}
    cache: list = []  # one directional derivative serves every output
    for j in range(spec.fn.num_outputs):
        thunks[f"dLdY{j + 1}"] = functools.partial(
            _through_backward, spec, args, which, ws, j, cache
        )
    return thunks


_EXACT_LIMIT = 1024  # output elements at non-smooth points: above this, an error


def _through_backward(spec, args, which, ws, j, cache):
    """``sum_i (d dLdX_i / d dLdY_j)^T w_i = J_j w``: the derivative of ``Y_j`` along ``w``.

    backward is a black box: its transpose would take one call per element of ``Y_j``.
    Instead ``forward`` is differentiated along ``w`` by central differences in float64
    with a Richardson step (five forward calls: linear in size; error ~1e-10 relative).
    An output element whose one-sided derivatives disagree (a kink such as relu at 0, a
    forward that computes in float32) gets its exact value from backward instead, one call
    per such element: at most ``_EXACT_LIMIT`` of them, more raise an error naming the class.
    """
    if not cache:
        cache.append(_directional(spec, which, ws, [a.shape for a in args[: spec.fn.num_outputs]]))
    central, rough = cache[0][j]
    n_rough = int(np.count_nonzero(rough))
    if n_rough > _EXACT_LIMIT:
        raise GradientError(
            f"{spec.cls}: forward mode (tv.jvp, or a second derivative through dLdY) "
            f"differentiates {spec.cls}.forward along the tangent by finite differences, and "
            f"the one-sided derivatives disagree at {n_rough} of its {central.size} output "
            "elements (kinks, or a forward computing in float32); each of those costs one "
            f"exact backward call, and {n_rough} > {_EXACT_LIMIT}. Write the function with tv "
            "ops or tv.custom_grad for exact forward mode."
        )
    out = np.where(rough, 0.0, central).astype(args[j].dtype)
    if n_rough:
        out[rough] = _transpose_per_element(spec, args, which, ws, j, np.argwhere(rough))
    return Tensor(out)


def _directional(spec, which, ws, out_shapes):
    """For each output: (d forward(X + s w) / ds at s = 0 in float64, a mask of the elements
    where that is not smooth: one-sided derivatives disagree or not finite)."""
    xs = [x.numpy().astype(np.float64) if x.dtype.kind == "f" else x.numpy() for x in spec.inputs]
    dirs = {i: np.asarray(w, np.float64) for i, w in zip(which, ws)}
    wmax = max(float(np.abs(w).max(initial=0)) for w in dirs.values())
    if wmax == 0:
        return [(np.zeros(shape), np.zeros(shape, bool)) for shape in out_shapes]
    xmax = max(float(np.abs(xs[i]).max(initial=0)) for i in dirs)
    h = 1e-4 * (1 + xmax) / wmax
    at = {k: _forward_at(spec, xs, dirs, k * h) for k in (-1, -0.5, 0, 0.5, 1)}
    out = []
    for m1, m2, f0, p2, p1 in zip(*at.values()):
        with np.errstate(all="ignore"):
            central = (4 * (p2 - m2) / h - (p1 - m1) / (2 * h)) / 3  # Richardson: O(h^4)
            right = 2 * (p2 - f0) / (h / 2) - (p1 - f0) / h  # one-sided, Richardson: O(h^2)
            left = 2 * (f0 - m2) / (h / 2) - (f0 - m1) / h
            finite = np.isfinite(central)
            tol = 1e-5 * (float(np.abs(central[finite]).max(initial=0)) + 1)
            rough = ~finite | ~(np.abs(right - left) <= tol)  # a kink (or float32 rounding)
        out.append((central, rough))
    return out


def _forward_at(spec, xs, dirs, step):
    arrays = [x + step * dirs[i] if i in dirs else x for i, x in enumerate(xs)]
    with recording.no_grad():
        result = spec.fn.forward(*arrays)
    ys, _ = split_forward(spec.fn, spec.cls, result)
    return [np.asarray(y, np.float64) for y in ys]


def _transpose_per_element(spec, args, which, ws, j, elements):
    """``(J_j w)[e]`` exactly for each index ``e`` of ``elements``: one backward call each."""
    m = spec.fn.num_outputs
    flags = tuple(i in which for i in range(len(spec.names)))
    zeros = [np.zeros(a.shape, a.dtype) for a in args[:m]]
    values = []
    for e in map(tuple, elements):
        onehot = list(zeros)
        onehot[j] = zeros[j].copy()
        onehot[j][e] = 1
        res = _call_backward(spec, [*onehot, flags, *args[m + 1 :]])
        values.append(sum(np.vdot(res[i], w) for i, w in zip(which, ws) if res[i] is not None))
    return np.asarray(values, args[j].dtype)


def _second_order_error(spec):
    raise spec.prims[0].once_only_error(
        f"a DifferentiableFunction's gradient with respect to its inputs is "
        f"{spec.cls}.backward on numpy arrays, which no tape can see into",
        "For higher-order derivatives write the function with tv ops, or use tv.custom_grad "
        "with a grad_func written with ops.",
    )
