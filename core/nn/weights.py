"""Saving and loading a module's weights as ``.npz`` (no pickle): read all, check, assign."""

from __future__ import annotations

import os

import numpy as np

__all__ = ["save_weights", "load_weights"]


def _named(model, where):
    named = model.named_parameters()
    if not named:
        raise ValueError(
            f"{where}: {type(model).__name__} {model.name!r} has no weights yet; build it first "
            "(call it on a batch, or model.build_for(input_shape))"
        )
    return dict(named)


def save_weights(model, path) -> None:
    """Write ``{parameter path: array}`` to ``path`` (exactly that name) as an ``.npz``.

    Example:
        >>> import tapeviz as tv, tempfile, os
        >>> m = tv.nn.Sequential([tv.nn.Dense(2)]).build_for((3,))
        >>> p = os.path.join(tempfile.mkdtemp(), "w.npz")
        >>> m.save_weights(p); m.load_weights(p)
    """
    arrays = {k: np.asarray(v.numpy()) for k, v in _named(model, "save_weights").items()}
    with open(os.fspath(path), "wb") as f:
        np.savez(f, **arrays)


def _read(path) -> dict:
    import zipfile  # with shutil, bz2, lzma ~7 ms: loaded when weights are, not by import tapeviz

    try:
        loaded = np.load(os.fspath(path), allow_pickle=False)
    except FileNotFoundError:
        raise FileNotFoundError(f"load_weights: no such file {os.fspath(path)!r}") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as e:
        raise ValueError(
            f"load_weights: {os.fspath(path)!r} is not a readable weights file (.npz without "
            f"pickled objects): {e}"
        ) from None
    if not isinstance(loaded, np.lib.npyio.NpzFile):  # a .npy file: one bare array
        raise ValueError(
            f"load_weights: {os.fspath(path)!r} holds a single array ({type(loaded).__name__}), "
            "not a weights archive; expected an .npz written by save_weights"
        )
    with loaded as npz:
        return {k: npz[k] for k in npz.files}


def load_weights(model, path) -> None:
    """Load weights saved by ``save_weights``. Every array is read and checked (names,
    shapes, dtypes) before any variable changes, so a bad file leaves the model as it was."""
    named = _named(model, "load_weights")
    arrays = _read(path)
    if not isinstance(arrays, dict) or set(arrays) != set(named):
        missing = sorted(set(named) - set(arrays))
        extra = sorted(set(arrays) - set(named))
        raise ValueError(
            f"load_weights: {os.fspath(path)!r} does not match {model.name!r}: missing "
            f"{missing or 'nothing'}, unexpected {extra or 'nothing'}"
        )
    for key, var in named.items():
        arr = arrays[key]
        if arr.shape != var.shape or arr.dtype.kind != var.dtype.kind:
            raise ValueError(
                f"load_weights: {key!r} in {os.fspath(path)!r} has shape {arr.shape} "
                f"{arr.dtype}, but the model expects {var.shape} {var.dtype}"
            )
    for key, var in named.items():
        var.assign(arrays[key])
