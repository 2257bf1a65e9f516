"""HTML for core's reports: ``check_grads``, ``audit`` and ``CompiledLayer.info()``.

core hands back plain data with a text ``__str__``; these functions draw the same content as
a small table for a notebook. ``register_renderers`` hooks them into
``tapeviz.core.display``, which the reports' ``_repr_html_`` consults.
"""

from __future__ import annotations

from tapeviz.core.check.audit import AuditReport
from tapeviz.core.check.report import FAILURE_CLASSES, GradCheckReport
from tapeviz.core.display import register_html, register_view
from tapeviz.core.engine import source_location

from .palette import FAIL, GREY, PASS
from .text import html_text

__all__ = ["audit_html", "gradcheck_html", "layer_info_html", "register_renderers"]

# by name: the module imports numba, which core only needs once a CompiledLayer is built
_LAYER_INFO = "tapeviz.core.backends.numba.layer_runtime.LayerInfo"
_COLUMNS = ("check", "result", "worst abs err", "index", "analytic", "numerical", "band",
            "failure class")  # fmt: skip


def register_renderers() -> None:
    """Show core's reports as HTML in Jupyter (idempotent)."""
    register_html(GradCheckReport, gradcheck_html)
    register_html(AuditReport, audit_html)
    register_html(_LAYER_INFO, layer_info_html)
    register_view("audit graph", "tapeviz.graph.audit_graph.audit_graph")


def _verdict(passed: bool, unresolved: int = 0) -> tuple[str, str]:
    """Colour and word: PASS, FAIL, or NOT CHECKABLE (no failure found, but some elements no
    finite difference could judge: neither pass nor fail)."""
    if passed and unresolved:
        return GREY["dark"], "NOT CHECKABLE"
    return (PASS, "PASS") if passed else (FAIL, "FAIL")


def gradcheck_html(report) -> str:
    """A ``GradCheckReport`` as a badge, one table row per check, then the notes."""
    unresolved = sum(c.n_unresolved for c in report.checks)
    colour, word = _verdict(report.passed, unresolved)
    head = (
        f"<span style='background:{colour};color:white;padding:1px 6px;border-radius:3px;"
        f"font-weight:bold'>{word}</span> <code>check_grads({html_text(report.function)})"
        f"</code> order {report.order}, {report.mode} mode, eps {report.eps:g}"
    )
    rows = [_check_row(c) for c in report.checks]
    rows += [
        f"<tr><td>—</td><td>FAIL</td><td colspan=5>{html_text(e['message'])}</td>"
        f"<td>{html_text(e['failure'])}</td></tr>"
        for e in report.errors
    ]
    notes = "".join(f"<li>{html_text(n)}</li>" for n in report.notes)
    header = "".join(f"<th>{c}</th>" for c in _COLUMNS)
    return (
        f"<div class='tv-gradcheck'>{head}<table><tr>{header}</tr>{''.join(rows)}</table>"
        f"{'<ul>' + notes + '</ul>' if notes else ''}</div>"
    )


def _check_row(c) -> str:
    colour, word = _verdict(c.passed, c.n_unresolved)
    cells = [html_text(c.label), f"<b style='color:{colour}'>{word}</b>"]
    if c.abs_err.size:
        w = c.worst_elements(1)[0]
        cells += [f"{w['abs_err']:.3g}", str(w["index"]), f"{w['analytic']:.6g}",
                  f"{w['numerical']:.6g}", f"{w['band']:.3g}"]  # fmt: skip
    else:
        cells += ["—"] * 5
    failure = c.verdict  # the mistake's pattern when one fits, else the failure class
    words = "" if c.pattern else FAILURE_CLASSES.get(failure, "")
    cells.append(f"<b>{html_text(failure)}</b><br><small>{html_text(words)}</small>")
    row = "<tr>" + "".join(f"<td>{x}</td>" for x in cells) + "</tr>"
    if c.n_unresolved and c.passed:
        return (
            row + f"<tr><td></td><td colspan=7><small>{html_text(c.resolution)}</small></td></tr>"
        )
    if c.passed or not c.abs_err.size:
        return row
    worst = "; ".join(
        f"{e['index']}: {e['analytic']:.4g} vs {e['numerical']:.4g}"
        for e in c.worst_elements(5)
        if not e["passed"]
    )
    detail = html_text(c.detail + (" " if c.detail else "")) + "worst (analytic vs numerical): "
    return row + f"<tr><td></td><td colspan=7><small>{detail}{html_text(worst)}</small></td></tr>"


def audit_html(report) -> str:
    """An ``AuditReport`` as a verdict line and, for each wrong node, all its text says: the
    node, its kind, the line that made it, the mistake, and each failing check's worst entry
    (analytic against numerical); then where the red graph is and the skipped nodes."""
    colour, word = _verdict(report.passed)
    head = (
        f"<b style='color:{colour}'>{word}</b> audit: {len(report.nodes)} nodes checked, "
        f"{len(report.failures)} wrong, {len(report.skipped)} skipped"
    )
    rows = "".join(_audit_rows(n) for n in report.failures)
    table = f"<table>{_AUDIT_HEADER}{rows}</table>" if rows else ""
    graph = (
        "<p><small><code>report.show_graph()</code> draws the graph with the wrong "
        f"node{'s' if len(report.failures) > 1 else ''} in red.</small></p>"
        if report.failures and report.tape is not None
        else ""
    )
    skipped = "".join(
        f"<li>node {s['node_id']} ({html_text(s['kernel'])}): {html_text(s['reason'])}</li>"
        for s in report.skipped
    )
    skipped = f"<details><summary>skipped</summary><ul>{skipped}</ul></details>" if skipped else ""
    return f"<div class='tv-audit'>{head}{table}{graph}{skipped}</div>"


_AUDIT_HEADER = (
    "<tr>"
    + "".join(
        f"<th>{c}</th>"
        for c in (
            "node",
            "what",
            "made at",
            "mistake",
            "check",
            "worst at",
            "analytic",
            "numerical",
        )
    )
    + "</tr>"
)


def _audit_rows(n) -> str:
    where = source_location.where(n.source, func=False) if n.source else "—"
    node = [f"<b>{n.node_id}</b> {html_text(n.label)}", html_text(n.what or n.style),
            f"<code>{html_text(where)}</code>"]  # fmt: skip
    rows = []
    for e in n.report.errors:
        rows.append(node + [f"<b style='color:{FAIL}'>{html_text(e['failure'])}</b>",
                            html_text(e["message"]), "", "", ""])  # fmt: skip
    for c in (c for c in n.report.checks if not c.passed):
        w = c.worst_elements(1)[0] if c.abs_err.size else None
        cells = (
            [str(w["index"]), f"{w['analytic']:.6g}", f"{w['numerical']:.6g}"] if w else [""] * 3
        )
        rows.append(node + [f"<b style='color:{FAIL}'>{html_text(c.verdict)}</b>",
                            html_text(c.label)] + cells)  # fmt: skip
    return "".join("<tr>" + "".join(f"<td>{x}</td>" for x in r) + "</tr>" for r in rows)


def layer_info_html(info) -> str:
    """A ``CompiledLayer.info()`` report as a two-column table."""
    body = "".join(
        f"<tr><th style='text-align:left'>{html_text(k)}</th>"
        f"<td style='text-align:left'>{html_text(str(v))}</td></tr>"
        for k, v in info.rows()
    )
    return f"<b>CompiledLayer {html_text(info.name)}</b><table>{body}</table>"
