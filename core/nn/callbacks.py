"""The Keras-style callback protocol, ``History``, and the progress bar (tqdm.auto).

``fit`` calls, in order: ``on_train_begin(logs)``, then per epoch ``on_epoch_begin(epoch,
logs)``, ``on_batch_end(batch, logs)`` after each step (logs: ``loss``, metrics, ``step``),
``on_epoch_end(epoch, logs)`` (epoch means, ``val_*``), and finally ``on_train_end(logs)``.
Setting ``model.stop_training = True`` stops ``fit`` after the current batch.
"""

from __future__ import annotations

__all__ = ["Callback", "History", "CallbackList", "progress_callback"]


class Callback:
    """Base class for callbacks; override the hooks you need. ``fit`` sets ``self.model``
    (the model being trained) and ``self.params`` (``epochs``, ``steps``, ``samples``).

    Example:
        >>> import tapeviz as tv
        >>> class StopAt(tv.nn.Callback):
        ...     def on_batch_end(self, batch, logs=None):
        ...         if logs["step"] >= 3:
        ...             self.model.stop_training = True
    """

    model = None
    params: dict = {}

    def set_model(self, model) -> None:
        self.model = model

    def on_train_begin(self, logs=None):
        pass

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_batch_end(self, batch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass


class History(dict, Callback):
    """Per-epoch logs as a dict of lists: ``history["loss"]``, ``history["val_accuracy"]``;
    ``history.epoch`` lists the epoch numbers."""

    def __init__(self):
        dict.__init__(self)
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            if k != "step":
                self.setdefault(k, []).append(v)

    @property
    def history(self) -> dict:  # Keras spelling: history.history["loss"]
        return self

    def __repr__(self):
        last = ", ".join(f"{k}={v[-1]:.4g}" for k, v in self.items() if v)
        return f"History({len(self.epoch)} epochs{': ' + last if last else ''})"


class CallbackList:
    def __init__(self, callbacks, progress=None):
        self.callbacks = [c for c in callbacks if c is not None] + ([progress] if progress else [])
        for c in self.callbacks:
            if not isinstance(c, Callback):
                raise TypeError(f"fit: callbacks must be tv.nn.Callback, got {type(c).__name__}")

    def set_model(self, model, params):
        for c in self.callbacks:
            c.set_model(model)
            c.params = params

    def call(self, hook, *args):
        for c in self.callbacks:
            getattr(c, hook)(*args)


def _fmt(logs) -> str:
    return " - ".join(f"{k}: {v:.4f}" for k, v in logs.items() if k not in ("step", "epoch"))


class _PrintProgress(Callback):
    """One line per epoch (verbose=2, or verbose=1 without tqdm)."""

    def on_epoch_end(self, epoch, logs=None):
        print(f"Epoch {epoch + 1}/{self.params['epochs']} - {_fmt(logs or {})}", flush=True)


class _TqdmProgress(Callback):
    """One bar over all steps; its postfix shows the epoch and the running logs."""

    def __init__(self, tqdm):
        self._tqdm, self.bar = tqdm, None

    def on_train_begin(self, logs=None):
        total = self.params["epochs"] * self.params["steps"]
        self.bar = self._tqdm(total=total, unit="step", desc="fit", leave=True)

    def on_epoch_begin(self, epoch, logs=None):
        self.bar.set_description(f"epoch {epoch + 1}/{self.params['epochs']}")

    def on_batch_end(self, batch, logs=None):
        self.bar.update(1)
        self.bar.set_postfix_str(_fmt(logs or {}), refresh=False)

    def on_epoch_end(self, epoch, logs=None):
        self.bar.set_postfix_str(_fmt(logs or {}))

    def on_train_end(self, logs=None):
        self.bar.close()


def progress_callback(verbose):
    """The progress reporter for ``verbose`` (0, 1 or 2), or None."""
    if verbose in (0, False, None):
        return None
    if verbose == 2:
        return _PrintProgress()
    try:
        from tqdm.auto import tqdm
    except ImportError:  # tqdm is optional
        return _PrintProgress()
    return _TqdmProgress(tqdm)
