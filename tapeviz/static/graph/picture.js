// the picture shown: an SVG text parsed once into a wired DOM tree (kept by its text: a
// mode switch back and forth re-uses it), then swapped into the canvas

// parsed pictures are DOM trees: at most PARSED_MAX of them, PARSED_CHARS of SVG text in all
const PARSED_MAX = 12, PARSED_CHARS = 2.5e6;

// the smallest font in a Graphviz SVG, in CSS px at scale 1 (its user unit is 1 pt = 4/3 px)
function minFontPx(svg) {
  let min = Infinity;
  svg.querySelectorAll("text[font-size]").forEach((t) => {
    const v = parseFloat(t.getAttribute("font-size"));
    if (v > 0 && t.textContent.trim()) min = Math.min(min, v);
  });
  return Number.isFinite(min) ? (min * 4) / 3 : 12;
}

// handlers on its nodes and groups' frames; its nodes by id, its group count, its smallest
// text: once per picture, not per swap
function wirePicture(v, svg) {
  svg.querySelectorAll("g.node").forEach((g) => wireNode(v, g));
  svg.querySelectorAll("g.cluster").forEach((g) => wireCluster(v, g));
  svg.tvNodes = new Map();
  svg.tvGroups = 0;
  svg.tvFontPx = minFontPx(svg);
  svg.querySelectorAll("g.node").forEach((g) => {
    svg.tvNodes.set(g.dataset.tvId, g);
    if (GROUP.test(g.dataset.tvId)) svg.tvGroups++;
    const shape = g.querySelector("polygon, path, ellipse");  // the box, drawn first
    if (shape) shape.classList.add("tv-shape");
  });
}

// room for `text`: the oldest go, but not the picture drawn or the one before it
function evictParsed(v, text) {
  const { parsed } = v;
  let chars = text.length;
  parsed.forEach((_, t) => { chars += t.length; });
  for (const old of Array.from(parsed.keys())) {
    if (parsed.size < PARSED_MAX && chars <= PARSED_CHARS) break;
    if (old === v.drawnSvg || old === v.lastSvg) continue;
    parsed.delete(old);
    chars -= old.length;
  }
}

function parseSvg(v, text) {
  let svg = v.parsed.get(text);
  if (svg === undefined) {
    svg = safeSvg(text);
    if (svg) wirePicture(v, svg);
    evictParsed(v, text);
  } else v.parsed.delete(text);
  v.parsed.set(text, svg);  // the most recently used last: the first to go is the oldest
  return svg;
}

// v.lastSvg: the picture before (a fold goes back to it); false when `text` is already shown
function drawSvg(v, text) {
  if (text === v.drawnSvg) return false;
  v.lastSvg = v.drawnSvg;
  v.drawnSvg = text;
  const svg = parseSvg(v, text);
  v.canvas.replaceChildren();
  if (!svg) return true;
  v.canvas.appendChild(svg);
  v.fontPx = svg.tvFontPx;
  markSelected(v);
  markPointed(v);
  applyFrame(v);
  runSearch(v, false);
  drawCrumb(v);
  return true;
}
