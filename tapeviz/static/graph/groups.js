// collapsed groups: a group node opens on a click (nodes.js), an opened group's frame title
// folds it, and a breadcrumb says how the view is collapsed, with a way back

function expandedWith(v, id, on) {
  const now = new Set(v.model.get("expanded") || []);
  if (on) now.add(id); else now.delete(id);
  return Array.from(now);
}

function toggleGroup(v, id, on) {
  v.focusOn = id;  // kept in view once drawn (refit)
  go(v, { expanded: expandedWith(v, id, on) });
}

function wireCluster(v, g) {
  const title = g.querySelector("title");
  const m = title && /^cluster_x(c\d+)$/.exec(title.textContent);
  if (!m) return;
  const label = g.querySelector("text");
  if (!label) return;
  label.style.cursor = "pointer";
  label.addEventListener("pointerenter", () => want(v, { expanded: expandedWith(v, m[1], false) }));
  label.addEventListener("click", (e) => { e.stopPropagation(); toggleGroup(v, m[1], false); });
}

function buildFoldAll(v) {
  v.foldAll = el("button", "tv-fold-all", "fold all");
  v.foldAll.addEventListener("pointerenter", () => want(v, { expanded: [] }));
  v.foldAll.addEventListener("click", () => go(v, { expanded: [] }));
}

// a breadcrumb for big graphs: how the view is collapsed, and a way back
function drawCrumb(v) {
  const svg = v.canvas.querySelector("svg"), { crumb } = v;
  const groups = svg && svg.tvNodes ? svg.tvGroups : 0;
  const open = (v.model.get("expanded") || []).length;
  crumb.replaceChildren();
  if (!groups && !open) { crumb.style.display = "none"; return; }
  crumb.style.display = "block";
  let text = `whole tape \u203a ${groups} collapsed groups (click one to open it)`;
  if (open) text += ` \u203a ${open} opened (click an opened frame's title to fold it) `;
  crumb.append(document.createTextNode(text));
  if (open) crumb.appendChild(v.foldAll);
}
