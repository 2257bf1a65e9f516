"""The training plot's axes: loss on the left, other metrics on the right, epochs marked."""

from __future__ import annotations

import numpy as np

from ...present.palette import GREY, SERIES

_COLOURS = SERIES
_STYLES = ["-", "--", "-.", ":"]


def _is_loss(key: str) -> bool:
    return "loss" in key


def draw_curves(fig, history: dict, epochs: list, log_loss: bool = False) -> None:
    """Draw every logged series against step; ``val_*`` epoch values as markers."""
    fig.clear()
    keys = [k for k in history if k != "step"]
    losses = [k for k in keys if _is_loss(k)] or keys[:1]
    metrics = [k for k in keys if k not in losses]
    epoch_keys = sorted({k for _, logs in epochs for k in logs})
    metrics += [k for k in epoch_keys if not _is_loss(k) and k not in metrics]
    axes = fig.subplots(1, 2 if metrics else 1, squeeze=False)[0]
    steps = np.asarray(history["step"], dtype=float)
    groups = [
        (axes[0], losses + [k for k in epoch_keys if _is_loss(k) and k not in losses], "loss")
    ]
    if metrics:
        groups.append((axes[1], metrics, "metrics"))
    for ax, names, title in groups:
        for i, k in enumerate(names):
            _series(ax, k, i, steps, history, epochs)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("step", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        if names:
            ax.legend(fontsize=7, loc="upper right" if title == "loss" else "lower right")
    if log_loss and np.nanmin([np.nanmin(history[k] or [np.nan]) for k in losses] or [0]) > 0:
        axes[0].set_yscale("log")
    if not keys:
        axes[0].text(
            0.5, 0.5, "no values yet", ha="center", va="center", transform=axes[0].transAxes
        )
    stride = -(-len(epochs) // 20)  # at most ~20 epoch lines: 60 of them would be a curtain
    for step, _ in epochs[stride - 1 :: stride] if epochs else ():
        for ax in axes:
            ax.axvline(step, color=GREY["mid"], linewidth=0.6, linestyle=":")


SMOOTH_FROM = 50  # series at least this long get a smoothed trend line over the raw one


def smooth(values, weight: float = 0.9):
    """Exponential moving average with bias correction (NaNs are skipped, kept as NaN).

    Example:
        >>> smooth(np.array([1.0, 1.0, np.nan, 1.0])).tolist()
        [1.0, 1.0, nan, 1.0]
    """
    out, avg, n = np.empty_like(values, dtype=float), 0.0, 0
    for i, v in enumerate(values):
        if np.isnan(v):
            out[i] = np.nan
            continue
        avg, n = weight * avg + (1 - weight) * v, n + 1
        out[i] = avg / (1 - weight**n)
    return out


def _series(ax, key, i, steps, history, epochs):
    colour, style = _COLOURS[i % len(_COLOURS)], _STYLES[i % len(_STYLES)]
    if key in history and len(history[key]):
        values = np.asarray(history[key], dtype=float)
        noisy = values.size >= SMOOTH_FROM
        ax.plot(steps, values, color=colour, linestyle=style, linewidth=1.0 if noisy else 1.5,
                alpha=0.35 if noisy else 1.0, label=f"{key} (raw)" if noisy else key)  # fmt: skip
        if noisy:  # per-batch values are noisy: the trend, as TensorBoard draws it
            ax.plot(steps, smooth(values), color=colour, linestyle=style, linewidth=2.0,
                    label=f"{key} (smoothed)")  # fmt: skip
    pts = [(s, logs[key]) for s, logs in epochs if key in logs]
    if pts and key.startswith("val_"):
        xs, ys = zip(*pts)
        ax.plot(
            xs,
            ys,
            color=colour,
            linestyle=style,
            marker="o",
            markersize=5 if len(pts) <= 20 else 2.5,  # many epochs: dots, not a bead chain
            label=f"{key} (epoch)",
        )
