// the details panel (the `details` dict Python computes for a node) and the legend row

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

// a node's details, drawn when they changed; the panel unfolds the first time there are some
function drawDetails(v, d) {
  const text = JSON.stringify(d || {});
  if (text !== v.drawnDetails) { v.drawnDetails = text; drawPanel(v.panel, d); }
  if (!v.panelShown && !v.panelTouched && (d || {}).id) {
    v.panelShown = true;
    drawChrome(v);
  }
}

// the one-line key: a swatch (shape and border, not colour alone) and words per style drawn
function drawLegend(box, key) {
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
