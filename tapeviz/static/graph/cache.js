// pictures drawn ahead and the messages with Python. Python sends each picture with the
// state it shows (`views`, `view_state`, and custom messages {pictures: [[state, svg,
// legend], ...], details: {id: details}}); the view keys them here, and only here, by
// keyOf. A control shows the picture it leads to at once when the view holds it, then tells
// Python, which answers with the same picture; a pointer resting on a control asks for it.

// a picture's key: the one definition (Python keys its own cache by the state's fields)
const keyOf = (s) => [s.mode, +!!s.show_saved, +!!s.show_values, s.collapse, s.rankdir,
  [...s.expanded].sort().join(",")].join("|");
// pictures kept: PICTURES_CHARS of SVG text in all. Measured (bench/house_measurements.md,
// sessions of 30 clicks on a 1,000-op tape): 48 MB showed 80-100% of the clicks at once,
// 16 MB 67-83%, 8 MB 53-77%. Pictures over BIG_CHARS (a 5,000-op tape's: ~70 ms to parse)
// are parsed ahead only when a pointer rests on their control, so that idle parsing does
// not hold up the next input
const PICTURES_CHARS = 48e6, PARSE_AHEAD_CHARS = 1.2e6, BIG_CHARS = 200e3;
const idle = window.requestIdleCallback || ((f) => setTimeout(f, 50));

// the view's state as Python's traits say, with `over` the controls' change
function stateOf(v, over) {
  const { model } = v;
  return Object.assign({
    mode: model.get("mode"), show_saved: model.get("show_saved"),
    show_values: model.get("show_values"), collapse: model.get("collapse"),
    rankdir: model.get("rankdir"), expanded: model.get("expanded") || [],
  }, over || {});
}

const highlighted = (v) => Object.keys(v.model.get("highlighted") || {}).length > 0;
// the key of the picture in `svg`; "" when highlighted (not reused for another view)
const viewKey = (v) => (v.model.get("view_state") || {}).mode ? keyOf(v.model.get("view_state")) : "";

function remember(v, k, picture) {
  if (!k) return;
  const { pictures } = v;
  if (pictures.has(k)) v.picturesChars -= pictures.get(k)[0].length;
  pictures.delete(k);
  pictures.set(k, picture);
  v.picturesChars += picture[0].length;
  while (v.picturesChars > PICTURES_CHARS && pictures.size > 1) {
    const [old, p] = pictures.entries().next().value;
    pictures.delete(old);
    v.picturesChars -= p[0].length;
  }
}

function show(v, k, picture) {
  v.drawnKey = k;
  drawSvg(v, picture[0]);
  drawLegend(v.keyRow, picture[1]);
}

// a control: its picture at once when drawn ahead; Python is told either way
function go(v, over) {
  const k = keyOf(stateOf(v, over)), ahead = !highlighted(v) && v.pictures.get(k);
  if (ahead) show(v, k, ahead);
  for (const [name, val] of Object.entries(over)) v.model.set(name, val);
  v.model.save_changes();
  if (ahead) requestAnimationFrame(() => refit(v));  // layout reads after the swap, not before
  return !!ahead;
}

// a pointer rests on a control: its picture parsed first, or asked for
function want(v, over) {
  const s = stateOf(v, over), k = keyOf(s);
  v.hoverKey = k;
  if (v.pictures.has(k)) parseAhead(v, [v.pictures.get(k)[0]], true);
  if (highlighted(v) || v.pictures.has(k) || v.asked.has(k)) return;
  v.asked.add(k);
  v.model.send({ want: s });
}

function wantDetails(v, id) {
  if (!id || v.details.has(id) || v.detailsAsked.has(id)) return;
  v.detailsAsked.add(id);
  v.model.send({ details: [id] });
}

// the picture Python sent: drawn unless the user has moved on to another view since
function syncPicture(v) {
  const k = viewKey(v), picture = [v.model.get("svg"), v.model.get("key")];
  remember(v, k, picture);
  if (k && k !== keyOf(stateOf(v))) return;
  const changed = picture[0] !== v.drawnSvg;
  show(v, k, picture);
  if (changed) refit(v);
}

function rememberViews(v) {
  for (const [state, svg, legend] of v.model.get("views") || []) remember(v, keyOf(state), [svg, legend]);
}

const viewTexts = (v) => (v.model.get("views") || []).map((p) => p[1]);

// pictures parsed ahead, one per idle moment, likeliest first (the order Python sent
// them); a pointer resting on a group puts its picture first
function pump(v) {
  v.pumping = false;
  const text = v.parseQueue.shift();
  if (text !== undefined && !v.parsed.has(text)) parseSvg(v, text);
  if (v.parseQueue.length) { v.pumping = true; idle(() => pump(v)); }
}

function parseAhead(v, texts, first) {
  texts = texts.filter((t) => t.length <= PARSE_AHEAD_CHARS && !v.parsed.has(t));
  v.parseQueue = first ? texts.concat(v.parseQueue) : v.parseQueue.concat(texts);
  v.parseQueue = v.parseQueue.slice(0, PARSED_MAX);
  if (v.parseQueue.length && !v.pumping) { v.pumping = true; idle(() => pump(v)); }
}

// Python's custom messages: pictures drawn ahead and nodes' details
function onMessage(v, msg) {
  if (!msg) return;
  const now = keyOf(stateOf(v)), small = [];
  for (const [state, svg, legend] of msg.pictures || []) {
    const k = keyOf(state), picture = [svg, legend];
    remember(v, k, picture);
    v.asked.delete(k);
    if (k === now && v.drawnKey !== now && !highlighted(v)) {  // asked for, then clicked
      show(v, k, picture);
      requestAnimationFrame(() => refit(v));
    } else if (k === v.hoverKey) parseAhead(v, [svg], true);
    else if (svg.length <= BIG_CHARS || v.bigAhead++ < 2) small.push(svg);
  }
  parseAhead(v, small, false);
  for (const [id, d] of Object.entries(msg.details || {})) {
    v.details.set(id, d);
    v.detailsAsked.delete(id);
  }
}
