// placing the picture: the opening scale, zoom, pan, "fit", and a node kept in view.
// v.place says how a redraw places the graph: "readable" (the opening view), "whole"
// (after "fit"), "user" (after a zoom or pan: a redraw keeps the user's view)

// legibility bounds: text >= 11 px in the first view, never < 9 px after "fit". The graph
// writes no text under MIN_PT points (tapeviz/graph/style.py; test_graph_legible.py checks it)
const OPEN_PX = 11, FIT_PX = 9;
// VIEW_HEIGHT: the canvas's height at most (tapeviz/graph/opening.py's BOX_PX lays out for it)
const VIEW_HEIGHT = 600, MIN_HEIGHT = 160;

function floors(v) {
  return { open: Math.min(1, OPEN_PX / v.fontPx), fit: FIT_PX / v.fontPx };
}

function apply(v) {
  v.canvas.style.transform = `translate(${v.tx}px, ${v.ty}px) scale(${v.scale})`;
  showZoom(v);
}

function zoomAt(v, f, cx, cy) {
  const s = Math.min(8, Math.max(floors(v).fit, v.scale * f));
  v.tx = cx - ((cx - v.tx) * s) / v.scale;
  v.ty = cy - ((cy - v.ty) * s) / v.scale;
  v.scale = s;
  apply(v);
}

function svgSize(v) {
  const svg = v.canvas.querySelector("svg");
  if (!svg) return null;
  return { w: svg.width.baseVal.value || 1, h: svg.height.baseVal.value || 1 };
}

function showZoom(v) {
  const size = svgSize(v), { viewport, scale } = v;
  if (!size) { v.zoomNote.textContent = ""; return; }
  const over = size.w * scale > viewport.clientWidth + 1 || size.h * scale > viewport.clientHeight + 1;
  const px = (v.fontPx * scale).toFixed(0);
  v.zoomNote.textContent = `${Math.round(scale * 100)}% \u00b7 text \u2265 ${px} px` + (over ? " \u00b7 drag to pan, scroll to zoom" : "");
}

// open at a legible scale: the whole graph, centred, when it fits with text >= OPEN_PX
// (Python groups the graph so that it does), else at that scale on the output (the loss)
// and its neighbourhood, never on an empty corner; "fit" never goes below FIT_PX
function placeView(v, whole) {
  const size = svgSize(v), { viewport } = v;
  if (!size || !viewport.clientWidth) return;
  const f = floors(v);
  const opening = Math.min(1, Math.max(f.open, (viewport.clientWidth - 8) / size.w));
  const natural = Math.min(VIEW_HEIGHT, Math.max(MIN_HEIGHT, Math.ceil(size.h * opening) + 10));
  viewport.style.height = `${natural}px`;
  v.panel.style.maxHeight = `${Math.max(natural, 320)}px`;
  const fits = Math.min((viewport.clientWidth - 8) / size.w, (viewport.clientHeight - 8) / size.h);
  v.scale = Math.min(1, Math.max(whole ? f.fit : f.open, fits));
  if (!(v.scale > 0)) v.scale = 1;
  v.tx = Math.max(4, (viewport.clientWidth - size.w * v.scale) / 2); v.ty = 4;
  apply(v);
  if (!whole && fits < v.scale) {
    const nodes = v.canvas.querySelectorAll("svg g.node");
    const out = v.canvas.querySelector("svg g.node.tv-output") || nodes[nodes.length - 1];
    panTo(v, out);
  }
}

function panTo(v, g) {
  const { viewport } = v;
  if (!g || !viewport.clientWidth) return;
  const b = viewport.getBoundingClientRect(), r = g.getBoundingClientRect();
  const inside = r.left >= b.left && r.right <= b.right && r.top >= b.top && r.bottom <= b.bottom;
  if (inside) return;
  const size = svgSize(v);
  // keep the graph's edges at the viewport's edges: no blank margin beyond them
  const clamp = (t, graph, room) =>
    (graph * v.scale <= room - 8 ? 4 : Math.min(4, Math.max(room - graph * v.scale - 4, t)));
  v.tx = clamp(v.tx + b.left + b.width / 2 - (r.left + r.width / 2), size.w, viewport.clientWidth);
  v.ty = clamp(v.ty + b.top + b.height / 2 - (r.top + r.height / 2), size.h, viewport.clientHeight);
  apply(v);
}

// pan (never zoom) so that the highlighted "current" / "error" node is in view
function focusHighlight(v) {
  const states = Object.assign({}, v.model.get("highlighted") || {}, frameStates(v));
  const id = Object.keys(states).find((k) => /^(current|error)/.test(String(states[k])));
  panTo(v, id && nodeById(v, id));
}

// the picture placed as v.place says, the highlight in view, and a group just opened or
// folded (v.focusOn) too
function refit(v) {
  if (v.place !== "user") placeView(v, v.place === "whole");
  focusHighlight(v);
  if (v.focusOn) {
    const cluster = Array.from(v.canvas.querySelectorAll("g.cluster"))
      .find((c) => (c.querySelector("title") || {}).textContent === "cluster_x" + v.focusOn);
    panTo(v, cluster || nodeById(v, v.focusOn));
    v.focusOn = null;
  }
}

// "fit": the whole graph; when its text would get too small, the groups collapse first
function fitWhole(v) {
  v.place = "whole";
  const size = svgSize(v), { viewport } = v;
  const fits = size && Math.min((viewport.clientWidth - 8) / size.w, (VIEW_HEIGHT - 8) / size.h);
  if (size && fits < floors(v).fit && v.model.get("collapse") === "auto") {
    if (go(v, { collapse: "on" })) return; // collapse before text gets too small; then fit
  }
  placeView(v, true);
}

function dragTo(v, e) {
  const d = v.drag;
  if (!d) return;
  const dx = e.clientX - d.x, dy = e.clientY - d.y;
  if (Math.abs(dx) + Math.abs(dy) > 3) { d.moved = true; v.place = "user"; }
  v.tx = d.tx + dx; v.ty = d.ty + dy;
  apply(v);
}

function wirePanZoom(v) {
  const { viewport } = v;
  let fitted = false;
  new ResizeObserver(() => {
    if (!fitted && viewport.clientWidth) { fitted = true; refit(v); }
  }).observe(viewport);
  const zoomCentre = (f) => { v.place = "user"; zoomAt(v, f, viewport.clientWidth / 2, viewport.clientHeight / 2); };
  v.zoomIn.addEventListener("click", () => zoomCentre(1.25));
  v.zoomOut.addEventListener("click", () => zoomCentre(0.8));
  v.fit.addEventListener("click", () => fitWhole(v));
  viewport.addEventListener("wheel", (e) => {
    e.preventDefault();
    v.place = "user";
    const r = viewport.getBoundingClientRect();
    zoomAt(v, e.deltaY < 0 ? 1.1 : 1 / 1.1, e.clientX - r.left, e.clientY - r.top);
  }, { passive: false });
  viewport.addEventListener("pointerdown", (e) => {
    v.drag = { x: e.clientX, y: e.clientY, tx: v.tx, ty: v.ty, moved: false };
  });
  v.onMove = (e) => dragTo(v, e);
  v.onUp = () => { setTimeout(() => { v.drag = null; }, 0); };
  window.addEventListener("pointermove", v.onMove);
  window.addEventListener("pointerup", v.onUp);
}
