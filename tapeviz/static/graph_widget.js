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

// the one-line key: a swatch (shape and border, not colour alone) and words per style drawn
function drawKey(box, key) {
  box.replaceChildren();
  for (const [fill, border, style, words] of key || []) {
    const item = el("span", "tv-key-item");
    const sw = el("span", "tv-swatch");
    if (style.startsWith("edge")) {
      sw.classList.add("tv-swatch-edge");
      sw.style.borderTop = `2px ${style.endsWith("dotted") ? "dotted" : "dashed"} ${border}`;
    } else {
      sw.style.background = fill;
      sw.style.border = `2px ${/dashed/.test(style) ? "dashed" : /dotted/.test(style) ? "dotted" : "solid"} ${border}`;
      if (/rounded/.test(style)) sw.style.borderRadius = "4px";
    }
    item.append(sw, document.createTextNode(words));
    box.appendChild(item);
  }
}

// the smallest font in a Graphviz SVG, in CSS px at scale 1 (its user unit is 1 pt = 4/3 px)
function minFontPx(svg) {
  let min = Infinity;
  svg.querySelectorAll("text[font-size]").forEach((t) => {
    const v = parseFloat(t.getAttribute("font-size"));
    if (v > 0 && t.textContent.trim()) min = Math.min(min, v);
  });
  return Number.isFinite(min) ? (min * 4) / 3 : 12;
}

// legibility bounds: text >= 11 px in the first view, never < 9 px after "fit". The graph
// writes no text under MIN_PT points (tapeviz/graph/style.py; test_graph_legible.py checks it)
const OPEN_PX = 11, FIT_PX = 9;

function render({ model, el: root }) {
  root.classList.add("tv-graph");
  const bar = el("div", "tv-toolbar");
  const modes = {};
  for (const m of ["forward", "backward", "both"]) {
    const b = el("button", "tv-mode", m);
    b.addEventListener("click", () => setMode(m));
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
  const fit = el("button", "tv-zoom tv-fit", "fit");
  fit.title = "show the whole graph (collapses groups before text gets too small)";
  const search = el("input", "tv-search");
  search.type = "search";
  search.placeholder = "find a name\u2026";
  const found = el("span", "tv-found");
  const keyBtn = el("button", "tv-key-toggle", "key");
  keyBtn.title = "show or hide the legend";
  const panelBtn = el("button", "tv-panel-toggle", "details");
  panelBtn.title = "show or hide the details panel";
  bar.append(zoomIn, zoomOut, fit, search, found, keyBtn, panelBtn);

  const keyRow = el("div", "tv-key");
  const crumb = el("div", "tv-crumb");
  const body = el("div", "tv-body");
  const viewport = el("div", "tv-viewport");
  const canvas = el("div", "tv-canvas");
  const message = el("div", "tv-error");
  const panel = el("div", "tv-panel");
  viewport.appendChild(canvas);
  body.append(viewport, panel);
  root.append(bar, keyRow, crumb, message, body);
  const zoomNote = el("div", "tv-zoom-note");
  viewport.appendChild(zoomNote);

  const VIEW_HEIGHT = 480, MIN_HEIGHT = 160;
  let scale = 1, tx = 0, ty = 0, fontPx = 12, drawnSvg = null;
  const floors = () => ({ open: Math.min(1, OPEN_PX / fontPx), fit: FIT_PX / fontPx });
  const apply = () => {
    canvas.style.transform = `translate(${tx}px, ${ty}px) scale(${scale})`;
    showZoom();
  };
  const zoomAt = (f, cx, cy) => {
    const s = Math.min(8, Math.max(floors().fit, scale * f));
    tx = cx - ((cx - tx) * s) / scale;
    ty = cy - ((cy - ty) * s) / scale;
    scale = s;
    apply();
  };
  const svgSize = () => {
    const svg = canvas.querySelector("svg");
    if (!svg) return null;
    return { w: svg.width.baseVal.value || 1, h: svg.height.baseVal.value || 1 };
  };
  const showZoom = () => {
    const size = svgSize();
    if (!size) { zoomNote.textContent = ""; return; }
    const over = size.w * scale > viewport.clientWidth + 1 || size.h * scale > viewport.clientHeight + 1;
    const px = (fontPx * scale).toFixed(0);
    zoomNote.textContent = `${Math.round(scale * 100)}% \u00b7 text \u2265 ${px} px` + (over ? " \u00b7 drag to pan, scroll to zoom" : "");
  };
  // open at a legible scale: the whole graph when it fits with text >= OPEN_PX, else at
  // that scale, left/top aligned, to be panned; "fit" never goes below FIT_PX
  const placeView = (whole) => {
    const size = svgSize();
    if (!size || !viewport.clientWidth) return;
    const f = floors();
    const opening = Math.min(1, Math.max(f.open, (viewport.clientWidth - 8) / size.w));
    const natural = Math.min(VIEW_HEIGHT, Math.max(MIN_HEIGHT, Math.ceil(size.h * opening) + 10));
    viewport.style.height = `${natural}px`;
    panel.style.maxHeight = `${Math.max(natural, 320)}px`;
    const fits = Math.min((viewport.clientWidth - 8) / size.w, (viewport.clientHeight - 8) / size.h);
    scale = Math.min(1, Math.max(whole ? f.fit : f.open, fits));
    if (!(scale > 0)) scale = 1;
    tx = 4; ty = 4;
    apply();
  };
  const panTo = (g) => {
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
  // pan (never zoom) so that the highlighted "current" / "error" node is in view
  const focusHighlight = () => {
    const states = model.get("highlighted") || {};
    const id = Object.keys(states).find((k) => /^(current|error)/.test(String(states[k])));
    panTo(id && nodeById(id));
  };
  const nodeById = (id) => Array.from(canvas.querySelectorAll("g.node")).find((n) => n.dataset.tvId === id);
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
  fit.addEventListener("click", () => {
    view = "whole";
    const size = svgSize();
    const fits = size && Math.min((viewport.clientWidth - 8) / size.w, (VIEW_HEIGHT - 8) / size.h);
    if (size && fits < floors().fit && model.get("collapse") === "auto") {
      model.set("collapse", "on"); // collapse before text gets too small; the redraw fits
      model.save_changes();
    }
    placeView(true);
  });
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

  // "both": the links forward op -> its gradient ops and saved value -> reader are drawn
  // for the hovered and the selected node only (class tv-of-<forward op> on both ends)
  const ofKey = (g) => {
    const own = Array.from(g.classList).find((c) => c.startsWith("tv-of-"));
    const id = g.dataset.tvId || "";
    return own || "tv-of-" + id.replace(/^s(\d+)$/, "n$1");
  };
  const showLinks = (cls, key) => {
    canvas.querySelectorAll("g.tv-xlink." + cls).forEach((e) => e.classList.remove(cls));
    if (key) canvas.querySelectorAll("g.tv-xlink." + CSS.escape(key)).forEach((e) => e.classList.add(cls));
  };
  function markSelected() {
    const sel = model.get("selected");
    let key = null;
    canvas.querySelectorAll("g.node").forEach((g) => {
      const on = g.dataset.tvId === sel;
      g.classList.toggle("tv-selected", on);
      if (on) key = ofKey(g);
    });
    showLinks("tv-pinned", key);
  }
  function toggleGroup(id, on) {
    const now = new Set(model.get("expanded") || []);
    if (on) now.add(id); else now.delete(id);
    model.set("expanded", Array.from(now));
    model.save_changes();
  }
  function wireNode(g) {
    const title = g.querySelector("title");
    if (!title) return;
    g.dataset.tvId = title.textContent;
    g.style.cursor = "pointer";
    g.addEventListener("pointerenter", () => showLinks("tv-hover", ofKey(g)));
    g.addEventListener("pointerleave", () => showLinks("tv-hover", null));
    g.addEventListener("click", (e) => {
      if (drag && drag.moved) return;
      e.stopPropagation();
      if (/^[cm]\d+$/.test(g.dataset.tvId)) { toggleGroup(g.dataset.tvId, true); return; }
      model.set("selected", g.dataset.tvId);
      model.save_changes();
    });
  }
  function wireCluster(g) {
    const title = g.querySelector("title");
    const m = title && /^cluster_x(c\d+)$/.exec(title.textContent);
    if (!m) return;
    const label = g.querySelector("text");
    if (!label) return;
    label.style.cursor = "pointer";
    label.addEventListener("click", (e) => { e.stopPropagation(); toggleGroup(m[1], false); });
  }
  // parsed, wired pictures by their text: a mode switch back and forth re-uses them
  const parsed = new Map();
  function parseSvg(text) {
    let svg = parsed.get(text);
    if (svg === undefined) {
      svg = safeSvg(text);
      if (svg) {
        svg.querySelectorAll("g.node").forEach(wireNode);
        svg.querySelectorAll("g.cluster").forEach(wireCluster);
      }
      if (parsed.size >= 6) parsed.delete(parsed.keys().next().value);
      parsed.set(text, svg);
    }
    return svg;
  }
  function drawSvg(text) {
    if (text === drawnSvg) return false;
    drawnSvg = text;
    const svg = parseSvg(text);
    canvas.replaceChildren();
    if (!svg) return true;
    canvas.appendChild(svg);
    fontPx = minFontPx(svg);
    markSelected();
    runSearch(false);
    drawCrumb();
    return true;
  }
  // a breadcrumb for big graphs: how the view is collapsed, and a way back
  const foldAll = el("button", "tv-fold-all", "fold all");
  foldAll.addEventListener("click", () => { model.set("expanded", []); model.save_changes(); });
  function drawCrumb() {
    const ids = Array.from(canvas.querySelectorAll("g.node")).map((g) => g.dataset.tvId);
    const groups = ids.filter((id) => /^[cm]\d+$/.test(id)).length;
    const open = (model.get("expanded") || []).length;
    crumb.replaceChildren();
    if (!groups && !open) { crumb.style.display = "none"; return; }
    crumb.style.display = "block";
    let text = `whole tape \u203a ${groups} collapsed groups (click one to open it)`;
    if (open) text += ` \u203a ${open} opened (click an opened frame's title to fold it) `;
    crumb.append(document.createTextNode(text));
    if (open) crumb.appendChild(foldAll);
  }
  // search by name: matches are outlined, Enter steps through them and pans to each
  let matches = [], at = -1;
  function runSearch(step) {
    const q = search.value.trim().toLowerCase();
    canvas.querySelectorAll("g.node.tv-match").forEach((g) => g.classList.remove("tv-match"));
    matches = q ? Array.from(canvas.querySelectorAll("g.node")).filter((g) => g.textContent.toLowerCase().includes(q)) : [];
    matches.forEach((g) => g.classList.add("tv-match"));
    found.textContent = q ? `${matches.length} found` : "";
    if (!matches.length) { at = -1; return; }
    at = step ? (at + 1) % matches.length : Math.max(0, Math.min(at, matches.length - 1));
    if (step || at === 0) { view = "user"; panTo(matches[at]); }
  }
  search.addEventListener("input", () => { at = -1; runSearch(true); });
  search.addEventListener("keydown", (e) => { if (e.key === "Enter") runSearch(true); });
  // the details panel stays folded (the graph gets its width) until a node is selected
  let keyShown = true, panelShown = !!(model.get("details") || {}).id, panelTouched = false;
  keyBtn.addEventListener("click", () => { keyShown = !keyShown; drawChrome(); });
  panelBtn.addEventListener("click", () => {
    panelShown = !panelShown;
    panelTouched = true;
    drawChrome();
    refit();
  });
  function drawChrome() {
    keyRow.style.display = keyShown ? "" : "none";
    keyBtn.classList.toggle("tv-active", keyShown);
    panel.style.display = panelShown ? "" : "none";
    panelBtn.classList.toggle("tv-active", panelShown);
  }
  // a mode drawn ahead switches here, at once; Python is told and answers with the same SVG
  function setMode(m) {
    const ahead = (model.get("views") || {})[m];
    if (ahead) { drawSvg(ahead[0]); drawKey(keyRow, ahead[1]); }  // the picture first
    model.set("mode", m);
    model.save_changes();
    if (ahead) requestAnimationFrame(refit);  // layout reads after the swap, not before
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

  drawSvg(model.get("svg"));
  drawKey(keyRow, model.get("key"));
  drawToolbar();
  drawError();
  drawChrome();
  drawPanel(panel, model.get("details"));
  requestAnimationFrame(refit);
  model.on("change:svg", () => { if (drawSvg(model.get("svg"))) refit(); });
  model.on("change:key", () => drawKey(keyRow, model.get("key")));
  const parseAhead = () => {
    const views = Object.values(model.get("views") || {});
    const idle = window.requestIdleCallback || ((f) => setTimeout(f, 50));
    idle(() => views.forEach(([text]) => parseSvg(text)));
  };
  model.on("change:views", parseAhead);
  parseAhead();
  model.on("change:mode change:show_saved change:show_values change:has_backward", drawToolbar);
  model.on("change:error", drawError);
  model.on("change:selected", markSelected);
  model.on("change:details", () => {
    drawPanel(panel, model.get("details"));
    if (!panelShown && !panelTouched && (model.get("details") || {}).id) {
      panelShown = true;
      drawChrome();
    }
  });
  return () => {
    window.removeEventListener("pointermove", onMove);
    window.removeEventListener("pointerup", onUp);
  };
}

export default { render };
