"""``LessonGraphWidget``: the lesson graph with a class's toggles — plant micrograd's
``=``-instead-of-``+=`` bug, un-fuse fused kernels, and a font size for the lecture hall."""

from __future__ import annotations

import ipywidgets as W

from tapeviz.graph.lesson import caller_names, lesson_graph, lesson_min_scale, tensor_names
from tapeviz.present.ahead import serialized

from .common import error_html, static_bundle
from .highlight import wrap_svg


class LessonGraphWidget(W.VBox):
    """The lesson graph of ``tape`` (the caller's variable names, ``data | grad``) with
    toggles; ``graph`` is the ``LessonGraph`` drawn now.

    Args:
        tape: a ``tv.Tape`` whose gradient was taken.
        font_size: the starting font size (points).

    Example:
        >>> import tapeviz as tv
        >>> a = tv.tensor(3.0)
        >>> with tv.Tape() as tape:
        ...     tape.watch(a)
        ...     b = a + a
        >>> _ = tape.gradient(b, a)
        >>> w = LessonGraphWidget(tape)
        >>> w.bug.value = True  # a.grad is now 1, not 2
        >>> "grad 1 }" in w.graph.to_dot()
        True
    """

    def __init__(self, tape, font_size: int = 14):
        self.tape, self.graph = tape, None
        self.names = tensor_names(tape, caller_names(2))
        self.bug = W.ToggleButton(description="plant the = bug", icon="bug",
                                  tooltip="micrograd's self.grad = … instead of += …")  # fmt: skip
        self.unfuse = W.ToggleButton(description="un-fuse", icon="expand",
                                     tooltip="draw fused kernels as the ops they fuse")  # fmt: skip
        self.font = W.IntSlider(value=font_size, min=10, max=40, description="font")
        self.picture = W.HTML()
        for control in (self.bug, self.unfuse, self.font):
            control.observe(lambda _: self.redraw(), "value")
        super().__init__([W.HBox([self.bug, self.unfuse, self.font]), self.picture])
        self.redraw()

    @serialized
    def redraw(self) -> None:
        """Draw again with the toggles' current values (errors are shown in place)."""
        try:
            self.graph = lesson_graph(self.tape, self.names, accumulation_bug=self.bug.value,
                                      unfuse=self.unfuse.value, font_size=self.font.value)  # fmt: skip
            scale = lesson_min_scale(self.font.value)
            self.picture.value = wrap_svg(self.graph.to_svg(), min_scale=scale)
        except Exception as e:
            self.picture.value = error_html("LessonGraphWidget", e)

    def _repr_mimebundle_(self, include=None, exclude=None):
        return static_bundle(self, self.picture.value, "LessonGraphWidget")
