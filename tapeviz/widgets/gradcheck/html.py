"""A gradient check in words: the PASS/FAIL badge and the table of the worst entries."""

from __future__ import annotations

from ...present.palette import FAIL, GREY, PASS
from ...present.text import html_text
from .data import Check, failure_words, jacobian_entries, worst_entries


def badge_html(name: str, arg: int, now: Check) -> str:
    """The PASS or FAIL badge of the check ``now`` of argument ``arg`` of ``name``, in words."""
    ok = now.report.passed
    colour, word = (PASS, "&#10004; PASS") if ok else (FAIL, "&#10008; FAIL")
    if ok and now.report.outcome == "not checkable":  # no step judges it: neither
        colour, word = GREY["dark"], "? NOT CHECKABLE"
    c, sweep = now.check, now.sweep
    if c is None:
        words = failure_words(now.report, c)
        return (
            f"<div style='font-family:sans-serif;padding:4px'><span style='background:"
            f"{colour};color:white;padding:3px 10px;border-radius:4px;font-weight:bold'>"
            f"{word}</span> <b>{html_text(name)}</b>: "
            f"{html_text(words)}</div>"
        )
    where = c.worst_index
    worst = now.report.worst
    err = float(worst.abs_err.max(initial=0)) if worst is not None else 0.0
    verdict = html_text(sweep.verdict) if sweep is not None else ""
    return (
        f"<div style='font-family:sans-serif;padding:4px'><span style='background:{colour};"
        f"color:white;padding:3px 10px;border-radius:4px;font-weight:bold'>{word}</span> "
        f"<b>{html_text(name)}</b> argument {arg}: worst |error| "
        f"<b>{c.abs_err.max(initial=0):.3g}</b> at index {where} &middot; "
        f"{html_text(failure_words(now.report, c))} <small>(eps {now.eps:.1e}, "
        f"atol {c.atol:g}, rtol {c.rtol:g}; all arguments: worst {err:.3g})</small>"
        f"<br/><small>eps sweep: {verdict}</small></div>"
    )


def worst_html(f, arg: int, now: Check) -> str:
    """The worst entries of the check ``now`` (of the Jacobian when it is small), as a table."""
    if now.check is None:
        return ""
    small = jacobian_entries(f, now.args, arg, now.check)
    if small is None:
        what = "custom", "entries of dyᵀJ for a random dy (the Jacobian is too large to list)"
        entries = worst_entries(now.check)
    else:
        what = (
            "custom ∂y/∂x",
            (
                "entries of the Jacobian: only its diagonal (an elementwise function)"
                if small[0] == "diagonal"
                else "entries of the Jacobian"
            ),
        )
        entries = small[1]
    rows = "".join(
        f"<tr><td>{idx}</td><td>{a:.6g}</td><td>{n:.6g}</td><td>{e:.3g}</td>"
        f"<td>{'ok' if ok else '<b>outside</b>'}</td></tr>"
        for idx, a, n, e, ok in entries
    )
    return (
        f"<small>{what[1]}, worst first</small><table style='font-size:12px'><tr>"
        f"<th>entry</th><th>{what[0]}</th><th>numerical</th><th>|error|</th><th></th></tr>"
        f"{rows}</table>"
    )
