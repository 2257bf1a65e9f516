// tapeviz GraphWidget view (anywidget ESM). Python owns the state: this view draws the
// `svg` trait, reports clicks through `selected`, toolbar choices through `mode`,
// `show_saved`, `show_values`, `expanded`, and draws the `details` dict Python computes.
// Answering at once: pictures drawn ahead (cache.js) are shown the moment a control is
// used; Python is told afterwards and answers with the same picture. A pointer resting on a
// group or a node asks for its picture or details. `frames`/`frame` highlight nodes in the
// SVG shown (the stepper), without a new layout. Text from the model is only ever set with
// textContent; the SVG is parsed and stripped of scripts.
//
// tapeviz/graph/view_parts.py joins the files of this folder into the one module anywidget
// loads (VIEW_PARTS; relative imports would not resolve): each holds the top-level
// functions of one concern, taking `v`, one view's state and elements; this last one wires
// them together and has the `export default`.

// one view's state; buildToolbar and buildLayout add its elements
function newView(model, root) {
  return {
    model, root,
    scale: 1, tx: 0, ty: 0, fontPx: 12, place: "readable", focusOn: null, drag: null,  // panzoom.js
    drawnSvg: null, lastSvg: null, parsed: new Map(), localSel: null,  // picture.js, nodes.js
    matches: [], at: -1,  // search.js
    keyShown: true, panelShown: !!(model.get("details") || {}).id, panelTouched: false,
    drawnDetails: null,  // toolbar.js, panel.js
    pictures: new Map(), picturesChars: 0, asked: new Set(), drawnKey: null, hoverKey: null,
    details: new Map(), detailsAsked: new Set(), parseQueue: [], pumping: false,
    bigAhead: 0,  // big pictures parsed ahead unasked: the first two Python sends, once
  };
}

// the picture, legend, toolbar, error and details of the model as it is
function firstDraw(v) {
  const { model } = v;
  rememberViews(v);
  remember(v, viewKey(v), [model.get("svg"), model.get("key")]);
  v.drawnKey = viewKey(v);
  drawSvg(v, model.get("svg"));
  drawLegend(v.keyRow, model.get("key"));
  drawToolbar(v);
  drawError(v);
  drawChrome(v);
  drawDetails(v, model.get("details"));
  requestAnimationFrame(() => refit(v));
}

function listen(v) {
  const { model } = v;
  model.on("change:svg", () => syncPicture(v));
  model.on("change:key", () => syncPicture(v));
  model.on("change:views", () => {
    rememberViews(v);
    parseAhead(v, viewTexts(v));
  });
  parseAhead(v, viewTexts(v));
  model.on("msg:custom", (msg) => onMessage(v, msg));
  model.send({ hello: true });  // Python sends what it drew ahead, and small graphs' details
  model.on("change:mode change:show_saved change:show_values change:has_backward", () => drawToolbar(v));
  model.on("change:error", () => drawError(v));
  model.on("change:selected", () => { v.localSel = null; markSelected(v); });
  model.on("change:pointed", () => markPointed(v));
  model.on("change:details", () => {
    const d = model.get("details") || {};
    if (!d.id || d.id === selectedId(v)) drawDetails(v, d);  // not an earlier click's, arriving late
  });
  model.on("change:frame change:frames", () => onFrame(v));
}

function closeView(v) {
  window.removeEventListener("pointermove", v.onMove);
  window.removeEventListener("pointerup", v.onUp);
  v.model.send({ bye: true });  // no view left: Python stops drawing ahead for it
  v.parsed.clear();
  v.pictures.clear();
}

function render({ model, el: root }) {
  const v = newView(model, root);
  buildToolbar(v);
  buildLayout(v);
  buildFoldAll(v);
  wirePanZoom(v);
  wireSearch(v);
  wireChrome(v);
  firstDraw(v);
  listen(v);
  return () => closeView(v);
}

export default { render };
