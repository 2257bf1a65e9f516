"""How tapeviz writes sizes: one ``fmt_bytes`` for the graph, the widgets and the reports."""

from __future__ import annotations

_IEC = ("KiB", "MiB", "GiB", "TiB")


def fmt_bytes(n) -> str:
    """A byte count in IEC binary units (1 KiB = 1024 B), as every tapeviz view writes it.

    Args:
        n: a number of bytes (int or float), or None when unknown.

    Returns:
        ``"512 B"`` below 1 KiB, else one decimal and the largest unit that keeps the number
        under 1024 (TiB at most); ``"?"`` for None.

    Example:
        >>> fmt_bytes(1536), fmt_bytes(8 * 1024**2), fmt_bytes(None)
        ('1.5 KiB', '8.0 MiB', '?')
    """
    if n is None:
        return "?"
    n = float(n)
    if abs(n) < 1024:
        return f"{n:.0f} B"
    for unit in _IEC:
        n /= 1024.0
        if abs(n) < 1024 or unit == _IEC[-1]:
            break
    return f"{n:.1f} {unit}"
