"""``AuditReport.show_graph()``: the audited tape's graph with each wrong node red.

core cannot import the widgets, so ``tapeviz.present`` registers this function by name
(``tapeviz.core.display.register_view``) and core imports it only when a report asks.
"""

from __future__ import annotations

from .widget.widget import GraphWidget

__all__ = ["audit_graph", "node_words"]


def node_words(node_audit) -> str:
    """What a wrong node's mistake is, short enough to write on the node: the first
    verdict up to its colon ("the sign is flipped", "looks like the gradient at -x")."""
    verdicts = node_audit.report.verdicts
    return verdicts[0].split(":")[0] if verdicts else ""


def audit_graph(report, **options) -> GraphWidget:
    """A ``GraphWidget`` of ``report.tape`` (``options`` go to it) with every node the audit
    found wrong highlighted as an error, its mistake written on it.

    Args:
        report: an ``AuditReport`` that holds its tape (``tv.audit`` keeps it).
        **options: ``GraphWidget`` keyword arguments (``backward=True``, ``collapse``...).
    """
    graph = GraphWidget(report.tape, **options)
    return graph.highlight({n.node_id: ("error", node_words(n)) for n in report.failures})
