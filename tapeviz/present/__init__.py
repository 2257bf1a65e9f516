"""tapeviz.present: how things look, in one place: the palette, units, and HTML reports.

Needs only the standard library. ``register_renderers()`` (called when ``tapeviz`` is
imported) tells ``tapeviz.core.display`` how to show core's plain-data reports as HTML.
"""

from __future__ import annotations

from .palette import OKABE_ITO
from .reports import register_renderers
from .units import fmt_bytes

__all__ = ["OKABE_ITO", "fmt_bytes", "register_renderers"]
