"""``fit``, ``evaluate`` and ``predict`` for modules; ``History`` and the ``Callback`` protocol.

Each step runs the loss under a fresh tape (``Optimizer.minimize``), which releases its saved
values; nothing outlives the step, so memory stays flat over long training.
"""

from __future__ import annotations

import math

import numpy as np

from ..tensors.arrays import to_array
from ..tensors.recording import no_grad
from ..tensors.tensor import Tensor
from . import losses as _losses
from . import optim as _optim
from .callbacks import Callback, CallbackList, History, progress_callback
from .metrics import resolve_metrics

__all__ = ["fit", "evaluate", "predict", "Callback", "History"]


def _array(x, what: str, where: str = "fit") -> np.ndarray:
    if isinstance(x, Tensor):
        return x.numpy()
    arr = to_array(x, where=f"{where}: {what}")
    if arr.dtype == np.float64 and not isinstance(x, np.ndarray):
        arr = arr.astype(np.float32)
    return np.asarray(arr)


def _inputs(x, where):
    x = _array(x, "x", where)
    if x.ndim == 0:
        raise ValueError(f"{where}: x must have a batch axis, got a scalar")
    return x if x.dtype.kind == "f" else x.astype(np.float32)


def _pairs(x, y, where):
    x, y = _inputs(x, where), _array(y, "y", where)
    if y.ndim == 0 or len(x) != len(y):
        raise ValueError(
            f"{where}: x and y must have the same number of samples, got x {x.shape} and "
            f"y {y.shape}"
        )
    return x, y


def fit(
    model,
    x,
    y,
    loss,
    optimizer,
    epochs: int = 1,
    batch_size: int = 32,
    validation_data=None,
    callbacks=None,
    verbose=1,
    metrics="auto",
    shuffle: bool = True,
    seed=None,
    jit: bool = False,
) -> History:
    """Train ``model`` on ``(x, y)`` with mini-batches.

    Args:
        model: a Module (e.g. ``Sequential``).
        x, y: inputs and labels (arrays or tensors), same number of samples.
        loss: a loss function ``(labels, predictions) -> scalar`` or its name (``"mse"``,
            ``"softmax_cross_entropy"``, ``"binary_cross_entropy"``, ...).
        optimizer: an Optimizer, or a name (``"sgd"``, ``"adam"``, ...).
        epochs, batch_size: passes over the data, samples per step.
        validation_data: ``(x_val, y_val)`` evaluated after each epoch (``val_`` logs).
        callbacks: ``tv.nn.Callback`` instances.
        verbose: 0 silent, 1 a progress bar (tqdm.auto: a widget in Jupyter, text in a
            terminal; plain prints without tqdm), 2 one line per epoch.
        metrics: ``"auto"`` (accuracy for cross-entropy losses), a list of names
            (``"accuracy"``) or functions ``(labels, predictions) -> float``.
        shuffle, seed: shuffle the samples each epoch, with this seed.
        jit: run each step's loss and gradients as a compiled program (``tv.jit``): traced
            on the first batch of each shape, then replayed without a tape.

    Returns:
        ``History``: a dict of per-epoch lists (``loss``, ``accuracy``, ``val_loss``, ...).

    Example:
        >>> import tapeviz as tv
        >>> x, y = tv.data.two_moons(64, seed=0)
        >>> model = tv.nn.Sequential([tv.nn.Dense(8, "tanh"), tv.nn.Dense(2)])
        >>> h = model.fit(x, y, "softmax_cross_entropy", "adam", epochs=2, verbose=0)
        >>> sorted(h)
        ['accuracy', 'loss']
    """
    loss_fn, opt = _losses.get(loss), _optim.get(optimizer)
    x, y = _pairs(x, y, "fit")
    if validation_data is not None:
        validation_data = _pairs(*validation_data, "fit: validation_data")
    _check_sizes(epochs, batch_size)
    _check_trainable(model)
    run = _Run(model, opt, loss_fn, resolve_metrics(metrics, loss_fn), batch_size)
    if jit:
        from ..jit.train import fit_step

        run.jitted = fit_step(model, loss_fn, _check_loss_value)
    history = History()
    cbs = CallbackList([history, *(callbacks or [])], progress_callback(verbose))
    steps = math.ceil(len(x) / batch_size)
    cbs.set_model(model, {"epochs": epochs, "steps": steps, "samples": len(x)})
    rng = np.random.default_rng(seed)
    model.stop_training = False
    model.train()
    cbs.call("on_train_begin", None)
    for epoch in range(epochs):
        cbs.call("on_epoch_begin", epoch, None)
        order = rng.permutation(len(x)) if shuffle else np.arange(len(x))
        logs = run.epoch(x, y, order, epoch, cbs)
        if validation_data is not None:
            logs.update(run.validate(*validation_data))
        cbs.call("on_epoch_end", epoch, {**logs, "step": run.step})
        if model.stop_training:
            break
    model.eval()
    cbs.call("on_train_end", {"step": run.step})
    return history


def _check_trainable(model) -> None:
    """A model whose every parameter is frozen has nothing to train: say so (minimize's own
    error would say the loss uses no trainable variable, true but not why)."""
    frozen = not getattr(model, "trainable", True)  # unbuilt: its weights will be frozen
    if frozen or (not model.trainable_parameters() and model.parameters()):
        raise ValueError(
            f"fit: every parameter of {type(model).__name__} {model.name!r} is frozen "
            "(trainable=False): nothing to train; set trainable = True on the layers to train"
        )


def _check_sizes(epochs, batch_size):
    for name, value, least in (("epochs", epochs, 0), ("batch_size", batch_size, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"fit: {name} must be an int >= {least}, got {value!r}")


class _Run:
    """The state of one ``fit``: what to train with, and the global step count."""

    def __init__(self, model, opt, loss_fn, metric_fns, batch_size):
        self.model, self.opt, self.loss_fn = model, opt, loss_fn
        self.metric_fns, self.batch_size, self.step = metric_fns, batch_size, 0
        self.jitted = None  # fit(jit=True): the compiled step

    def epoch(self, x, y, order, epoch, cbs) -> dict:
        """Train on every batch of ``order``; the sample-weighted mean of the batch logs."""
        totals, seen, bs = {}, 0, self.batch_size
        for batch in range(math.ceil(len(order) / bs)):
            idx = order[batch * bs : (batch + 1) * bs]
            if self.jitted is not None:
                logs = _jit_train_step(self, x[idx], y[idx])
            else:
                logs = _train_step(
                    self.model, self.opt, self.loss_fn, self.metric_fns, x[idx], y[idx]
                )
            self.step += 1
            seen += len(idx)
            for k, v in logs.items():
                totals[k] = totals.get(k, 0.0) + v * len(idx)
            cbs.call("on_batch_end", batch, {**logs, "step": self.step, "epoch": epoch})
            if self.model.stop_training:
                break
        return {k: v / max(seen, 1) for k, v in totals.items()}

    def validate(self, x, y) -> dict:
        bs = max(self.batch_size, 256)
        val = evaluate(self.model, x, y, self.loss_fn, batch_size=bs, metrics=self.metric_fns)
        self.model.train()
        return {f"val_{k}": v for k, v in val.items()}


def _train_step(model, opt, loss_fn, metric_fns, xb, yb) -> dict:
    out = []

    def objective():
        pred = model(Tensor(xb))
        value = loss_fn(yb, pred)
        _check_loss_value(value, loss_fn)
        out.append(pred)
        return value

    params = model.trainable_parameters()
    if not params:  # frozen by a callback while training (fit checked it at the start)
        _check_trainable(model)
    cost = opt.minimize(objective, var_list=params or None, return_cost=True)
    return _logs(cost, metric_fns, yb, out[0])


def _jit_train_step(run, xb, yb) -> dict:
    cost, pred, grads, params = run.jitted(xb, yb, run.model.training)
    run.opt.apply_gradients(list(zip(grads, params)), _who=f"{type(run.opt).__name__}.minimize")
    return _logs(cost, run.metric_fns, yb, pred)


def _logs(cost, metric_fns, yb, pred) -> dict:
    logs = {"loss": float(cost.item())}
    if metric_fns:
        pred = pred.numpy()
        for name, fn in metric_fns.items():
            logs[name] = float(fn(yb, pred))
    return logs


def _check_loss_value(value, loss_fn):
    name = getattr(loss_fn, "__name__", type(loss_fn).__name__)
    if not isinstance(value, Tensor):
        raise TypeError(
            f"fit: the loss {name} must return a scalar Tensor, got {type(value).__name__}"
        )
    if value.size != 1:
        raise ValueError(
            f"fit: the loss {name} must return a scalar, got a tensor of shape {value.shape}; "
            "reduce it, e.g. tv.mean(...)"
        )


def predict(model, x, batch_size: int = 256) -> Tensor:
    """``model``'s outputs for ``x``: eval mode, no tape, in batches; one Tensor."""
    x = _inputs(x, "predict")
    was_training = getattr(model, "training", False)
    if hasattr(model, "eval"):
        model.eval()
    try:
        with no_grad():
            parts = [
                model(Tensor(x[i : i + batch_size])).numpy() for i in range(0, len(x), batch_size)
            ]
    finally:
        if was_training:
            model.train()
    return Tensor(np.concatenate(parts) if parts else np.zeros((0,), np.float32))


def evaluate(model, x, y, loss, batch_size: int = 256, metrics="auto") -> dict:
    """Mean loss and metrics of ``model`` on ``(x, y)``: ``{"loss": ..., "accuracy": ...}``."""
    loss_fn = _losses.get(loss)
    x, y = _pairs(x, y, "evaluate")
    metric_fns = metrics if isinstance(metrics, dict) else resolve_metrics(metrics, loss_fn)
    pred = predict(model, x, batch_size)
    with no_grad():
        value = loss_fn(y, pred)
    _check_loss_value(value, loss_fn)
    logs = {"loss": float(value.item())}
    for name, fn in metric_fns.items():
        logs[name] = float(fn(y, pred.numpy()))
    return logs
