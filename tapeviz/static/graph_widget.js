// tapeviz GraphWidget view (anywidget ESM). Python owns the state: this view draws the
// `svg` trait, reports clicks through `selected`, toolbar choices through `mode`,
// `show_saved`, `show_values`, and draws the `details` dict Python computes. Text from the
// model is only ever set with textContent; the SVG is parsed and stripped of scripts.

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function safeSvg(text) {
  const doc = new DOMParser().parseFromString(text || "<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml");
  const svg = doc.documentElement;
  if (svg.nodeName !== "svg") return null;
  svg.querySelectorAll("script, foreignObject").forEach((n) => n.remove());
  svg.querySelectorAll("*").forEach((n) => {
    for (const a of Array.from(n.attributes)) {
      if (a.name.startsWith("on")) n.removeAttribute(a.name);
    }
  });
  return document.importNode(svg, true);
}

function histogram(counts) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  const w = 160, h = 36, max = Math.max(1, ...counts), bw = w / counts.length;
  svg.setAttribute("width", w);
  svg.setAttribute("height", h);
  svg.setAttribute("class", "tv-hist");
  counts.forEach((c, i) => {
    const r = document.createElementNS(ns, "rect");
    const bh = (c / max) * (h - 2);
    r.setAttribute("x", i * bw + 1);
    r.setAttribute("y", h - bh);
    r.setAttribute("width", Math.max(bw - 2, 1));
    r.setAttribute("height", bh);
    const t = document.createElementNS(ns, "title");
    t.textContent = String(c);
    r.appendChild(t);
    svg.appendChild(r);
  });
  return svg;
}

function rowsTable(rows) {
  const table = el("table", "tv-rows");
  for (const [k, v] of rows || []) {
    const tr = el("tr");
    tr.appendChild(el("th", null, String(k)));
    tr.appendChild(el("td", null, String(v)));
    table.appendChild(tr);
  }
  return table;
}

function drawPanel(panel, details) {
  panel.replaceChildren();
  if (!details || !details.id) {
    panel.appendChild(el("div", "tv-hint", "Click a node to see its values, gradients and saved tensors."));
    return;
  }
  panel.appendChild(el("div", "tv-title", details.title || details.id));
  panel.appendChild(rowsTable(details.rows));
  for (const sec of details.sections || []) {
    const box = el("div", "tv-section");
    box.appendChild(el("div", "tv-section-title", sec.title));
    box.appendChild(rowsTable(sec.rows));
    if (sec.histogram) box.appendChild(histogram(sec.histogram.counts));
    if (sec.preview) box.appendChild(el("pre", "tv-preview", sec.preview));
    panel.appendChild(box);
  }
}

function render({ model, el: root }) {
  root.classList.add("tv-graph");
  const bar = el("div", "tv-toolbar");
  const modes = {};
  for (const m of ["forward", "backward", "both"]) {
    const b = el("button", "tv-mode", m);
    b.addEventListener("click", () => { model.set("mode", m); model.save_changes(); });
    modes[m] = b;
    bar.appendChild(b);
  }
  const toggles = {};
  for (const [name, text] of [["show_saved", "saved"], ["show_values", "values"]]) {
    const label = el("label", "tv-toggle");
    const box = el("input");
    box.type = "checkbox";
    box.addEventListener("change", () => { model.set(name, box.checked); model.save_changes(); });
    label.append(box, document.createTextNode(" " + text));
    toggles[name] = box;
    bar.appendChild(label);
  }
  const zoomIn = el("button", "tv-zoom", "+");
  const zoomOut = el("button", "tv-zoom", "\u2212");
  const fit = el("button", "tv-zoom", "fit");
  fit.title = "show the whole graph";
  bar.append(zoomIn, zoomOut, fit);

  const body = el("div", "tv-body");
  const viewport = el("div", "tv-viewport");
  const canvas = el("div", "tv-canvas");
  const message = el("div", "tv-error");
  const panel = el("div", "tv-panel");
  viewport.appendChild(canvas);
  body.append(viewport, panel);
  root.append(bar, message, body);

  const zoomNote = el("div", "tv-zoom-note");
  viewport.appendChild(zoomNote);
  // the smallest scale that keeps the 7 pt sub-labels legible (about 6.5 px on screen)
  const VIEW_HEIGHT = 480, MIN_HEIGHT = 160, READABLE = 0.7;
  let scale = 1, tx = 0, ty = 0;
  const apply = () => {
    canvas.style.transform = `translate(${tx}px, ${ty}px) scale(${scale})`;
    showZoom();
  };
  const zoomAt = (f, cx, cy) => {
    const s = Math.min(8, Math.max(0.1, scale * f));
    tx = cx - ((cx - tx) * s) / scale;
    ty = cy - ((cy - ty) * s) / scale;
    scale = s;
    apply();
  };
  // open at a readable scale: the whole graph when it fits at >= READABLE, else READABLE
  // (1 for a small graph), left/top aligned, to be panned, instead of an unreadable
  // thumbnail. "fit" shows the whole graph whatever the scale; a short graph gets a short box.
  const svgSize = () => {
    const svg = canvas.querySelector("svg");
    if (!svg) return null;
    return { w: svg.width.baseVal.value || 1, h: svg.height.baseVal.value || 1 };
  };
  const showZoom = () => {
    const size = svgSize();
    if (!size) { zoomNote.textContent = ""; return; }
    const over = size.w * scale > viewport.clientWidth + 1 || size.h * scale > viewport.clientHeight + 1;
    zoomNote.textContent = `${Math.round(scale * 100)}%` + (over ? " \u00b7 drag to pan, scroll to zoom, \u201cfit\u201d for the whole graph" : "");
  };
  const placeView = (whole) => {
    const size = svgSize();
    if (!size || !viewport.clientWidth) return;
    const opening = Math.min(1, Math.max(READABLE, (viewport.clientWidth - 8) / size.w));
    const natural = Math.min(VIEW_HEIGHT, Math.max(MIN_HEIGHT, Math.ceil(size.h * opening) + 10));
    viewport.style.height = `${natural}px`;
    panel.style.maxHeight = `${Math.max(natural, 320)}px`;
    const fits = Math.min((viewport.clientWidth - 8) / size.w, (viewport.clientHeight - 8) / size.h);
    scale = whole ? Math.min(1, fits) : Math.min(1, Math.max(READABLE, fits));
    if (!(scale > 0)) scale = 1;
    tx = 4; ty = 4;
    apply();
  };
  // pan (never zoom) so that the highlighted "current" / "error" node is in view: the
  // backprop stepper's current node, the audit's red node, even in a big graph
  const focusHighlight = () => {
    const states = model.get("highlighted") || {};
    const id = Object.keys(states).find((k) => /^(current|error)/.test(String(states[k])));
    const g = id && Array.from(canvas.querySelectorAll("g.node")).find((n) => n.dataset.tvId === id);
    if (!g || !viewport.clientWidth) return;
    const v = viewport.getBoundingClientRect(), r = g.getBoundingClientRect();
    const inside = r.left >= v.left && r.right <= v.right && r.top >= v.top && r.bottom <= v.bottom;
    if (inside) return;
    const size = svgSize();
    // keep the graph's edges at the viewport's edges: no blank margin beyond them
    const clamp = (t, graph, room) =>
      (graph * scale <= room - 8 ? 4 : Math.min(4, Math.max(room - graph * scale - 4, t)));
    tx = clamp(tx + v.left + v.width / 2 - (r.left + r.width / 2), size.w, viewport.clientWidth);
    ty = clamp(ty + v.top + v.height / 2 - (r.top + r.height / 2), size.h, viewport.clientHeight);
    apply();
  };
  // how a redraw places the graph: "readable" (the opening view), "whole" (after "fit"),
  // "user" (after a zoom or pan: a redraw keeps the user's view)
  let view = "readable";
  const refit = () => { if (view !== "user") placeView(view === "whole"); focusHighlight(); };
  let fitted = false;
  new ResizeObserver(() => {
    if (!fitted && viewport.clientWidth) { fitted = true; refit(); }
  }).observe(viewport);
  zoomIn.addEventListener("click", () => (view = "user") && zoomAt(1.25, viewport.clientWidth / 2, viewport.clientHeight / 2));
  zoomOut.addEventListener("click", () => (view = "user") && zoomAt(0.8, viewport.clientWidth / 2, viewport.clientHeight / 2));
  fit.addEventListener("click", () => { view = "whole"; placeView(true); });
  viewport.addEventListener("wheel", (e) => {
    e.preventDefault();
    view = "user";
    const r = viewport.getBoundingClientRect();
    zoomAt(e.deltaY < 0 ? 1.1 : 1 / 1.1, e.clientX - r.left, e.clientY - r.top);
  }, { passive: false });
  let drag = null;
  viewport.addEventListener("pointerdown", (e) => { drag = { x: e.clientX, y: e.clientY, tx, ty, moved: false }; });
  window.addEventListener("pointermove", onMove);
  window.addEventListener("pointerup", onUp);
  function onMove(e) {
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) { drag.moved = true; view = "user"; }
    tx = drag.tx + dx; ty = drag.ty + dy;
    apply();
  }
  function onUp() { setTimeout(() => { drag = null; }, 0); }

  function markSelected() {
    const sel = model.get("selected");
    canvas.querySelectorAll("g.node").forEach((g) => {
      g.classList.toggle("tv-selected", g.dataset.tvId === sel);
    });
  }
  function drawSvg() {
    const svg = safeSvg(model.get("svg"));
    canvas.replaceChildren();
    if (!svg) return;
    canvas.appendChild(svg);
    svg.querySelectorAll("g.node").forEach((g) => {
      const title = g.querySelector("title");
      if (!title) return;
      g.dataset.tvId = title.textContent;
      g.style.cursor = "pointer";
      g.addEventListener("click", (e) => {
        if (drag && drag.moved) return;
        e.stopPropagation();
        model.set("selected", g.dataset.tvId);
        model.save_changes();
      });
    });
    markSelected();
  }
  function drawToolbar() {
    for (const [m, b] of Object.entries(modes)) {
      b.classList.toggle("tv-active", model.get("mode") === m);
      b.disabled = m !== "forward" && !model.get("has_backward");
    }
    for (const [name, box] of Object.entries(toggles)) box.checked = model.get(name);
  }
  function drawError() {
    const text = model.get("error");
    message.textContent = text;
    message.style.display = text ? "block" : "none";
  }

  drawSvg();
  drawToolbar();
  drawError();
  drawPanel(panel, model.get("details"));
  requestAnimationFrame(refit);
  model.on("change:svg", () => { drawSvg(); refit(); });
  model.on("change:mode change:show_saved change:show_values change:has_backward", drawToolbar);
  model.on("change:error", drawError);
  model.on("change:selected", markSelected);
  model.on("change:details", () => drawPanel(panel, model.get("details")));
  return () => {
    window.removeEventListener("pointermove", onMove);
    window.removeEventListener("pointerup", onUp);
  };
}

export default { render };
