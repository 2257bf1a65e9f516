"""What a tape saved for backward, as plain data: rows, totals, and a timeline of bytes.

A value saved by two nodes (``tanh`` saves its output, the ``mul`` after it saves the same
tensor as an input) is stored once; totals count it once, as ``Tape.saved_nbytes`` does.
In the backward pass a node's saved values are no longer needed after its step (the order
is ``tape.backward_steps``); a shared value is freed after the last step that uses it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["SavedRow", "MemoryReport", "memory_report"]


@dataclass
class SavedRow:
    """One saved-for-backward value of one node."""

    node_id: int
    label: str
    kernel: str
    role: str
    name: str
    shape: tuple
    dtype: str
    nbytes: int
    key: tuple  # identity of the stored value (shared values have the same key)
    shared: bool = False  # True: the same value is already counted on an earlier row
    released: bool = False
    saved: object = None  # the SavedValue
    node: object = None

    def value(self):
        """The saved array, or None when it was released and is no longer reachable."""
        s, node = self.saved, self.node
        d = s.tensor.peek() if s.tensor is not None else None
        if d is not None:
            return d
        t = linked_tensor(node, s)
        return None if t is None else t.peek()


@dataclass
class MemoryReport:
    """Rows, totals, peak and the bytes timeline of one tape."""

    rows: list
    total_bytes: int
    by_role: dict
    timeline: list  # [(phase, node_id, label, held_bytes, freed_keys)]
    peak_bytes: int
    peak_at: tuple  # (phase, node_id, label)
    backward_known: bool
    by_node: dict = field(default_factory=dict)  # node_id -> (label, bytes)


def linked_tensor(node, s):
    """The input or output tensor of ``node`` that saved value ``s`` stands for, if any."""
    if s.role == "input":
        return node.inputs.get(s.name)
    if s.role == "output" and isinstance(s.name, int) and s.name < len(node.outputs):
        return node.outputs[s.name]
    return None


def _key(node, s):
    t = s.tensor if s.tensor is not None else linked_tensor(node, s)
    return ("t", t.id) if t is not None else ("m", node.id, str(s.name))


def memory_report(tape) -> MemoryReport:
    """Every saved value of ``tape`` with totals, the peak and a forward/backward timeline.

    Args:
        tape: a ``tv.Tape`` (before or after ``gradient()``).

    Returns:
        A ``MemoryReport``; ``total_bytes`` counts shared values once.

    Example:
        >>> import tapeviz as tv
        >>> x = tv.tensor([1.0, 2.0])
        >>> with tv.Tape() as tape:
        ...     tape.watch(x)
        ...     y = tv.sum(tv.tanh(x))
        >>> memory_report(tape).total_bytes
        8
    """
    if not hasattr(tape, "nodes") or not hasattr(tape, "backward_steps"):
        raise TypeError(f"MemoryInspector: expected a tv.Tape, got {type(tape).__name__}")
    rows = _rows(tape)
    by_role = {"input": 0, "output": 0, "memory": 0}
    by_node = {}
    for r in rows:
        if not r.shared:
            by_role[r.role] = by_role.get(r.role, 0) + r.nbytes
            label, total = by_node.get(r.node_id, (r.label, 0))
            by_node[r.node_id] = (label, total + r.nbytes)
    timeline, backward_known = _timeline(tape, rows)
    peak = max(timeline, key=lambda p: p[3]) if timeline else ("forward", None, "", 0, [])
    total = sum(by_role.values())
    where = (peak[0], peak[1], peak[2])
    return MemoryReport(rows, total, by_role, timeline, peak[3], where, backward_known, by_node)


def _rows(tape) -> list:
    """One ``SavedRow`` per saved value; a value already stored earlier is marked shared."""
    rows, seen = [], set()
    for node in tape.nodes:
        for s in node.saved:
            key = _key(node, s)
            shape = tuple(s.shape) if s.shape is not None else None
            rows.append(
                SavedRow(
                    node.id,
                    str(node.label),
                    node.kernel,
                    s.role,
                    str(s.name),
                    shape,
                    str(s.dtype),
                    int(s.nbytes),
                    key,
                    shared=key in seen,
                    released=s.released,
                    saved=s,
                    node=node,
                )  # fmt: skip
            )
            seen.add(key)
    return rows


def _timeline(tape, rows):
    """Held bytes after each forward node, then after each backward step."""
    size = {r.key: r.nbytes for r in rows}
    users: dict = {}
    for r in rows:
        users.setdefault(r.key, set()).add(r.node_id)
    keys_of: dict = {}
    for r in rows:
        keys_of.setdefault(r.node_id, set()).add(r.key)
    held, total, out = set(), 0, []
    for node in tape.nodes:
        for k in keys_of.get(node.id, ()):
            if k not in held:
                held.add(k)
                total += size[k]
        out.append(("forward", node.id, str(node.label), total, []))
    order = [s.node_id for s in tape.backward_steps]
    known = bool(order)
    if not known:  # gradient() not run yet: the engine would go in reverse recording order
        order = [n.id for n in reversed(tape.nodes) if n.grad is not None]
    labels = {n.id: str(n.label) for n in tape.nodes}
    remaining = {k: set(v) for k, v in users.items()}
    for nid in order:
        freed = []
        for k in keys_of.get(nid, ()):
            remaining[k].discard(nid)
            if not remaining[k] and k in held:
                held.discard(k)
                total -= size[k]
                freed.append(k)
        out.append(("backward", nid, labels.get(nid, str(nid)), total, freed))
    if held:  # values of nodes the backward pass never reached: released at its end
        out.append(("end", None, "release()", 0, sorted(held, key=str)))
    return out, known
