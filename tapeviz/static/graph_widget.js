// tapeviz GraphWidget view (anywidget ESM). Python owns the state: this view draws the
// `svg` trait, reports clicks through `selected`, toolbar choices through `mode`,
// `show_saved`, `show_values`, `expanded`, and draws the `details` dict Python computes.
// Answering at once: pictures drawn ahead (`views`, and custom messages {pictures: {state
// key: [svg, key]}, details: {id: details}}) are shown the moment a control is used; Python
// is told afterwards and answers with the same picture. A pointer resting on a group or a
// node asks for its picture or details. `frames`/`frame` highlight nodes in the SVG shown
// (the stepper), without a new layout. Text from the model is only ever set with
// textContent; the SVG is parsed and stripped of scripts.

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
const GROUP = /^[cm]\d+$/;
// a picture's key: graph_widget.py's state_key builds the same string
const keyOf = (s) => [s.mode, +!!s.show_saved, +!!s.show_values, s.collapse, s.rankdir,
  [...s.expanded].sort().join(",")].join("|");
// pictures over BIG_CHARS (a 5,000-op tape's: ~70 ms to parse) are parsed ahead only when a
// pointer rests on their control, so that idle parsing does not hold up the next input
// parsed pictures are DOM trees: at most PARSED_MAX of them, PARSED_CHARS of SVG text in all
const PICTURES_CHARS = 48e6, PARSED_MAX = 12, PARSED_CHARS = 2.5e6, PARSE_AHEAD_CHARS = 1.2e6;
const BIG_CHARS = 200e3;
// a highlight drawn in the browser: a class on the node and a marker, its words (colour
// never alone), as tapeviz/graph/style.py's HIGHLIGHTS write them
const MARKS = { current: "\u25b6 current", visited: "\u2713 visited", error: "\u2716 error",
  selected: "\u25cf selected" };
const NS = "http://www.w3.org/2000/svg";

// a node's box from its outline's own coordinates (no layout: works before it is shown)
function boxOf(shape) {
  if (shape.tagName === "ellipse") {
    const [cx, cy, rx, ry] = ["cx", "cy", "rx", "ry"].map((a) => +shape.getAttribute(a));
    return { x: cx - rx, y: cy - ry, width: 2 * rx, height: 2 * ry };
  }
  const nums = (shape.getAttribute(shape.tagName === "path" ? "d" : "points") || "")
    .match(/-?\d+(\.\d+)?/g) || [];
  const xs = nums.filter((_, i) => i % 2 === 0).map(Number), ys = nums.filter((_, i) => i % 2).map(Number);
  if (!xs.length) return { x: 0, y: 0, width: 0, height: 0 };
  const x = Math.min(...xs), y = Math.min(...ys);
  return { x, y, width: Math.max(...xs) - x, height: Math.max(...ys) - y };
}

function addMark(g, state) {
  const shape = g.querySelector(".tv-shape");
  if (!shape || !MARKS[state]) return;
  const bb = boxOf(shape), words = MARKS[state];
  const w = words.length * 5.4 + 8, h = 13;
  const mark = document.createElementNS(NS, "g");
  mark.setAttribute("class", "tv-mark tv-mark-" + state);
  const r = document.createElementNS(NS, "rect");
  // above the node, right-aligned; below it when the graph's top edge is too close
  const graph = g.closest("g.graph");
  const m = /translate\(\s*[-\d.]+[ ,]+([-\d.]+)\s*\)/.exec((graph && graph.getAttribute("transform")) || "");
  const top = m ? -Number(m[1]) : -Infinity;
  const x = bb.x + bb.width - w;
  const y = bb.y - h - 1 >= top ? bb.y - h - 1 : bb.y + bb.height + 1;
  for (const [k, v] of Object.entries({ x, y, width: w, height: h, rx: 3 })) r.setAttribute(k, v);
  const t = document.createElementNS(NS, "text");
  for (const [k, v] of Object.entries({ x: x + 4, y: y + 10, "font-size": "9.00" })) t.setAttribute(k, v);
  t.textContent = words;
  mark.append(r, t);
  g.appendChild(mark);
}

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
    box.addEventListener("change", () => go({ [name]: box.checked }));
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

  // VIEW_HEIGHT: the canvas's height at most (tapeviz/graph/widget.py's BOX_PX lays out for it)
  const VIEW_HEIGHT = 600, MIN_HEIGHT = 160;
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
  // open at a legible scale: the whole graph, centred, when it fits with text >= OPEN_PX
  // (Python groups the graph so that it does), else at that scale on the output (the loss)
  // and its neighbourhood, never on an empty corner; "fit" never goes below FIT_PX
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
    tx = Math.max(4, (viewport.clientWidth - size.w * scale) / 2); ty = 4;
    apply();
    if (!whole && fits < scale) {
      const nodes = canvas.querySelectorAll("svg g.node");
      const out = canvas.querySelector("svg g.node.tv-output") || nodes[nodes.length - 1];
      panTo(out);
    }
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
  const frameStates = () => {
    const i = model.get("frame");
    return (i > 0 && (model.get("frames") || [])[i - 1]) || {};
  };
  const focusHighlight = () => {
    const states = Object.assign({}, model.get("highlighted") || {}, frameStates());
    const id = Object.keys(states).find((k) => /^(current|error)/.test(String(states[k])));
    panTo(id && nodeById(id));
  };
  const nodeById = (id) => {
    const svg = canvas.querySelector("svg");
    return svg && svg.tvNodes ? svg.tvNodes.get(id) : null;
  };
  // how a redraw places the graph: "readable" (the opening view), "whole" (after "fit"),
  // "user" (after a zoom or pan: a redraw keeps the user's view)
  let view = "readable";
  let focusOn = null;  // a group just opened or folded: keep it in view
  const refit = () => {
    if (view !== "user") placeView(view === "whole");
    focusHighlight();
    if (focusOn) {
      const cluster = Array.from(canvas.querySelectorAll("g.cluster"))
        .find((c) => (c.querySelector("title") || {}).textContent === "cluster_x" + focusOn);
      panTo(cluster || nodeById(focusOn));
      focusOn = null;
    }
  };
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
      if (go({ collapse: "on" })) return; // collapse before text gets too small; then fit
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
  // `pointed`: the node under the pointer, or the one a linked view points at (show_code's
  // code lines, linked in the browser with jslink): outlined, with no new layout
  function point(id) {
    if (model.get("pointed") === id) return;
    model.set("pointed", id);
    model.save_changes();
  }
  function markPointed() {
    canvas.querySelectorAll("g.node.tv-pointed").forEach((g) => g.classList.remove("tv-pointed"));
    const g = model.get("pointed") ? nodeById(model.get("pointed")) : null;
    if (g) g.classList.add("tv-pointed");
  }
  let localSel = null;  // a click shown before Python has heard of it
  function markSelected() {
    const sel = localSel !== null ? localSel : model.get("selected");
    canvas.querySelectorAll("g.node.tv-selected").forEach((g) => g.classList.remove("tv-selected"));
    const g = sel ? nodeById(sel) : null;
    if (g) g.classList.add("tv-selected");
    showLinks("tv-pinned", g ? ofKey(g) : null);
  }
  const expandedWith = (id, on) => {
    const now = new Set(model.get("expanded") || []);
    if (on) now.add(id); else now.delete(id);
    return Array.from(now);
  };
  function toggleGroup(id, on) {
    focusOn = id;
    go({ expanded: expandedWith(id, on) });
  }
  function wireNode(g) {
    const title = g.querySelector("title");
    if (!title) return;
    g.dataset.tvId = title.textContent;
    g.style.cursor = "pointer";
    g.addEventListener("pointerenter", () => {
      showLinks("tv-hover", ofKey(g));
      const id = g.dataset.tvId;
      if (GROUP.test(id)) want({ expanded: expandedWith(id, true) });
      else { wantDetails(id); point(id); }
    });
    g.addEventListener("pointerleave", () => { showLinks("tv-hover", null); point(""); });
    g.addEventListener("click", (e) => {
      if (drag && drag.moved) return;
      e.stopPropagation();
      const id = g.dataset.tvId;
      if (GROUP.test(id)) { toggleGroup(id, true); return; }
      localSel = id;
      markSelected();
      if (details.has(id)) drawDetails(details.get(id));
      model.set("selected", id);
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
    label.addEventListener("pointerenter", () => want({ expanded: expandedWith(m[1], false) }));
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
        svg.tvNodes = new Map();
        svg.tvGroups = 0;
        svg.tvFontPx = minFontPx(svg);  // once per picture, not per swap
        svg.querySelectorAll("g.node").forEach((g) => {
          svg.tvNodes.set(g.dataset.tvId, g);
          if (GROUP.test(g.dataset.tvId)) svg.tvGroups++;
          const shape = g.querySelector("polygon, path, ellipse");  // the box, drawn first
          if (shape) shape.classList.add("tv-shape");
        });
      }
      // the oldest go, but not the picture drawn or the one before it
      let chars = text.length;
      parsed.forEach((_, t) => { chars += t.length; });
      for (const old of Array.from(parsed.keys())) {
        if (parsed.size < PARSED_MAX && chars <= PARSED_CHARS) break;
        if (old === drawnSvg || old === lastSvg) continue;
        parsed.delete(old);
        chars -= old.length;
      }
    } else parsed.delete(text);
    parsed.set(text, svg);  // the most recently used last: the first to go is the oldest
    return svg;
  }
  let lastSvg = null;  // the picture before: a fold goes back to it
  let bigAhead = 0;  // big pictures parsed ahead unasked: the first two Python sends, once
  function drawSvg(text) {
    if (text === drawnSvg) return false;
    lastSvg = drawnSvg;
    drawnSvg = text;
    const svg = parseSvg(text);
    canvas.replaceChildren();
    if (!svg) return true;
    canvas.appendChild(svg);
    fontPx = svg.tvFontPx;
    markSelected();
    markPointed();
    applyFrame();
    runSearch(false);
    drawCrumb();
    return true;
  }
  // the stepper's highlight of the step shown: classes and a marker on nodes of this SVG
  function applyFrame() {
    canvas.querySelectorAll("g.tv-mark").forEach((m) => m.remove());
    canvas.querySelectorAll("g.node[data-tv-state]").forEach((g) => delete g.dataset.tvState);
    for (const [id, state] of Object.entries(frameStates())) {
      const g = nodeById(id);
      if (!g) continue;
      g.dataset.tvState = state;
      addMark(g, state);
    }
  }
  // a breadcrumb for big graphs: how the view is collapsed, and a way back
  const foldAll = el("button", "tv-fold-all", "fold all");
  foldAll.addEventListener("pointerenter", () => want({ expanded: [] }));
  foldAll.addEventListener("click", () => go({ expanded: [] }));
  function drawCrumb() {
    const svg = canvas.querySelector("svg");
    const groups = svg && svg.tvNodes ? svg.tvGroups : 0;
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
  // pictures drawn ahead, by key: a control shows one at once, then tells Python, which
  // answers with the same SVG; `asked`: keys requested from Python, not yet come
  const pictures = new Map(), asked = new Set(), details = new Map();
  let picturesChars = 0, drawnKey = null;
  const stateOf = (over) => Object.assign({
    mode: model.get("mode"), show_saved: model.get("show_saved"),
    show_values: model.get("show_values"), collapse: model.get("collapse"),
    rankdir: model.get("rankdir"), expanded: model.get("expanded") || [],
  }, over || {});
  const highlighted = () => Object.keys(model.get("highlighted") || {}).length > 0;
  function remember(k, picture) {
    if (!k) return;
    if (pictures.has(k)) picturesChars -= pictures.get(k)[0].length;
    pictures.delete(k);
    pictures.set(k, picture);
    picturesChars += picture[0].length;
    while (picturesChars > PICTURES_CHARS && pictures.size > 1) {
      const [old, p] = pictures.entries().next().value;
      pictures.delete(old);
      picturesChars -= p[0].length;
    }
  }
  function show(k, picture) {
    drawnKey = k;
    drawSvg(picture[0]);
    drawKey(keyRow, picture[1]);
  }
  // a control: its picture at once when drawn ahead; Python is told either way
  function go(over) {
    const k = keyOf(stateOf(over)), ahead = !highlighted() && pictures.get(k);
    if (ahead) show(k, ahead);
    for (const [name, v] of Object.entries(over)) model.set(name, v);
    model.save_changes();
    if (ahead) requestAnimationFrame(refit);  // layout reads after the swap, not before
    return !!ahead;
  }
  let hoverKey = null;
  function want(over) {
    const s = stateOf(over), k = keyOf(s);
    hoverKey = k;
    if (pictures.has(k)) parseAhead([pictures.get(k)[0]], true);
    if (highlighted() || pictures.has(k) || asked.has(k)) return;
    asked.add(k);
    model.send({ want: s });
  }
  const detailsAsked = new Set();
  function wantDetails(id) {
    if (!id || details.has(id) || detailsAsked.has(id)) return;
    detailsAsked.add(id);
    model.send({ details: [id] });
  }
  function setMode(m) { go({ mode: m }); }
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

  let drawnDetails = null;
  function drawDetails(d) {
    const text = JSON.stringify(d || {});
    if (text !== drawnDetails) { drawnDetails = text; drawPanel(panel, d); }
    if (!panelShown && !panelTouched && (d || {}).id) {
      panelShown = true;
      drawChrome();
    }
  }
  // the picture Python sent: drawn unless the user has moved on to another view since
  function syncPicture() {
    const k = model.get("view_key"), picture = [model.get("svg"), model.get("key")];
    remember(k, picture);
    if (k && k !== keyOf(stateOf())) return;
    const changed = picture[0] !== drawnSvg;
    show(k, picture);
    if (changed) refit();
  }
  const rememberViews = () => {
    for (const [k, v] of Object.entries(model.get("views") || {})) remember(k, v);
  };
  // pictures parsed ahead, one per idle moment, likeliest first (the order Python sent
  // them); a pointer resting on a group puts its picture first
  const idle = window.requestIdleCallback || ((f) => setTimeout(f, 50));
  let parseQueue = [], pumping = false;
  const pump = () => {
    pumping = false;
    const text = parseQueue.shift();
    if (text !== undefined && !parsed.has(text)) parseSvg(text);
    if (parseQueue.length) { pumping = true; idle(pump); }
  };
  const parseAhead = (texts, first) => {
    texts = texts.filter((t) => t.length <= PARSE_AHEAD_CHARS && !parsed.has(t));
    parseQueue = first ? texts.concat(parseQueue) : parseQueue.concat(texts);
    parseQueue = parseQueue.slice(0, PARSED_MAX);
    if (parseQueue.length && !pumping) { pumping = true; idle(pump); }
  };
  rememberViews();
  remember(model.get("view_key"), [model.get("svg"), model.get("key")]);
  drawnKey = model.get("view_key");
  drawSvg(model.get("svg"));
  drawKey(keyRow, model.get("key"));
  drawToolbar();
  drawError();
  drawChrome();
  drawDetails(model.get("details"));
  requestAnimationFrame(refit);
  model.on("change:svg", syncPicture);
  model.on("change:key", syncPicture);
  model.on("change:views", () => {
    rememberViews();
    parseAhead(Object.values(model.get("views") || {}).map((v) => v[0]));
  });
  parseAhead(Object.values(model.get("views") || {}).map((v) => v[0]));
  model.on("msg:custom", (msg) => {
    if (!msg) return;
    const now = keyOf(stateOf()), small = [];
    for (const [k, picture] of Object.entries(msg.pictures || {})) {
      remember(k, picture);
      asked.delete(k);
      if (k === now && drawnKey !== now && !highlighted()) {  // asked for, then clicked
        show(k, picture);
        requestAnimationFrame(refit);
      } else if (k === hoverKey) parseAhead([picture[0]], true);
      else if (picture[0].length <= BIG_CHARS || bigAhead++ < 2) small.push(picture[0]);
    }
    parseAhead(small, false);
    for (const [id, d] of Object.entries(msg.details || {})) {
      details.set(id, d);
      detailsAsked.delete(id);
    }
  });
  model.send({ hello: true });  // Python sends what it drew ahead, and small graphs' details
  model.on("change:mode change:show_saved change:show_values change:has_backward", drawToolbar);
  model.on("change:error", drawError);
  model.on("change:selected", () => { localSel = null; markSelected(); });
  model.on("change:pointed", markPointed);
  model.on("change:details", () => {
    const d = model.get("details") || {};
    const sel = localSel !== null ? localSel : model.get("selected");
    if (!d.id || d.id === sel) drawDetails(d);  // not an earlier click's, arriving late
  });
  model.on("change:frame change:frames", () => {
    applyFrame();
    focusHighlight();
    const id = Object.keys(frameStates()).find((k) => frameStates()[k] === "current");
    if (id && details.has(id)) {  // the current node's details, before Python sends them
      localSel = id;
      markSelected();
      drawDetails(details.get(id));
    }
  });
  return () => {
    window.removeEventListener("pointermove", onMove);
    window.removeEventListener("pointerup", onUp);
    model.send({ bye: true });  // no view left: Python stops drawing ahead for it
    parsed.clear();
    pictures.clear();
  };
}

export default { render };
