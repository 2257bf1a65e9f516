"""What a person sees, measured in the page: label sizes on screen, input-to-DOM latency.

Helpers for test_browser_graph.py; each runs one ``page.evaluate`` in JupyterLab.
"""

from __future__ import annotations

import statistics

# the smallest label text on screen in one picture, in CSS px: font-size (SVG user units)
# times the drawn width over the viewBox width (the widget's zoom, the host page's shrink)
LABEL_PX_JS = """(root) => {
  const min = (svg) => {
    let f = Infinity;
    svg.querySelectorAll('text[font-size]').forEach((t) => {
      if (t.textContent.trim()) f = Math.min(f, parseFloat(t.getAttribute('font-size')));
    });
    return f;
  };
  const svg = root.querySelector('.tv-canvas svg') || root.querySelector('svg');
  if (svg) {
    const vb = svg.viewBox.baseVal;
    return min(svg) * svg.getBoundingClientRect().width / vb.width;
  }
  const img = root.querySelector('img');
  if (!img || !img.src.startsWith('data:image/svg+xml')) return null;
  const text = img.src.includes(';base64,') ? atob(img.src.split(',')[1])
    : decodeURIComponent(img.src.slice(img.src.indexOf(',') + 1));
  const doc = new DOMParser().parseFromString(text, 'image/svg+xml').documentElement;
  const vb = doc.viewBox.baseVal;
  return min(doc) * img.getBoundingClientRect().width / vb.width;
}"""

# the smallest text on screen in a widget drawn with HTML and CSS-sized SVG (tables, plots):
# each element holding text, its computed font size times the scale of the SVG it is in
TEXT_PX_JS = """(root) => {
  let min = Infinity;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!n.textContent.trim() || !el || !el.getClientRects().length) continue;
    let px = parseFloat(getComputedStyle(el).fontSize);
    const svg = el.closest('svg');
    if (svg && svg.viewBox.baseVal && svg.viewBox.baseVal.width) {
      px *= svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    }
    min = Math.min(min, px);
  }
  return Number.isFinite(min) ? min : null;
}"""

# one input -> changed DOM: the action runs, a MutationObserver sees `snap(root)` differ
# from before (the DOM has changed: [0]), then one animation frame (about to paint: [1])
LATENCY_JS = """async (root, [action, selector, snapExpr, dwell]) => {
  const snap = new Function('root', 'return ' + snapExpr);
  const [sel, nth] = selector.split('@@');
  const target = nth === undefined ? root.querySelector(sel) : root.querySelectorAll(sel)[+nth];
  if (!target) return [-2, -2];
  // a pointer that rests on its target before the click (as a hand does): "hover:" actions
  if (action.startsWith('hover:')) {
    for (const type of ['pointerover', 'pointerenter', 'mouseover', 'mouseenter']) {
      target.dispatchEvent(new PointerEvent(type, {bubbles: !type.endsWith('enter')}));
    }
    await new Promise((r) => setTimeout(r, dwell));
    action = action.slice(6);
  }
  const before = snap(root);
  return await new Promise((resolve) => {
    let done = false;
    const finish = (v) => { if (!done) { done = true; obs.disconnect(); resolve(v); } };
    const t0 = performance.now();
    const obs = new MutationObserver(() => {
      if (done || snap(root) === before) return;
      const dom = performance.now() - t0;
      obs.disconnect();
      requestAnimationFrame(() => finish([dom, performance.now() - t0]));
    });
    obs.observe(root, {subtree: true, childList: true, attributes: true, characterData: true});
    if (action === 'click') target.dispatchEvent(new MouseEvent('click', {bubbles: true}));
    else if (action.startsWith('select:')) {  // a native <select>: choose an option
      target.selectedIndex = +action.slice(7);
      target.dispatchEvent(new Event('change', {bubbles: true}));
    } else if (action.startsWith('input:')) {  // type into a text field
      target.value = action.slice(6);
      target.dispatchEvent(new Event('input', {bubbles: true}));
    } else if (action.startsWith('wheel:')) {
      const r = target.getBoundingClientRect();
      target.dispatchEvent(new WheelEvent('wheel', {deltaY: +action.slice(6), bubbles: true,
        cancelable: true, clientX: r.left + r.width / 2, clientY: r.top + r.height / 2}));
    } else target.dispatchEvent(new KeyboardEvent('keydown', {key: action, bubbles: true}));
    setTimeout(() => finish([-1, -1]), 15000);
  });
}"""

SVG_SNAP = "root.querySelector('.tv-canvas svg')"


def label_px(locator) -> float | None:
    """The smallest label on screen in the picture under ``locator``, in CSS px."""
    return locator.evaluate(LABEL_PX_JS)


def text_px(locator) -> float | None:
    """The smallest text on screen in a widget's HTML and SVG, in CSS px."""
    return locator.evaluate(TEXT_PX_JS)


def latencies(
    page,
    root,
    steps: list[tuple[str, str]],
    snap: str,
    repeats: int,
    dwell: int = 200,
    gap: int = 150,
) -> list:
    """``[ms to changed DOM, ms to the next frame]`` after an input, ``repeats`` times,
    cycling through ``steps``.

    Args:
        page: the page (to let the kernel settle between inputs).
        root: locator of the widget.
        steps: ``(action, selector)`` pairs. Action: ``"click"``; a key name, sent as a
            keydown to the element; ``"select:<i>"`` (choose option i of a ``<select>``);
            ``"input:<text>"`` (type into a field); ``"wheel:<deltaY>"``; any of these after
            ``"hover:"``: the pointer rests on the element ``dwell`` ms first, and the clock
            starts at the input. A selector ending in ``@@<k>`` takes its k-th match.
        snap: a JS expression of ``root`` whose value changes when the view has changed.
        repeats: how many inputs.
        dwell: ms the pointer rests on the target in ``"hover:"`` actions.
        gap: ms between inputs (the kernel's echo of the last one arrives meanwhile).
    """
    out = []
    for i in range(repeats):
        action, selector = steps[i % len(steps)]
        ms = root.evaluate(LATENCY_JS, [action, selector, snap, dwell])
        assert ms[0] >= 0, f"no change in the view after {action} on {selector!r} ({ms})"
        out.append(ms)
        page.wait_for_timeout(gap)  # let the kernel's echo arrive before the next input
    return out


def p50_p95(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95
