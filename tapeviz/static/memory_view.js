// tapeviz MemoryInspector view (anywidget ESM): every saved value of one tape, drawn here
// from data: a sortable table (the sort buttons are linked in the browser), the bars per
// node and the timeline of held bytes, the selected value's statistics and histogram, and
// the graph with its node highlighted. A row click shows all of it at once; the kernel is
// told afterwards (`selected`). Colour never alone: roles have hatches and a legend,
// highlights have words. HTML from the model was escaped by Python; the SVG is sanitized.

const NS = "http://www.w3.org/2000/svg";
const ROLE = { input: "#0072B2", output: "#E69F00", memory: "#CC79A7" };
const HATCH = { input: null, output: "M0,8 L8,0", memory: "M2,2 h1 M6,6 h1" };
const ROLES = ["input", "output", "memory"];
let uid = 0;

function el(tag, cls, text) {
  const n = document.createElement(tag);
  if (cls) n.className = cls;
  if (text !== undefined) n.textContent = text;
  return n;
}
function svgEl(tag, attrs, parent) {
  const n = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, v);
  if (parent) parent.appendChild(n);
  return n;
}
function text(parent, x, y, s, attrs) {
  const t = svgEl("text", Object.assign({ x, y, class: "tv-mem-text" }, attrs || {}), parent);
  t.textContent = s;
  return t;
}

// bytes in IEC units as tapeviz.present.units.fmt_bytes writes them (ties to even, as Python)
function fmtBytes(n) {
  const fixed = (x, d) => {
    const s = x * 10 ** d, f = Math.floor(s);
    const r = Math.abs(s - f - 0.5) < 1e-9 ? (f % 2 === 0 ? f : f + 1) : Math.round(s);
    return (r / 10 ** d).toFixed(d);
  };
  if (Math.abs(n) < 1024) return `${fixed(n, 0)} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let u = 0;
  n /= 1024;
  while (Math.abs(n) >= 1024 && u < units.length - 1) { n /= 1024; u++; }
  return `${fixed(n, 1)} ${units[u]}`;
}
// ticks at round multiples of B / KiB / MiB up to top (memory_plots.bytes_axis)
function byteTicks(top) {
  const unit = 1024 ** Math.max(0, Math.floor(Math.log(Math.max(top, 1)) / Math.log(1024)));
  const steps = [0.25, 0.5, 1, 2, 4, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000];
  let step = steps.find((s) => top / unit / s <= 6) || 1000;
  if (unit === 1) step = Math.max(step, 1);
  const out = [];
  for (let v = 0; v <= top + 1e-9; v += step * unit) out.push(v);
  return out;
}

function frame(box, w, h, m, title, top) {
  const svg = svgEl("svg", { width: w, height: h, viewBox: `0 0 ${w} ${h}`, class: "tv-mem-plot" }, box);
  const py = (v) => h - m.b - (v / top) * (h - m.t - m.b);
  for (const v of byteTicks(top)) {
    svgEl("line", { x1: m.l, x2: w - m.r, y1: py(v), y2: py(v), class: "tv-mem-grid" }, svg);
    text(svg, m.l - 4, py(v) + 4, fmtBytes(v), { "text-anchor": "end" });
  }
  svgEl("rect", { x: m.l, y: m.t, width: w - m.l - m.r, height: h - m.t - m.b, class: "tv-mem-frame" }, svg);
  text(svg, (w + m.l - m.r) / 2, 14, title, { "text-anchor": "middle", class: "tv-mem-text tv-mem-title" });
  return { svg, py };
}

function legend(svg, x, y, items) {
  items.forEach(([draw, words], k) => {
    const g = svgEl("g", { transform: `translate(${x}, ${y + k * 16})` }, svg);
    draw(g);
    text(g, 20, 9, words);
  });
}

function hatchDefs(svg, id) {
  const defs = svgEl("defs", {}, svg);
  for (const role of ROLES) {
    if (!HATCH[role]) continue;
    const p = svgEl("pattern", { id: `${id}-${role}`, width: 8, height: 8, patternUnits: "userSpaceOnUse" }, defs);
    svgEl("path", { d: HATCH[role], stroke: "#FFFFFF", "stroke-width": 1.5 }, p);
  }
}

function drawBars(box, bars, selected, id) {
  const w = 740, h = 230, m = { l: 62, r: 220, t: 24, b: 52 };  // the legend: 210 px
  const totals = bars.map((b) => ROLES.reduce((s, r) => s + b[r], 0));
  const top = Math.max(1, ...totals) * 1.18;
  const f = frame(box, w, h, m, "saved for backward, per node (shared values once)", top);
  hatchDefs(f.svg, id);
  if (!bars.length) { text(f.svg, w / 2, h / 2, "nothing saved", { "text-anchor": "middle" }); return; }
  const slot = (w - m.l - m.r) / bars.length, bw = Math.min(60, slot * 0.6);
  const long = bars.length * Math.max(...bars.map((b) => `${b.node_id}:${b.label}`.length)) > 48;
  bars.forEach((b, k) => {
    const x = m.l + slot * (k + 0.5) - bw / 2;
    let base = 0;
    for (const role of ROLES) {
      if (!b[role]) continue;
      const y = f.py(base + b[role]), hh = f.py(base) - y;
      svgEl("rect", { x, y, width: bw, height: hh, fill: ROLE[role], stroke: "#FFFFFF" }, f.svg);
      if (HATCH[role]) svgEl("rect", { x, y, width: bw, height: hh, fill: `url(#${id}-${role})` }, f.svg);
      base += b[role];
    }
    if (b.node_id === selected) {
      svgEl("rect", { x: x - 1, y: f.py(base) - 1, width: bw + 2, height: f.py(0) - f.py(base) + 2,
        fill: "none", stroke: "currentColor", "stroke-width": 2.5, class: "tv-mem-selected-bar" }, f.svg);
    }
    if (bars.length <= 16) text(f.svg, x + bw / 2, f.py(base) - 3, b.total, { "text-anchor": "middle" });
    const cx = x + bw / 2, cy = h - m.b + 13, label = `${b.node_id}:${b.label}`;
    text(f.svg, cx, cy, label, long ? { "text-anchor": "end", transform: `rotate(-30 ${cx} ${cy})` } : { "text-anchor": "middle" });
  });
  const present = ROLES.filter((r) => bars.some((b) => b[r]));
  const items = present.map((r) => [(g) => {
    svgEl("rect", { width: 14, height: 10, fill: ROLE[r] }, g);
    if (HATCH[r]) svgEl("rect", { width: 14, height: 10, fill: `url(#${id}-${r})` }, g);
  }, r]);
  if (selected !== null) items.push([(g) => svgEl("rect", { width: 14, height: 10, fill: "none", stroke: "currentColor", "stroke-width": 2 }, g), "selected"]);
  legend(f.svg, w - m.r + 10, m.t + 4, items);
}

function drawTimeline(box, tl, selected) {
  const w = 740, h = 230, m = { l: 62, r: 220, t: 24, b: 52 };  // the legend: 210 px
  const n = tl.held.length - 1, top = Math.max(1, ...tl.held) * 1.15;
  const f = frame(box, w, h, m, "saved bytes held; freed after the last backward step using them", top);
  const px = (i) => m.l + (i / Math.max(n, 1)) * (w - m.l - m.r);
  svgEl("rect", { x: px(0), y: m.t, width: px(tl.n_forward) - px(0), height: h - m.t - m.b, fill: "#F0E442", "fill-opacity": 0.15 }, f.svg);
  svgEl("line", { x1: px(tl.n_forward), x2: px(tl.n_forward), y1: m.t, y2: h - m.b, stroke: "#999999", "stroke-dasharray": "4 3" }, f.svg);
  text(f.svg, px(0) + 4, m.t + 12, "forward");
  text(f.svg, px(tl.n_forward) + 4, m.t + 12, tl.backward_known ? "backward" : "backward (estimated order)");
  let d = `M${px(0)},${f.py(tl.held[0])}`;
  for (let i = 1; i <= n; i++) d += `H${px(i)}V${f.py(tl.held[i])}`;
  svgEl("path", { d, fill: "none", stroke: "#0072B2", "stroke-width": 2 }, f.svg);
  const kx = px(tl.peak), ky = f.py(tl.held[tl.peak]);
  const peak = (g, x, y) => svgEl("path", { d: `M${x - 5},${y - 9}L${x + 5},${y - 9}L${x},${y - 1}Z`, fill: "#D55E00" }, g);
  peak(f.svg, kx, ky);
  if (n <= 40) {
    tl.names.forEach((name, i) => {
      const x = px(i + 1), y = h - m.b + 8;
      text(f.svg, x, y, name, { "text-anchor": "end", transform: `rotate(-90 ${x} ${y})`, class: "tv-mem-text tv-mem-small" });
    });
  }
  const items = [
    [(g) => svgEl("line", { x1: 0, x2: 14, y1: 5, y2: 5, stroke: "#0072B2", "stroke-width": 2 }, g), "held"],
    [(g) => peak(g, 7, 10), tl.peak_text],
  ];
  const frees = selected !== null && tl.frees[String(selected)];
  if (frees) {
    svgEl("line", { x1: px(frees[0]), x2: px(frees[0]), y1: m.t, y2: h - m.b, stroke: "currentColor", "stroke-width": 1.5, "stroke-dasharray": "2 2", class: "tv-mem-frees" }, f.svg);
    items.push([(g) => svgEl("line", { x1: 0, x2: 14, y1: 5, y2: 5, stroke: "currentColor", "stroke-width": 1.5, "stroke-dasharray": "2 2" }, g), frees[1]]);
  }
  legend(f.svg, w - m.r + 10, m.t + 4, items);
  text(f.svg, (w + m.l - m.r) / 2, h - 4, "after node (F = forward, B = backward step)", { "text-anchor": "middle" });
}

function drawHistogram(box, hist, title) {
  const w = 260, h = 120, m = { l: 34, r: 6, t: 16, b: 20 };
  const svg = svgEl("svg", { width: w, height: h, viewBox: `0 0 ${w} ${h}`, class: "tv-mem-plot tv-mem-hist" }, box);
  text(svg, w / 2, 11, title, { "text-anchor": "middle", class: "tv-mem-text tv-mem-title" });
  const max = Math.max(1, ...hist.counts), bw = (w - m.l - m.r) / hist.counts.length;
  hist.counts.forEach((c, i) => {
    const bh = (c / max) * (h - m.t - m.b);
    svgEl("rect", { x: m.l + i * bw, y: h - m.b - bh, width: Math.max(1, bw - 1), height: bh, fill: "#0072B2" }, svg);
  });
  const num = (v) => Number(v.toPrecision(3)).toString();
  text(svg, m.l, h - 6, num(hist.lo), { "text-anchor": "start" });
  text(svg, w - m.r, h - 6, num(hist.hi), { "text-anchor": "end" });
  text(svg, m.l - 4, m.t + 8, String(max), { "text-anchor": "end" });
  text(svg, m.l - 4, h - m.b, "0", { "text-anchor": "end" });
}

function safeSvg(textIn) {
  const doc = new DOMParser().parseFromString(textIn, "image/svg+xml");
  const svg = doc.documentElement;
  if (svg.nodeName !== "svg") return null;
  svg.querySelectorAll("script, foreignObject").forEach((n) => n.remove());
  svg.querySelectorAll("*").forEach((n) => {
    for (const a of Array.from(n.attributes)) if (a.name.startsWith("on")) n.removeAttribute(a.name);
  });
  return document.importNode(svg, true);
}

// Python's tuple order, for the sort keys of tapeviz/widgets/memory/panel.py (SORT_KEYS)
function cmp(a, b) {
  if (Array.isArray(a)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) { const c = cmp(a[i], b[i]); if (c) return c; }
    return a.length - b.length;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}
const SORT = {
  node: (r) => [r.node_id, r.role, r.name],
  kernel: (r) => [r.kernel, r.node_id],
  role: (r) => [r.role, r.node_id],
  shape: (r) => [(r.shape || []).length, r.shape || [], r.node_id],
  dtype: (r) => [r.dtype, r.node_id],
  bytes: (r) => [r.nbytes, -r.node_id],
};
const COLUMNS = ["node", "kernel", "role", "name", "shape", "dtype", "bytes"];

function render({ model, el: root }) {
  root.classList.add("tv-mem");
  const id = `tv-mem-${++uid}`;
  const scroll = el("div", "tv-mem-scroll");
  scroll.tabIndex = 0;
  const table = el("table", "tv-mem-table");
  const head = el("tr");
  COLUMNS.forEach((c) => head.appendChild(el("th", c === "bytes" ? "tv-num" : "", c)));
  table.appendChild(el("thead")).appendChild(head);
  const body = table.appendChild(el("tbody"));
  scroll.appendChild(table);
  const charts = el("div", "tv-mem-charts");
  const below = el("div", "tv-mem-below");
  const detail = el("div", "tv-mem-detail");
  const graph = el("div", "tv-mem-graph");
  below.append(detail, graph);
  root.append(scroll, charts, below);

  const rows = model.get("rows") || [];
  const trs = rows.map((r, i) => {
    const tr = el("tr");
    r.cells.forEach((c, k) => tr.appendChild(el("td", k === 6 ? "tv-num" : "", c)));
    tr.addEventListener("click", () => select(i));
    return tr;
  });
  let order = [];
  const sortRows = () => {
    const key = SORT[(model.get("sort_keys") || [])[model.get("sort_index")]] || SORT.node;
    const sign = model.get("descending") ? -1 : 1;
    order = rows.map((_, i) => i).sort((a, b) => sign * cmp(key(rows[a]), key(rows[b])));
    body.replaceChildren(...order.map((i) => trs[i]));
  };
  const svg = model.get("graph_svg") ? safeSvg(model.get("graph_svg")) : null;
  if (svg) { svg.classList.add("tv-mem-graph-svg"); graph.appendChild(svg); }
  if (svg) {  // scaled to its box's width, never below text of 11 px (then it scrolls)
    let font = Infinity;
    svg.querySelectorAll("text[font-size]").forEach((t) => {
      const v = parseFloat(t.getAttribute("font-size"));
      if (v > 0 && t.textContent.trim()) font = Math.min(font, v);
    });
    const floor = Number.isFinite(font) ? Math.min(1, 11 / ((font * 4) / 3)) : 1;
    svg.style.minWidth = `${Math.ceil(svg.width.baseVal.value * floor)}px`;
  }
  else graph.innerHTML = model.get("graph_html") || "";  // Python's escaped fallback strip
  const nodes = new Map();
  if (svg) {
    svg.querySelectorAll("g.node").forEach((g) => {
      nodes.set((g.querySelector("title") || {}).textContent, g);
      const shape = g.querySelector("polygon, path, ellipse");  // the box, drawn first
      if (shape) shape.classList.add("tv-shape");
    });
  }

  let shown = -2;
  function draw() {
    const i = model.get("selected");
    if (i === shown) return;
    shown = i;
    const row = i >= 0 ? rows[i] : null, nodeId = row ? row.node_id : null;
    trs.forEach((tr, k) => tr.classList.toggle("tv-sel", k === i));
    charts.replaceChildren();
    drawBars(charts, model.get("bars") || [], nodeId, id);
    drawTimeline(charts, model.get("timeline"), nodeId);
    detail.replaceChildren();
    if (!row) detail.appendChild(el("i", null, "select a row to see the saved value"));
    else {
      const d = (model.get("details") || [])[i] || {};
      const box = el("div");
      box.innerHTML = d.html || "";  // escaped in Python (memory_view.detail_data)
      detail.appendChild(box);
      if (d.hist) drawHistogram(detail, d.hist, d.title || "");
    }
    nodes.forEach((g) => g.classList.remove("tv-mem-sel"));
    graph.querySelectorAll(".tv-mark").forEach((m) => m.remove());
    const g = nodeId !== null && nodes.get(`n${nodeId}`);
    if (g) { g.classList.add("tv-mem-sel"); mark(g); }
  }
  function select(i) {
    if (i === model.get("selected")) return;
    model.set("selected", i);
    model.save_changes();
  }
  scroll.addEventListener("keydown", (e) => {
    if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
    e.preventDefault();
    const at = order.indexOf(model.get("selected"));
    const next = Math.min(order.length - 1, Math.max(0, at + (e.key === "ArrowDown" ? 1 : -1)));
    if (order.length) {
      select(order[next]);
      trs[order[next]].scrollIntoView({ block: "nearest" });
    }
  });
  sortRows();
  draw();
  model.on("change:selected", draw);
  model.on("change:sort_index change:descending", sortRows);
}

// "● selected" above the node's box, from its outline's coordinates
function mark(g) {
  const shape = g.querySelector(".tv-shape");
  if (!shape) return;
  const nums = (shape.getAttribute(shape.tagName === "path" ? "d" : "points") || "").match(/-?\d+(\.\d+)?/g) || [];
  const xs = nums.filter((_, i) => i % 2 === 0).map(Number), ys = nums.filter((_, i) => i % 2).map(Number);
  if (!xs.length) return;
  const words = "\u25cf selected", w = words.length * 5.4 + 8, h = 13;
  const x = Math.max(...xs) - w, y = Math.min(...ys) - h - 1;
  const m = svgEl("g", { class: "tv-mark" }, g);
  svgEl("rect", { x, y, width: w, height: h, rx: 3 }, m);
  const t = svgEl("text", { x: x + 4, y: y + 10, "font-size": "9.00" }, m);
  t.textContent = words;
}

export default { render };
