// search by name: matches are outlined, Enter steps through them and pans to each

function runSearch(v, step) {
  const q = v.search.value.trim().toLowerCase();
  v.canvas.querySelectorAll("g.node.tv-match").forEach((g) => g.classList.remove("tv-match"));
  v.matches = q ? Array.from(v.canvas.querySelectorAll("g.node")).filter((g) => g.textContent.toLowerCase().includes(q)) : [];
  const { matches } = v;
  matches.forEach((g) => g.classList.add("tv-match"));
  v.found.textContent = q ? `${matches.length} found` : "";
  if (!matches.length) { v.at = -1; return; }
  v.at = step ? (v.at + 1) % matches.length : Math.max(0, Math.min(v.at, matches.length - 1));
  if (step || v.at === 0) { v.place = "user"; panTo(v, matches[v.at]); }
}

function wireSearch(v) {
  v.search.addEventListener("input", () => { v.at = -1; runSearch(v, true); });
  v.search.addEventListener("keydown", (e) => { if (e.key === "Enter") runSearch(v, true); });
}
