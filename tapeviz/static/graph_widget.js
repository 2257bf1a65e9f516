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
  bar.append(zoomIn, zoomOut, fit);

  const body = el("div", "tv-body");
  const viewport = el("div", "tv-viewport");
  const canvas = el("div", "tv-canvas");
  const message = el("div", "tv-error");
  const panel = el("div", "tv-panel");
  viewport.appendChild(canvas);
  body.append(viewport, panel);
  root.append(bar, message, body);

  let scale = 1, tx = 0, ty = 0;
  const apply = () => { canvas.style.transform = `translate(${tx}px, ${ty}px) scale(${scale})`; };
  const zoomAt = (f, cx, cy) => {
    const s = Math.min(8, Math.max(0.1, scale * f));
    tx = cx - ((cx - tx) * s) / scale;
    ty = cy - ((cy - ty) * s) / scale;
    scale = s;
    apply();
  };
  // fit the whole graph when it is small; a big one opens at a readable scale (>= 0.55),
  // left/top aligned, to be panned, instead of shrinking to an unreadable thumbnail
  const fitView = () => {
    const svg = canvas.querySelector("svg");
    if (!svg || !viewport.clientWidth) return;
    const w = svg.width.baseVal.value || 1, h = svg.height.baseVal.value || 1;
    const whole = Math.min((viewport.clientWidth - 8) / w, (viewport.clientHeight - 8) / h);
    scale = Math.min(1, Math.max(0.55, whole));
    if (!(scale > 0)) scale = 1;
    tx = 4; ty = 4;
    apply();
  };
  let fitted = false;
  new ResizeObserver(() => {
    if (!fitted && viewport.clientWidth) { fitted = true; fitView(); }
  }).observe(viewport);
  zoomIn.addEventListener("click", () => zoomAt(1.25, viewport.clientWidth / 2, viewport.clientHeight / 2));
  zoomOut.addEventListener("click", () => zoomAt(0.8, viewport.clientWidth / 2, viewport.clientHeight / 2));
  fit.addEventListener("click", fitView);
  viewport.addEventListener("wheel", (e) => {
    e.preventDefault();
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
    if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
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
  requestAnimationFrame(fitView);
  model.on("change:svg", () => { drawSvg(); fitView(); });
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
