// what the nodes of the picture shown say, with no new layout: the selected one, the one
// pointed at, the links of "both", the stepper's highlights (`frames`/`frame`); a node's
// pointer and click handlers

const GROUP = /^[cm]\d+$/;  // a collapsed group's id (a node that opens)
// a highlight drawn in the browser: a class on the node and a marker, its words (colour
// never alone), as tapeviz/graph/style.py's HIGHLIGHTS write them
const MARKS = { current: "\u25b6 current", visited: "\u2713 visited", error: "\u2716 error",
  selected: "\u25cf selected" };
const NS = "http://www.w3.org/2000/svg";

function nodeById(v, id) {
  const svg = v.canvas.querySelector("svg");
  return svg && svg.tvNodes ? svg.tvNodes.get(id) : null;
}

// "both": the links forward op -> its gradient ops and saved value -> reader are drawn
// for the hovered and the selected node only (class tv-of-<forward op> on both ends)
function ofKey(g) {
  const own = Array.from(g.classList).find((c) => c.startsWith("tv-of-"));
  const id = g.dataset.tvId || "";
  return own || "tv-of-" + id.replace(/^s(\d+)$/, "n$1");
}

function showLinks(v, cls, key) {
  v.canvas.querySelectorAll("g.tv-xlink." + cls).forEach((e) => e.classList.remove(cls));
  if (key) v.canvas.querySelectorAll("g.tv-xlink." + CSS.escape(key)).forEach((e) => e.classList.add(cls));
}

// `pointed`: the node under the pointer, or the one a linked view points at (show_code's
// code lines, linked in the browser with jslink): outlined, with no new layout
function point(v, id) {
  if (v.model.get("pointed") === id) return;
  v.model.set("pointed", id);
  v.model.save_changes();
}

function markPointed(v) {
  v.canvas.querySelectorAll("g.node.tv-pointed").forEach((g) => g.classList.remove("tv-pointed"));
  const g = v.model.get("pointed") ? nodeById(v, v.model.get("pointed")) : null;
  if (g) g.classList.add("tv-pointed");
}

// v.localSel: a click shown before Python has heard of it
function selectedId(v) {
  return v.localSel !== null ? v.localSel : v.model.get("selected");
}

function markSelected(v) {
  const sel = selectedId(v);
  v.canvas.querySelectorAll("g.node.tv-selected").forEach((g) => g.classList.remove("tv-selected"));
  const g = sel ? nodeById(v, sel) : null;
  if (g) g.classList.add("tv-selected");
  showLinks(v, "tv-pinned", g ? ofKey(g) : null);
}

// a click on a node: selected at once, its details shown when the view holds them
function select(v, id) {
  v.localSel = id;
  markSelected(v);
  if (v.details.has(id)) drawDetails(v, v.details.get(id));
  v.model.set("selected", id);
  v.model.save_changes();
}

// a pointer resting on a group asks for its picture, on a node for its details
function wireNode(v, g) {
  const title = g.querySelector("title");
  if (!title) return;
  g.dataset.tvId = title.textContent;
  g.style.cursor = "pointer";
  g.addEventListener("pointerenter", () => {
    showLinks(v, "tv-hover", ofKey(g));
    const id = g.dataset.tvId;
    if (GROUP.test(id)) want(v, { expanded: expandedWith(v, id, true) });
    else { wantDetails(v, id); point(v, id); }
  });
  g.addEventListener("pointerleave", () => { showLinks(v, "tv-hover", null); point(v, ""); });
  g.addEventListener("click", (e) => {
    if (v.drag && v.drag.moved) return;
    e.stopPropagation();
    const id = g.dataset.tvId;
    if (GROUP.test(id)) toggleGroup(v, id, true);
    else select(v, id);
  });
}

function frameStates(v) {
  const i = v.model.get("frame");
  return (i > 0 && (v.model.get("frames") || [])[i - 1]) || {};
}

// the stepper's highlight of the step shown: classes and a marker on nodes of this SVG
function applyFrame(v) {
  v.canvas.querySelectorAll("g.tv-mark").forEach((m) => m.remove());
  v.canvas.querySelectorAll("g.node[data-tv-state]").forEach((g) => delete g.dataset.tvState);
  for (const [id, state] of Object.entries(frameStates(v))) {
    const g = nodeById(v, id);
    if (!g) continue;
    g.dataset.tvState = state;
    addMark(g, state);
  }
}

// the stepper moved: its highlight, the current node in view, and that node's details
// when the view holds them (before Python sends them)
function onFrame(v) {
  applyFrame(v);
  focusHighlight(v);
  const id = Object.keys(frameStates(v)).find((k) => frameStates(v)[k] === "current");
  if (id && v.details.has(id)) {
    v.localSel = id;
    markSelected(v);
    drawDetails(v, v.details.get(id));
  }
}

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
  for (const [k, val] of Object.entries({ x, y, width: w, height: h, rx: 3 })) r.setAttribute(k, val);
  const t = document.createElementNS(NS, "text");
  for (const [k, val] of Object.entries({ x: x + 4, y: y + 10, "font-size": "9.00" })) t.setAttribute(k, val);
  t.textContent = words;
  mark.append(r, t);
  g.appendChild(mark);
}
