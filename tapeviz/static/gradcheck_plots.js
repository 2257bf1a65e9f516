// tapeviz GradCheckWidget plots (anywidget ESM): the kernel sends numbers (`data`), this
// view draws four small SVG plots at once, with the PASS/FAIL badge and the worst entries
// (HTML the kernel made, every value escaped). The sliders are linked in the browser to
// `point`, `eps`, `range`; positions the kernel checked ahead come as custom messages
// ({frames: [[i, j, views]], curves: {j: curve}}), so a slider's new position is drawn at
// once and the kernel's own `data` for it replaces it when it comes. Colour never alone:
// every series also has a marker or a dash pattern and words.

const NS = "http://www.w3.org/2000/svg";
const C = { blue: "#0072B2", orange: "#E69F00", green: "#009E73", red: "#D55E00", purple: "#CC79A7" };
const W = 300, H = 210, M = { l: 52, r: 10, t: 22, b: 34 };
let clipIds = 0, clipPrefix = "";  // a view's clip ids: the same on every draw of it
let views = 0;

function svgEl(tag, attrs, parent) {
  const n = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, v);
  if (parent) parent.appendChild(n);
  return n;
}
function text(parent, x, y, s, attrs) {
  const t = svgEl("text", Object.assign({ x, y, class: "tv-gc-text" }, attrs), parent);
  t.textContent = s;
  return t;
}
const finite = (v) => v !== null && Number.isFinite(v);

// an axis: linear or log10, with about five round ticks
function axis(values, log) {
  let vs = values.filter(finite);
  if (log) vs = vs.filter((v) => v > 0).map(Math.log10);
  let lo = Math.min(...vs), hi = Math.max(...vs);
  if (!vs.length) { lo = 0; hi = 1; }
  if (hi - lo < 1e-12) { lo -= 0.5; hi += 0.5; }
  const pad = log ? 0.3 : (hi - lo) * 0.06;
  lo -= pad; hi += pad;
  const step = log ? Math.max(1, Math.ceil((hi - lo) / 5))
    : Math.pow(10, Math.floor(Math.log10((hi - lo) / 5))) * [1, 2, 5, 10].find((m) => (hi - lo) / (Math.pow(10, Math.floor(Math.log10((hi - lo) / 5))) * m) <= 6);
  const ticks = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-12; v += step) ticks.push(v);
  const label = (v) => (log ? `1e${Math.round(v)}` : Number(v.toPrecision(3)).toString());
  const map = (v) => (log ? Math.log10(v) : v);
  return { lo, hi, ticks, label, map };
}

function frame(box, title, xs, ys, xLabel, yLabel) {
  const svg = svgEl("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: "tv-gc-plot" }, box);
  const px = (v) => M.l + ((xs.map(v) - xs.lo) / (xs.hi - xs.lo)) * (W - M.l - M.r);
  const py = (v) => H - M.b - ((ys.map(v) - ys.lo) / (ys.hi - ys.lo)) * (H - M.t - M.b);
  const area = { x: M.l, y: M.t, width: W - M.l - M.r, height: H - M.t - M.b };
  svgEl("rect", Object.assign({ class: "tv-gc-frame" }, area), svg);
  const clip = `tv-gc-clip-${clipPrefix}-${++clipIds}`;  // lines outside the axes' range stop at the frame
  svgEl("rect", area, svgEl("clipPath", { id: clip }, svg));
  for (const t of xs.ticks) {
    const x = M.l + ((t - xs.lo) / (xs.hi - xs.lo)) * (W - M.l - M.r);
    text(svg, x, H - M.b + 13, xs.label(t), { "text-anchor": "middle" });
  }
  for (const t of ys.ticks) {
    const y = H - M.b - ((t - ys.lo) / (ys.hi - ys.lo)) * (H - M.t - M.b);
    text(svg, M.l - 4, y + 4, ys.label(t), { "text-anchor": "end" });
  }
  text(svg, W / 2, 14, title, { "text-anchor": "middle", class: "tv-gc-text tv-gc-title" });
  text(svg, (W + M.l) / 2, H - 4, xLabel, { "text-anchor": "middle" });
  text(svg, 11, (H - M.b + M.t) / 2, yLabel, { "text-anchor": "middle", transform: `rotate(-90 11 ${(H - M.b + M.t) / 2})` });
  return { svg, px, py, clip: `url(#${clip})` };
}

function line(f, xs, ys, attrs) {
  let d = "", pen = false;
  xs.forEach((x, i) => {
    const y = ys[i];
    if (!finite(x) || !finite(y) || (f.log && y <= 0)) { pen = false; return; }
    d += `${pen ? "L" : "M"}${f.px(x).toFixed(1)},${f.py(y).toFixed(1)}`;
    pen = true;
  });
  return svgEl("path", Object.assign({ d, fill: "none", "clip-path": f.clip }, attrs), f.svg);
}

function key(box, items) {
  const row = document.createElement("div");
  row.className = "tv-gc-key";
  for (const [style, words] of items) {
    const item = document.createElement("span");
    const sw = document.createElement("span");
    sw.className = "tv-gc-swatch";
    sw.style.cssText = style;
    item.append(sw, document.createTextNode(words));
    row.appendChild(item);
  }
  box.appendChild(row);
}

function scatter(box, s) {
  const all = s.numerical.concat(s.analytic).filter(finite).concat([0]);
  const xs = axis(all, false), ys = axis(all, false);
  const f = frame(box, "custom vs numerical, per entry", xs, ys, "numerical (central difference)", "custom (reverse mode)");
  const lo = xs.lo, hi = xs.hi, band = [];
  for (let i = 0; i <= 40; i++) band.push(lo + ((hi - lo) * i) / 40);
  const up = band.map((v) => [f.px(v), f.py(v + s.atol + s.rtol * Math.abs(v))]);
  const dn = band.map((v) => [f.px(v), f.py(v - s.atol - s.rtol * Math.abs(v))]).reverse();
  svgEl("polygon", { points: up.concat(dn).map((p) => p.join(",")).join(" "), class: "tv-gc-band" }, f.svg);
  line(f, [lo, hi], [lo, hi], { stroke: "currentColor", "stroke-dasharray": "4 3" });
  s.numerical.forEach((n, i) => {
    const a = s.analytic[i];
    if (!finite(n) || !finite(a)) return;
    const x = f.px(n), y = f.py(a);
    if (s.passed[i]) svgEl("circle", { cx: x, cy: y, r: 3.5, fill: C.blue, stroke: "white" }, f.svg);
    else svgEl("path", { d: `M${x - 4},${y - 4}L${x + 4},${y + 4}M${x - 4},${y + 4}L${x + 4},${y - 4}`, stroke: C.red, "stroke-width": 2 }, f.svg);
  });
  key(box, [
    [`background:${C.green}40`, "tolerance band"], ["border-top:1px dashed", "y = x"],
    [`background:${C.blue};border-radius:50%`, "within tolerance"], [`border-top:2px solid ${C.red}`, "\u00d7 outside tolerance"],
  ]);
}

function errors(box, e) {
  const n = e.abs_err.length, floor = Math.max(1e-18, Math.min(...e.abs_err.filter((v) => finite(v) && v > 0), ...e.tol.filter(finite)) / 20);
  const shown = e.abs_err.map((v) => Math.max(finite(v) ? v : floor, floor));
  const xs = { lo: -0.7, hi: n - 0.3, ticks: n <= 12 ? [...Array(n).keys()] : [0, Math.floor(n / 2), n - 1], label: String, map: (v) => v };
  const ys = axis(shown.concat(e.tol.filter(finite)), true);
  const f = frame(box, "error per element", xs, ys, n > 1 && e.shape.length > 1 ? `element (row-major, ${e.shape.join("\u00d7")})` : "element", "|custom \u2212 numerical|");
  const bw = Math.max(1, ((W - M.l - M.r) / (n + 0.4)) * 0.8), base = f.py(Math.pow(10, ys.lo));
  shown.forEach((v, i) => {
    const bad = finite(e.abs_err[i]) && finite(e.tol[i]) ? e.abs_err[i] > e.tol[i] : true;
    const y = f.py(v);
    svgEl("rect", { x: f.px(i) - bw / 2, y, width: bw, height: Math.max(0, base - y), fill: bad ? C.red : C.blue, class: bad ? "tv-gc-bad" : "" }, f.svg);
  });
  line(f, e.tol.map((_, i) => i), e.tol, { stroke: "currentColor", "stroke-dasharray": "4 3" });
  key(box, [[`background:${C.blue}`, "within tolerance"], [`background:${C.red}`, "outside (red)"], ["border-top:1px dashed", "tolerance"]]);
}

function sweep(box, s) {
  if (s.message) { box.appendChild(document.createTextNode(s.message)); return; }
  const xs = axis(s.eps, true), ys = axis(s.error, true);
  const f = frame(box, "epsilon sweep", xs, ys, "eps", "|error| (projection)");
  f.log = true;
  line(f, s.eps, s.truncation, { stroke: C.orange, "stroke-dasharray": "5 3", "stroke-width": 1.5 });
  line(f, s.eps, s.rounding, { stroke: C.purple, "stroke-dasharray": "1 3", "stroke-width": 2 });
  line(f, s.eps, s.error, { stroke: C.blue, "stroke-width": 1.5 });
  s.eps.forEach((x, i) => finite(s.error[i]) && svgEl("circle", { cx: f.px(x), cy: f.py(s.error[i]), r: 2.2, fill: C.blue }, f.svg));
  const x = f.px(s.eps_now);
  svgEl("line", { x1: x, x2: x, y1: M.t, y2: H - M.b, stroke: "currentColor", class: "tv-gc-now" }, f.svg);
  key(box, [[`background:${C.blue}`, "|error|"], [`border-top:2px dashed ${C.orange}`, "slope 2"], [`border-top:2px dotted ${C.purple}`, "slope \u22121"], ["border-left:1px solid", `eps = ${s.eps_now.toExponential(1)}`]]);
}

function curve(box, c) {
  const xs = axis(c.x, false), ys = axis(c.f.concat(c.custom, c.numeric), false);
  const f = frame(box, "f and its derivatives", xs, ys, "x", "");
  line(f, c.x, c.f, { stroke: "currentColor", "stroke-width": 1.5 });
  line(f, c.x, c.custom, { stroke: C.blue, "stroke-width": 3 });
  line(f, c.x, c.numeric, { stroke: C.orange, "stroke-width": 1.8, "stroke-dasharray": "5 3" });
  const x = f.px(c.x_now);
  svgEl("line", { x1: x, x2: x, y1: M.t, y2: H - M.b, stroke: "currentColor", class: "tv-gc-now" }, f.svg);
  key(box, [["border-top:2px solid", "f(x)"], [`border-top:3px solid ${C.blue}`, "custom f\u2032(x)"], [`border-top:2px dashed ${C.orange}`, "numerical f\u2032(x)"]]);
}

// the new picture replaces only the parts that differ from what is drawn (the badge, each
// plot, the worst entries): the kernel's reply for a position drawn ahead repaints nothing
function draw(root, data) {
  clipIds = 0;
  clipPrefix = root.dataset.tvGc || (root.dataset.tvGc = String(++views));
  const grid = document.createElement("div");
  grid.className = "tv-gc-grid" + (data.one_d ? " tv-gc-2x2" : "");
  const cell = () => { const d = document.createElement("div"); d.className = "tv-gc-cell"; grid.appendChild(d); return d; };
  if (data.message) {
    const m = document.createElement("div");
    m.className = "tv-gc-message";
    m.textContent = data.message;
    grid.appendChild(m);
  }
  if (data.scatter) scatter(cell(), data.scatter);
  if (data.errors) errors(cell(), data.errors);
  if (data.sweep) sweep(cell(), data.sweep);
  if (data.curve) curve(cell(), data.curve);
  const badge = document.createElement("div");
  badge.className = "tv-gc-badge";
  badge.innerHTML = data.badge || "";  // the kernel's HTML: every value escaped there
  const worst = document.createElement("div");
  worst.className = "tv-gc-worst";
  worst.innerHTML = data.worst || "";
  const [b0, g0, w0] = root.children;
  if (root.children.length !== 3 || !g0.classList.contains("tv-gc-grid")) {
    root.replaceChildren(badge, grid, worst);
    return;
  }
  if (b0.outerHTML !== badge.outerHTML) b0.replaceWith(badge);
  if (w0.outerHTML !== worst.outerHTML) w0.replaceWith(worst);
  if (g0.className !== grid.className || g0.children.length !== grid.children.length) {
    g0.replaceWith(grid);
    return;
  }
  Array.from(grid.children).forEach((cell, i) => {
    const old = g0.children[i];
    if (old.outerHTML !== cell.outerHTML) old.replaceWith(cell);
  });
}

const near = (a, b) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

// the range drawn, cut out of f over the whole range slider (checked ahead)
function cut(wide, lo, hi, x_now) {
  const keep = wide.x.map((x, i) => (x >= lo - 1e-12 && x <= hi + 1e-12 ? i : -1)).filter((i) => i >= 0);
  const pick = (a) => keep.map((i) => a[i]);
  return { x: pick(wide.x), f: pick(wide.f), custom: pick(wide.custom), numeric: pick(wide.numeric), x_now };
}

// positions checked ahead that the view keeps, first in, first out. Measured
// (bench/house_measurements.md, simulated slider sessions): 6,000 draw 97-99% of the
// positions at once, 2,600 95-96%, 1,300 87%
const FRAMES_KEPT = 6000;

function keepFrames(frames, curves, msg) {
  for (const [i, j, frame] of msg.frames || []) frames.set(i + ":" + j, frame);
  for (const [j, c] of Object.entries(msg.curves || {})) if (c) curves.set(j, c);
  while (frames.size > FRAMES_KEPT) frames.delete(frames.keys().next().value);
}

function render({ model, el }) {
  el.classList.add("tv-gc-plots");
  const frames = new Map(), curves = new Map();
  // what to draw for the sliders as they are now: the kernel's data when it is for this
  // position, else the position checked ahead, else (not checked yet) what is drawn stays
  const compose = () => {
    const data = model.get("data") || {}, at = data.at, g = data.grid;
    const point = model.get("point"), eps = model.get("eps"), range = model.get("range") || [];
    const same = (a, b) => a && b && a.length === b.length && a.every((v, i) => near(v, b[i]));
    if (!at || !g) return data;
    const here = near(at.point, point) && near(at.eps, eps) && same(at.range, range);
    const i = Math.round((point - g.p0) / g.pstep), j = Math.round((Math.log10(eps) - g.e0) / g.estep);
    let out = Object.assign({}, data);
    // the position checked ahead, drawn at once, is also what the kernel's reply for it
    // draws: the first draw is the last (the reply's numbers may differ by rounding noise)
    const frame = frames.get(i + ":" + j);
    if (frame) Object.assign(out, frame);
    else if (!near(at.point, point) || !near(at.eps, eps)) return null;
    if (data.one_d && data.curve) {
      // f over the whole range slider, once it came: drawn ahead and for the kernel's reply
      // alike, so that the reply for a position drawn ahead draws the same curve
      const wide = curves.get(String(j));
      if (wide && range.length === 2) out.curve = cut(wide, range[0], range[1], point);
      else if (here) out.curve = data.curve;
      else if (near(at.eps, eps) && same(at.range, range)) out.curve = Object.assign({}, data.curve, { x_now: point });
      else return null;
    }
    return out;
  };
  // coalesce: draw once per animation frame, however many changes arrive
  let pending = false;
  const redraw = () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      const d = compose();
      if (d) draw(el, d);
    });
  };
  draw(el, model.get("data") || {});
  model.on("change:data", redraw);
  model.on("change:point change:eps change:range", redraw);
  model.on("msg:custom", (msg) => {
    if (msg) keepFrames(frames, curves, msg);
  });
  model.send({ hello: true });  // the kernel sends what it checked ahead
  return () => model.send({ bye: true });  // no view left: the kernel stops checking ahead
}

export default { render };
