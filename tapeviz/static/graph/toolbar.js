// the widget's elements and its controls: the toolbar (modes, toggles, zoom, search, the
// key and panel buttons), the legend row, the breadcrumb, the error line, the viewport and
// the details panel; a control tells Python through `go` (cache.js)

function buildToolbar(v) {
  const bar = (v.bar = el("div", "tv-toolbar"));
  v.modes = {};
  for (const m of ["forward", "backward", "both"]) {
    const b = el("button", "tv-mode", m);
    b.addEventListener("click", () => go(v, { mode: m }));
    v.modes[m] = b;
    bar.appendChild(b);
  }
  v.toggles = {};
  for (const [name, text] of [["show_saved", "saved"], ["show_values", "values"]]) {
    const label = el("label", "tv-toggle");
    const box = el("input");
    box.type = "checkbox";
    box.addEventListener("change", () => go(v, { [name]: box.checked }));
    label.append(box, document.createTextNode(" " + text));
    v.toggles[name] = box;
    bar.appendChild(label);
  }
  v.zoomIn = el("button", "tv-zoom", "+");
  v.zoomOut = el("button", "tv-zoom", "\u2212");
  v.fit = el("button", "tv-zoom tv-fit", "fit");
  v.fit.title = "show the whole graph (collapses groups before text gets too small)";
  v.search = el("input", "tv-search");
  v.search.type = "search";
  v.search.placeholder = "find a name\u2026";
  v.found = el("span", "tv-found");
  v.keyBtn = el("button", "tv-key-toggle", "key");
  v.keyBtn.title = "show or hide the legend";
  v.panelBtn = el("button", "tv-panel-toggle", "details");
  v.panelBtn.title = "show or hide the details panel";
  bar.append(v.zoomIn, v.zoomOut, v.fit, v.search, v.found, v.keyBtn, v.panelBtn);
}

function buildLayout(v) {
  v.root.classList.add("tv-graph");
  v.keyRow = el("div", "tv-key");
  v.crumb = el("div", "tv-crumb");
  const body = el("div", "tv-body");
  v.viewport = el("div", "tv-viewport");
  v.canvas = el("div", "tv-canvas");
  v.message = el("div", "tv-error");
  v.panel = el("div", "tv-panel");
  v.viewport.appendChild(v.canvas);
  body.append(v.viewport, v.panel);
  v.root.append(v.bar, v.keyRow, v.crumb, v.message, body);
  v.zoomNote = el("div", "tv-zoom-note");
  v.viewport.appendChild(v.zoomNote);
}

function drawToolbar(v) {
  const { model } = v;
  for (const [m, b] of Object.entries(v.modes)) {
    b.classList.toggle("tv-active", model.get("mode") === m);
    b.disabled = m !== "forward" && !model.get("has_backward");
  }
  for (const [name, box] of Object.entries(v.toggles)) box.checked = model.get(name);
}

function drawError(v) {
  const text = v.model.get("error");
  v.message.textContent = text;
  v.message.style.display = text ? "block" : "none";
}

// the legend and the details panel shown or hidden; the panel stays folded (the graph gets
// its width) until a node is selected
function drawChrome(v) {
  v.keyRow.style.display = v.keyShown ? "" : "none";
  v.keyBtn.classList.toggle("tv-active", v.keyShown);
  v.panel.style.display = v.panelShown ? "" : "none";
  v.panelBtn.classList.toggle("tv-active", v.panelShown);
}

function wireChrome(v) {
  v.keyBtn.addEventListener("click", () => { v.keyShown = !v.keyShown; drawChrome(v); });
  v.panelBtn.addEventListener("click", () => {
    v.panelShown = !v.panelShown;
    v.panelTouched = true;
    drawChrome(v);
    refit(v);
  });
}
