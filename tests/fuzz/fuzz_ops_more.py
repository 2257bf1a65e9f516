"""The op table, continued: reductions, shape and order ops, contractions, linear algebra,
losses and layers (see ``fuzz_ops.py`` for the template language). Helpers the PyTorch
mirrors call (``t_sum``, ``t_index``, ...) live in ``fuzz_mirrors.TORCH_PRELUDE``."""

from __future__ import annotations

from fuzz_ops import add


def _axis(rng, shape, multi=True, none=True):
    """An axis argument as source text: None, an int (maybe negative) or a tuple."""
    nd = len(shape)
    choices = (["None"] if none else []) + ([str(int(rng.integers(-nd, nd)))] if nd else [])
    if multi and nd >= 2:
        axes = sorted(rng.choice(nd, size=2, replace=False).tolist())
        choices.append(str(tuple(axes)))
    return str(rng.choice(choices)) if choices else "None"


def _red(rng, s):
    return {"axis": _axis(rng, s[0]), "k": str(bool(rng.integers(2)))}


def _one_axis(rng, s):
    return {"axis": _axis(rng, s[0], multi=False, none=False)}


def _axis_or_none(rng, s):
    return {"axis": _axis(rng, s[0], multi=False)}


# --- reductions -------------------------------------------------------------------------
for _n, _np in [("sum", "sum"), ("mean", "mean"), ("prod", "prod"), ("max", "max"),
                ("min", "min"), ("logsumexp", None)]:  # fmt: skip
    forms = [f"tv.{_n}({{a}}, {{axis}}, {{k}})", f"{{a}}.{_n}(axis={{axis}}, keepdims={{k}})"]
    if _np:
        forms.append(f"np.{_np}({{a}}, axis={{axis}}, keepdims={{k}})")
    np_t = (f"np.{_np}({{a}}, axis={{axis}}, keepdims={{k}})" if _np
            else "np_logsumexp({a}, {axis}, {k})")  # fmt: skip
    add(_n, forms, np_t, f"t_{_n}({{a}}, {{axis}}, {{k}})", params=_red, group="reduce",
        float_only=_n in ("mean", "logsumexp"))  # fmt: skip
for _n in ("var", "std"):
    add(_n, [f"tv.{_n}({{a}}, {{axis}}, {{k}}, {{ddof}})", f"np.{_n}({{a}}, axis={{axis}}, "
        "keepdims={k}, ddof={ddof})", f"{{a}}.{_n}({{axis}}, {{k}}, {{ddof}})"],
        f"np.{_n}({{a}}, axis={{axis}}, keepdims={{k}}, ddof={{ddof}})",
        f"t_{_n}({{a}}, {{axis}}, {{k}}, {{ddof}})", group="reduce",
        params=lambda rng, s: {**_red(rng, s), "ddof": str(int(rng.integers(2)))})  # fmt: skip
for _n in ("argmax", "argmin"):
    add(_n, [f"tv.{_n}({{a}}, {{axis}})", f"{{a}}.{_n}({{axis}})"],
        f"np.{_n}({{a}}, axis={{axis}})", f"t_{_n}({{a}}, {{axis}})", params=_axis_or_none,
        shape="nd1", diff=False, float_only=False, group="reduce")  # fmt: skip
for _n in ("softmax", "log_softmax"):
    add(_n, [f"tv.{_n}({{a}}, {{axis}})", f"{{a}}.{_n}({{axis}})"], f"sp.{_n}({{a}}, axis={{axis}})",
        f"torch.{_n}({{a}}, {{axis}})", params=_one_axis, shape="nd1", group="reduce")  # fmt: skip
for _n in ("cumsum", "cumprod"):
    add(_n, [f"tv.{_n}({{a}}, {{axis}})", f"{{a}}.{_n}({{axis}})", f"np.{_n}({{a}}, {{axis}})"],
        f"np.{_n}({{a}}, {{axis}})", f"t_{_n}({{a}}, {{axis}})", params=_axis_or_none,
        group="reduce", float_only=False)  # fmt: skip


def _vnorm(rng, s):
    return {"ord": str(rng.choice(["None", "1", "2", "np.inf", "-np.inf", "3", "0.5"])),
            "axis": _axis(rng, s[0], multi=False, none=False)}  # fmt: skip


def _mnorm(rng, s):
    return {"ord": str(rng.choice(["None", "'fro'", "'nuc'", "1", "-1", "2", "-2", "np.inf"])),
            "axis": "(-2, -1)"}  # fmt: skip


add("vector_norm", ["tv.linalg.norm({a}, {ord}, {axis})", "np.linalg.norm({a}, {ord}, {axis})"],
    "np.linalg.norm({a}, {ord}, {axis})", "t_norm({a}, {ord}, {axis})", params=_vnorm,
    shape="nd1", group="reduce")  # fmt: skip
add("matrix_norm", ["tv.linalg.norm({a}, {ord}, {axis})", "np.linalg.norm({a}, {ord}, {axis})"],
    "np.linalg.norm({a}, {ord}, {axis})", "t_norm({a}, {ord}, {axis})", params=_mnorm,
    shape="matrix", group="linalg")  # fmt: skip


# --- shape and order ----------------------------------------------------------------------
def _reshape(rng, s):
    shape, size = s[0], 1
    for d in s[0]:
        size *= d
    options = [(-1,), tuple(reversed(shape)), (1, *shape), shape]
    if size and size % 2 == 0:
        options.append((2, -1))
    return {"shape": str(tuple(options[int(rng.integers(len(options)))]))}


def _perm(rng, s):
    nd = len(s[0])
    return {"perm": str(tuple(int(i) for i in rng.permutation(nd))) if nd else "None"}


def _two_axes(rng, s):
    nd = len(s[0])
    return {"i": str(int(rng.integers(-nd, nd))), "j": str(int(rng.integers(-nd, nd)))}


def _squeeze(rng, s):
    ones = [i for i, d in enumerate(s[0]) if d == 1]
    return {"axis": str(int(rng.choice(ones))) if ones and rng.integers(2) else "None"}


def _pad(rng, s):
    pads = tuple((int(rng.integers(0, 2)), int(rng.integers(0, 3))) for _ in s[0])
    return {"pads": str(pads), "cv": str(rng.choice(["0", "1.5", "-1"]))}


A = "{a}"
add("reshape", ["tv.reshape({a}, {shape})", "{a}.reshape({shape})", "np.reshape({a}, {shape})"],
    "np.reshape({a}, {shape})", "torch.reshape({a}, {shape})", params=_reshape,
    float_only=False, group="shape")  # fmt: skip
add("transpose", ["tv.transpose({a}, {perm})", "{a}.transpose({perm})",
    "np.transpose({a}, {perm})"], "np.transpose({a}, {perm})", "t_transpose({a}, {perm})",
    params=_perm, float_only=False, group="shape")  # fmt: skip
add("T", ["{a}.T"], "{a}.T", "t_transpose({a}, None)", float_only=False, group="shape")
add("swapaxes", ["tv.swapaxes({a}, {i}, {j})", "{a}.swapaxes({i}, {j})",
    "np.swapaxes({a}, {i}, {j})"], "np.swapaxes({a}, {i}, {j})", "torch.swapaxes({a}, {i}, {j})",
    params=_two_axes, shape="nd1", float_only=False, group="shape")  # fmt: skip
add("moveaxis", ["tv.moveaxis({a}, {i}, {j})", "np.moveaxis({a}, {i}, {j})"],
    "np.moveaxis({a}, {i}, {j})", "torch.movedim({a}, {i}, {j})", params=_two_axes, shape="nd1",
    float_only=False, group="shape")  # fmt: skip
add("expand_dims", ["tv.expand_dims({a}, {i})", "np.expand_dims({a}, {i})"],
    "np.expand_dims({a}, {i})", "torch.unsqueeze({a}, {i})", float_only=False, group="shape",
    params=lambda rng, s: {"i": str(int(rng.integers(-len(s[0]) - 1, len(s[0]) + 1)))})  # fmt: skip
add("squeeze", ["tv.squeeze({a}, {axis})", "{a}.squeeze({axis})", "np.squeeze({a}, {axis})"],
    "np.squeeze({a}, {axis})", "t_squeeze({a}, {axis})", params=_squeeze, float_only=False,
    group="shape")  # fmt: skip
add(
    "flip",
    ["tv.flip({a}, {axis})", "np.flip({a}, {axis})"],
    "np.flip({a}, {axis})",
    "t_flip({a}, {axis})",
    params=_axis_or_none,
    shape="nd1",
    float_only=False,
    group="shape",
)
add("roll", ["tv.roll({a}, {shift}, {axis})", "np.roll({a}, {shift}, {axis})"],
    "np.roll({a}, {shift}, {axis})", "t_roll({a}, {shift}, {axis})", shape="nd1",
    params=lambda rng, s: {**_axis_or_none(rng, s), "shift": str(int(rng.integers(-3, 4)))},
    float_only=False, group="shape")  # fmt: skip
add("tile", ["tv.tile({a}, {reps})", "{a}.tile({reps})", "np.tile({a}, {reps})"],
    "np.tile({a}, {reps})", "t_tile({a}, {reps})", float_only=False, group="shape",
    params=lambda rng, s: {"reps": str(rng.choice(["2", "(2, 1)", "(1, 3)", "1"]))})  # fmt: skip
add("repeat", ["tv.repeat({a}, {r}, {axis})", "{a}.repeat({r}, {axis})",
    "np.repeat({a}, {r}, {axis})"], "np.repeat({a}, {r}, {axis})", "t_repeat({a}, {r}, {axis})",
    params=lambda rng, s: {**_axis_or_none(rng, s), "r": str(int(rng.integers(1, 3)))},
    float_only=False, group="shape")  # fmt: skip
add("pad", ["tv.pad({a}, {pads}, {cv})", "np.pad({a}, {pads}, constant_values={cv})"],
    "np.pad({a}, {pads}, constant_values={cv})", "t_pad({a}, {pads}, {cv})", params=_pad,
    group="shape")  # fmt: skip
add("broadcast_to", ["tv.broadcast_to({a}, {shape})", "np.broadcast_to({a}, {shape})"],
    "np.broadcast_to({a}, {shape})", "torch.broadcast_to({a}, {shape})", float_only=False,
    params=lambda rng, s: {"shape": str((2, *s[0]))}, group="shape")  # fmt: skip
add("ravel", ["tv.ravel({a})", "{a}.ravel()", "np.ravel({a})", "{a}.flatten()"],
    "np.ravel({a})", "torch.reshape({a}, (-1,))", float_only=False, group="shape")  # fmt: skip
add("concat", ["tv.concat([{a}, {b}], {axis})", "np.concatenate(({a}, {b}), {axis})"],
    "np.concatenate(({a}, {b}), {axis})", "torch.cat((_t({a}), _t({b})), {axis})", nargs=2,
    rhs="same", shape="nd1", params=_one_axis, consts=("value", "array", "list"),
    float_only=False, swap=False, group="shape")  # fmt: skip
add(
    "stack",
    ["tv.stack([{a}, {b}], {axis})", "np.stack(({a}, {b}), {axis})"],
    "np.stack(({a}, {b}), {axis})",
    "torch.stack((_t({a}), _t({b})), {axis})",
    nargs=2,
    rhs="same",
    params=lambda rng, s: {"axis": str(int(rng.integers(-len(s[0]) - 1, len(s[0]) + 1)))},
    consts=("value", "array"),
    float_only=False,
    swap=False,
    group="shape",
)
add("tensor_of_list", ["tv.tensor([{a}, {b}])", "tv.tensor(({a}, {b}))"],
    "np.stack(({a}, {b}))", "torch.stack((_t({a}), _t({b})))", nargs=2, rhs="same",
    consts=("value",), float_only=False, swap=False, group="shape")  # fmt: skip
add("getitem", ["{a}[{key}]", "tv.getitem({a}, np.s_[{key}])"], "{a}[{key}]", "t_index({a}, {key})",
    params=lambda rng, s: {"key": index_key(rng, s[0])}, shape="nd1", float_only=False,
    group="shape")  # fmt: skip
add("gather", ["tv.gather({a}, {idx}, {axis})", "{a}.gather({idx}, {axis})"],
    "np.take({a}, {idx}, {axis})", "t_take({a}, {idx}, {axis})", shape="nd1",
    params=lambda rng, s: _gather(rng, s[0]), float_only=False, group="shape")  # fmt: skip
add("sort", ["tv.sort({a}, {axis})", "np.sort({a}, {axis})"], "np.sort({a}, {axis})",
    "torch.sort({a}, {axis}).values", params=_one_axis, shape="nd1", group="order")  # fmt: skip
add("diff", ["tv.diff({a}, {n}, {axis})", "np.diff({a}, {n}, {axis})"],
    "np.diff({a}, {n}, {axis})", "torch.diff({a}, {n}, {axis})", shape="nd1", group="order",
    params=lambda rng, s: {**_one_axis(rng, s), "n": str(int(rng.integers(1, 3)))})  # fmt: skip
add("diagonal", ["tv.diagonal({a}, {k})", "{a}.diagonal({k})", "np.diagonal({a}, {k})"],
    "np.diagonal({a}, {k})", "torch.diagonal({a}, {k}, 0, 1)", shape="matrix", group="shape",
    params=lambda rng, s: {"k": str(int(rng.integers(-1, 2)))})  # fmt: skip
add("trace", ["tv.trace({a})", "{a}.trace()", "np.trace({a})"], "np.trace({a})",
    "torch.diagonal({a}, 0, 0, 1).sum(-1)", shape="matrix", group="shape")  # fmt: skip
for _n in ("tril", "triu"):
    add(_n, [f"tv.{_n}({{a}}, {{k}})", f"np.{_n}({{a}}, {{k}})"], f"np.{_n}({{a}}, {{k}})",
        f"torch.{_n}({{a}}, {{k}})", shape="matrix", group="shape",
        params=lambda rng, s: {"k": str(int(rng.integers(-1, 2)))})  # fmt: skip
add("diag", ["tv.diag({a})", "np.diag({a})"], "np.diag({a})", "torch.diag({a})", shape="vec",
    group="shape")  # fmt: skip


def index_key(rng, shape) -> str:
    """A numpy index for ``shape``: ints, slices (negative steps), None, ``...``, integer
    arrays with repeats, boolean masks."""
    d0 = shape[0]
    choices = ["...", "::-1", "1:", ":, None" if len(shape) > 1 else "None", "-1"]
    if d0:
        idx = rng.integers(0, d0, size=3).tolist()
        choices += [f"np.array({idx})", f"{idx}", str(int(rng.integers(-d0, d0)))]
        mask = (rng.random(d0) < 0.5).tolist()
        choices.append(f"np.array({mask})")
    if len(shape) >= 2:
        choices += ["..., 0" if shape[-1] else "..., :0", "::2, ::-1", ":, -1:"]
    key = str(rng.choice(choices))
    if key in ("1:", "-1") and not d0:
        return "..."
    return key


def _gather(rng, shape):
    nd, axis = len(shape), int(rng.integers(0, len(shape)))
    n = shape[axis]
    idx = rng.integers(0, n, size=int(rng.integers(1, 4))).tolist() if n else []
    return {
        "idx": f"np.array({idx}, dtype=np.int64)",
        "axis": str(axis - nd * int(rng.integers(2))),
    }


# --- contractions and linear algebra --------------------------------------------------------
M = {"shape": "matrix", "group": "linalg", "consts": ("value", "array", "list"), "swap": False}
add("matmul", ["tv.matmul({a}, {b})", "{a} @ {b}", "np.matmul({a}, {b})", "{a}.matmul({b})",
    "{a}.dot({b})"], "np.matmul({a}, {b})", "torch.matmul(_t({a}), _t({b}))", nargs=2,
    rhs="matmul", **M, float_only=False)  # fmt: skip
add("dot", ["tv.dot({a}, {b})", "np.dot({a}, {b})"], "np.dot({a}, {b})",
    "torch.matmul(_t({a}), _t({b}))", nargs=2, rhs="matmul", **M)  # fmt: skip
add(
    "outer",
    ["tv.outer({a}, {b})", "np.outer({a}, {b})"],
    "np.outer({a}, {b})",
    "torch.outer(_t({a}).reshape(-1), _t({b}).reshape(-1))",
    nargs=2,
    rhs="any",
    **M,
)
add("kron", ["tv.kron({a}, {b})", "np.kron({a}, {b})"], "np.kron({a}, {b})",
    "torch.kron(_t({a}), _t({b}))", nargs=2, rhs="matrix", **M)  # fmt: skip
add("tensordot", ["tv.tensordot({a}, {b}, 1)", "np.tensordot({a}, {b}, 1)"],
    "np.tensordot({a}, {b}, 1)", "torch.tensordot(_t({a}), _t({b}), 1)", nargs=2, rhs="matmul",
    **M)  # fmt: skip
add("einsum", ["tv.einsum({eq}, {a}, {b})", "np.einsum({eq}, {a}, {b})"],
    "np.einsum({eq}, {a}, {b})", "torch.einsum({eq}, _t({a}), _t({b}))", nargs=2, rhs="matmul",
    params=lambda rng, s: {"eq": repr(str(rng.choice(["...ij,jk->...ik", "ij,jk->ik" if
    len(s[0]) == 2 else "...ij,jk->...ik", "...ij,jk->...ikj" if len(s[0]) == 2 else
    "...ij,jk->...k"])))}, **M)  # fmt: skip
add("cross", ["tv.cross({a}, {b})", "np.cross({a}, {b})"], "np.cross({a}, {b})",
    "torch.linalg.cross(*torch.broadcast_tensors(_t({a}), _t({b})))", nargs=2, rhs="bcast",
    **{**M, "shape": "vec3"})  # fmt: skip
S = {"shape": "square", "group": "linalg"}
SPD = "({a} @ np.swapaxes({a}, -1, -2) + 0.5 * np.eye({a}.shape[-1]))"
SPD_TV = "({a} @ tv.swapaxes({a}, -1, -2) + 0.5 * np.eye({a}.shape[-1]))"
SPD_T = "({a} @ {a}.mT + 0.5 * torch.eye({a}.shape[-1], dtype={a}.dtype))"
SYM, SYM_TV, SYM_T = "({a} + np.swapaxes({a}, -1, -2))", "({a} + {a}.mT)", "({a} + {a}.mT)"
for _n, _np, _th in [("inv", "np.linalg.inv({x})", "torch.linalg.inv({x})"),
                     ("det", "np.linalg.det({x})", "torch.linalg.det({x})"),
                     ("slogdet", "np.linalg.slogdet({x})[1]", "torch.linalg.slogdet({x})[1]"),
                     ("pinv", "np.linalg.pinv({x})", "torch.linalg.pinv({x})"),
                     ("qr", "np.linalg.qr({x})[1] ** 2", "torch.linalg.qr({x})[1] ** 2"),
                     ("svdvals", "np.linalg.svd({x}, compute_uv=False)",
                      "torch.linalg.svdvals({x})")]:  # fmt: skip
    tvname = "svd" if _n == "svdvals" else _n
    suffix = {"slogdet": "[1]", "qr": "[1] ** 2", "svdvals": ""}.get(_n, "")
    extra = ", compute_uv=False" if _n == "svdvals" else ""
    add(_n, [f"tv.linalg.{tvname}({{a}}{extra}){suffix}", f"np.linalg.{tvname}({{a}}{extra}){suffix}"],
        _np.format(x="{a}"), _th.format(x="{a}"), **S, ulps=256 if _n == "pinv" else 16)  # fmt: skip
for _n, _np, _th in [("cholesky", "np.linalg.cholesky", "torch.linalg.cholesky")]:
    add(_n, [f"tv.linalg.cholesky({SPD_TV})", f"np.linalg.cholesky({SPD_TV})"], f"{_np}({SPD})",
        f"{_th}({SPD_T})", **S)  # fmt: skip
add("eigvalsh", [f"tv.linalg.eigvalsh({SYM_TV})", f"np.linalg.eigvalsh({SYM_TV})",
    f"tv.linalg.eigh({SYM_TV})[0]"], f"np.linalg.eigvalsh({SYM})", f"torch.linalg.eigvalsh({SYM_T})",
    **S)  # fmt: skip
add("eigh_vectors_sq", [f"tv.linalg.eigh({SYM_TV})[1] ** 2",
    f"np.linalg.eigh({SYM_TV}).eigenvectors ** 2"], f"np.linalg.eigh({SYM})[1] ** 2",
    f"torch.linalg.eigh({SYM_T})[1] ** 2", **S)  # fmt: skip
add("solve", ["tv.linalg.solve({a}, {b})", "np.linalg.solve({a}, {b})"],
    "np.linalg.solve({a}, {b})", "t_solve(_t({a}), _t({b}))", nargs=2, rhs="solve",
    consts=("value", "array"), swap=False, **S)  # fmt: skip
add("matrix_power", ["tv.linalg.matrix_power({a}, {n})", "np.linalg.matrix_power({a}, {n})"],
    "np.linalg.matrix_power({a}, {n})", "torch.linalg.matrix_power({a}, {n})",
    params=lambda rng, s: {"n": str(int(rng.integers(-2, 4)))}, **S)  # fmt: skip

# --- losses, nn ops and layers ---------------------------------------------------------------
L = {"nargs": 2, "swap": False, "group": "loss", "shape": "matrix"}
# labels take the predictions' dtype (core/nn/loss_arguments.py ``label_tensor``); predictions are
# clipped to [1e-7, 1 - 1e-7] in binary_cross_entropy (core/nn/losses.py, Keras's epsilon)
add("mse", ["tv.losses.mean_squared_error({b}, {a})"], "np.mean(({a} - _as({b}, {a}.dtype)) ** 2)",
    "F.mse_loss(_t({a}), _t({b}).to(_t({a}).dtype))", rhs="same", **L)  # fmt: skip
add("softmax_ce", ["tv.losses.softmax_cross_entropy({b}, {a})"],
    "-np.sum(_as({b}, {a}.dtype) * sp.log_softmax({a}, -1)) / {a}.shape[0]",
    "-(_t({b}) * torch.log_softmax(_t({a}), -1)).sum() / _t({a}).shape[0]", rhs="probs",
    consts=("value", "array"), **L)  # fmt: skip
add("bce_logits", ["tv.losses.binary_cross_entropy({b}, {a}, from_logits=True)"],
    "np.mean(np.maximum({a}, 0) - {a} * _as({b}, {a}.dtype) + np.log1p(np.exp(-np.abs({a}))))",
    "F.binary_cross_entropy_with_logits(_t({a}), _t({b}).to(_t({a}).dtype))", rhs="labels",
    consts=("value", "array", "list"), **L)  # fmt: skip
add("bce", ["tv.losses.binary_cross_entropy({b}, {a})"],
    "np_bce(_as({b}, {a}.dtype), {a})", "t_bce(_t({b}).to(_t({a}).dtype), _t({a}))", rhs="labels",
    domains=("prob", "prob"), consts=("value", "array"), **L)  # fmt: skip
add("conv2d", ["tv.conv2d({a}, {b}, {s}, {pad})"], "np_conv2d({a}, {b}, {s}, {pad})",
    "t_conv2d(_t({a}), _t({b}), {s}, {pad})", nargs=2, shape="nhwc", rhs="filters", swap=False,
    consts=("value", "array"), group="nn", params=lambda rng, s: {"s": str(int(rng.integers(1, 3))),
    "pad": repr(str(rng.choice(["valid", "same"])))})  # fmt: skip
for _n in ("max_pool2d", "avg_pool2d"):
    add(_n, [f"tv.{_n}({{a}}, 2)"], f"np_{_n}({{a}})", f"t_{_n}({{a}})", shape="nhwc",
        group="nn")  # fmt: skip
add(
    "dense",
    ["DENSE({a})"],
    "np.tanh({a} @ DENSE_W + DENSE_B)",
    "torch.tanh(_t({a}) @ _t(DENSE_W) + _t(DENSE_B))",
    shape="dense_in",
    group="layer",
)
add("sequential", ["SEQ({a})"], "np.maximum({a} @ DENSE_W + DENSE_B, 0) @ SEQ_W2",
    "torch.relu(_t({a}) @ _t(DENSE_W) + _t(DENSE_B)) @ _t(SEQ_W2)", shape="dense_in",
    group="layer")  # fmt: skip
