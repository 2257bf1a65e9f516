"""Legible at real sizes: font floors, the mirrored "both" view, cross-links on demand, a
compact key, collapse and expand, the wasm path's look, modes drawn ahead (plain Python)."""

import re
import xml.etree.ElementTree as ET

import pytest
from graph_cases import ENGINES, reuse_tape, scoped_tape

import tapeviz as tv
from tapeviz.graph import extract, render_svg, to_dot
from tapeviz.graph.nodes import LEGEND_COLUMNS
from tapeviz.graph.render import render_with_key, style_plain_labels
from tapeviz.graph.style import MIN_PT
from tapeviz.graph.widget.widget import picture_id

SVG = "{http://www.w3.org/2000/svg}"


def _both_data():
    x = tv.tensor([1.0, 2.0], name="x")
    return tv.show_graph(lambda x: tv.sum(tv.tanh(x) * x), x, backward="both").data


def _rank_rows(dot: str) -> list[list[str]]:
    return [re.findall(r'"([^"]+)"', m) for m in re.findall(r"\{rank=same; ([^}]*)\}", dot)]


@pytest.mark.parametrize("mode", ["forward", "backward", "both"])
@pytest.mark.parametrize("html_labels", [True, False])
def test_no_text_is_smaller_than_the_floor(mode, html_labels):
    dot = to_dot(_both_data(), mode=mode, html_labels=html_labels)
    sizes = [float(s) for s in re.findall(r'(?:POINT-SIZE="|fontsize=)"?([\d.]+)', dot)]
    assert sizes and min(sizes) >= MIN_PT, sorted(set(sizes))


@pytest.mark.parametrize("engine", ENGINES)
def test_rendered_text_is_at_least_min_pt(engine):
    svg = render_svg(_both_data(), engine=engine, mode="both")
    sizes = [float(t.get("font-size")) for t in ET.fromstring(svg).iter(SVG + "text")]
    assert sizes and min(sizes) >= MIN_PT  # the widgets derive their zoom floors from it


def test_both_levels_each_gradient_with_its_forward_node():
    data = _both_data()
    dot = to_dot(data, mode="both")
    rows = _rank_rows(dot)
    row_of = {node: i for i, row in enumerate(rows) for node in row}
    assert data.backward_ops
    for bop in data.backward_ops:  # each gradient op on its forward op's rank
        assert row_of.get(bop["id"]) == row_of[bop["grad_of"]], bop
    for g in data.grad_tensors:  # each gradient tensor on its tensor's rank
        assert row_of.get(g["id"]) == row_of[g["of"]], g
    assert "cluster_b" not in dot  # no boxes that would break the rows
    # gradient edges run back up the graph: one that ranks is written from its head
    # (dir=back) and joins rows a forward edge joins, the same way; the others do not rank
    anchor = {node: row[0] for row in rows for node in row}
    forward = {(e["src"], e["dst"]) for e in data.edges}
    ranked = 0
    for line in dot.splitlines():
        if re.match(r'"(g\d+|n\d+)" -> "(g\d+|n\d+)"', line) and "invis" not in line:
            src, dst = re.findall(r'"(\w+)"', line)[:2]
            if (src.startswith("g") or dst.startswith("g")) and 'constraint="false"' not in line:
                assert (anchor.get(src, src), anchor.get(dst, dst)) in forward, line
                ranked += 1
    assert ranked


def test_cross_links_are_hidden_unless_their_node_is_highlighted():
    data = _both_data()
    plain = to_dot(data, mode="both")
    links = [ln for ln in plain.splitlines() if "tv-xlink" in ln]
    assert links and all(re.search(r'color="#[0-9A-F]{6}00"', ln) for ln in links)
    op = data.backward_ops[0]["grad_of"]
    lit = to_dot(data, mode="both", highlight={op: "selected"})
    shown = [ln for ln in lit.splitlines() if f"tv-of-{op}" in ln and "tv-xlink" in ln]
    assert shown and all(not re.search(r'color="#[0-9A-F]{6}00"', ln) for ln in shown)
    hidden = [ln for ln in lit.splitlines() if "tv-xlink" in ln and f'tv-of-{op}"' not in ln]
    assert all(re.search(r'color="#[0-9A-F]{6}00"', ln) for ln in hidden)
    svg = render_svg(data, mode="both")
    assert "tv&#45;xlink" in svg or "tv-xlink" in svg  # the widget finds them by class


def test_the_key_is_compact():
    dot = to_dot(_both_data(), mode="both")
    table = dot[dot.index("label=<<TABLE") :]
    for row in re.findall(r"<TR>(.*?)</TR>", table):
        assert row.count("<TD") <= 2 * LEGEND_COLUMNS
    assert 'labelloc="b"' in dot  # under the graph, outside the layout
    plain = to_dot(_both_data(), mode="both", html_labels=False)
    legend_rows = [r for r in _rank_rows(plain) if r and r[0].startswith("legend")]
    assert legend_rows and all(len(r) <= LEGEND_COLUMNS for r in legend_rows)


def test_the_key_as_data_follows_the_mode():
    data = _both_data()
    _, forward = render_with_key(data, mode="forward")
    svg, both = render_with_key(data, mode="both")
    words = [k[3] for k in both]
    assert "saved value read by a gradient op" in words
    assert "saved value read by a gradient op" not in [k[3] for k in forward]
    assert "edge width grows" not in svg  # the widget draws the key itself


def test_collapsed_groups_expand_and_fold():
    data = extract(scoped_tape(blocks=8, ops_per_block=12))
    dot = to_dot(data, collapse=True, max_nodes=20)
    groups = re.findall(r'^"(c\d+)" \[', dot, re.M)
    assert len(groups) >= 2
    opened = to_dot(data, collapse=True, max_nodes=20, expand=[groups[0]])
    assert f'"{groups[0]}" [' not in opened and f'"cluster_x{groups[0]}"' in opened
    assert "click here to collapse" in opened
    n_ops = len(re.findall(r'^"n\d+" \[', opened, re.M))
    assert n_ops >= 3  # the group's ops, one by one
    assert to_dot(data, collapse=True, max_nodes=20, expand=[]) == dot


def test_wasm_labels_get_bold_titles_and_small_print():
    svg = render_svg(_both_data(), engine="wasm", mode="forward")
    nodes = [g for g in ET.fromstring(svg).iter(SVG + "g") if g.get("class") == "node"]
    titled = [g for g in nodes if not g.find(SVG + "title").text.startswith("legend")]
    for g in titled:
        texts = list(g.iter(SVG + "text"))
        assert texts[0].get("font-weight") == "bold", g.find(SVG + "title").text
        assert all(t.get("font-weight") != "bold" for t in texts[1:])
    raw = '<g id="node1" class="node">\n<title>n0</title>\n<text x="1" font-size="11.00">a</text>'
    assert 'font-weight="bold"' in style_plain_labels(raw + "\n</svg>")


def _id(mode, show_saved, show_values, collapse, rankdir, expanded) -> tuple:
    return picture_id(dict(mode=mode, show_saved=show_saved, show_values=show_values,
                           collapse=collapse, rankdir=rankdir, expanded=expanded))  # fmt: skip


def _ids(sent) -> list:
    """The picture_ids of the pictures in the messages ``sent``, each with its state."""
    return [picture_id(state) for m in sent for state, _svg, _key in m.get("pictures", [])]


def test_widget_draws_modes_ahead_and_switches_without_a_redraw():
    tape, *_ = reuse_tape()
    w = tv.GraphWidget(tape)
    key = {m: _id(m, True, True, "auto", "", []) for m in ("forward", "backward", "both")}
    views = {picture_id(state): (svg, k) for state, svg, k in w.views}
    assert set(views) == set(key.values()) and picture_id(w.view_state) == key["forward"]
    before = list(w.views)
    w.mode = "both"
    assert (w.svg, w.key) == views[key["both"]]
    assert picture_id(w.view_state) == key["both"] and w.views == before  # nothing drawn again
    w.highlight({"n0": "current"})  # a highlighted picture is not kept for another view
    assert w.view_state == {}


def _sent(w) -> list:
    """What the widget sends its view (custom messages), captured."""
    out = []
    w.send = lambda content, buffers=None: out.append(content)
    return out


def test_widget_answers_the_views_requests_for_pictures_and_details():
    tape = scoped_tape(blocks=3, ops_per_block=24)
    w = tv.GraphWidget(tape, engine="wasm")
    sent = _sent(w)
    gid = re.findall(r"<title>(c\d+)</title>", w.svg)[0]
    w._on_message(w, {"want": {"expanded": [gid]}}, [])  # a pointer rests on the group
    ((state, svg, _),) = sent[-1]["pictures"]
    assert picture_id(state) == _id("forward", True, True, "auto", "", [gid])
    assert f"cluster_x{gid}" in svg
    w.expanded = [gid]  # the click: Python's picture is the one the view already shows
    assert w.svg == svg and w.view_state == state
    w._on_message(w, {"details": ["n1"]}, [])
    assert sent[-1]["details"]["n1"]["rows"][0][0] == "kernel"
    w._on_message(w, {"hello": True}, [])  # a new view gets what was drawn
    assert _id("forward", True, True, "auto", "", []) in _ids(sent[-2:])
    small, *_ = reuse_tape()
    s = tv.GraphWidget(small)
    sent = _sent(s)
    s._on_message(s, {"hello": True}, [])
    ids = re.findall(r'class="node[^"]*">\s*<title>([^<]*)</title>', s.svg)
    assert set(sent[-1]["details"]) == set(ids)  # a small graph: every node's details


def test_in_a_kernel_the_widget_draws_the_neighbouring_views_while_idle(monkeypatch):
    import asyncio
    import concurrent.futures

    from tapeviz.graph.widget import ahead as widget_ahead

    # the work-ahead budget is kernel seconds: on a busy machine it would end before every
    # group is drawn; what is tested here is which pictures, not how fast
    monkeypatch.setattr(widget_ahead, "AHEAD_S", 1e9)
    w = tv.GraphWidget(scoped_tape(blocks=3, ops_per_block=24), engine="wasm")
    sent = _sent(w)
    groups = re.findall(r"<title>(c\d+)</title>", w.svg)
    opened = {_id("forward", True, False, "auto", "", [g]) for g in groups}

    async def kernel():  # as in a cell: the redraw happens inside the kernel's event loop
        w.show_values = False
        await asyncio.sleep(0.1)
        assert sent == []  # no view shown yet: nothing is drawn ahead
        drawn = w.ahead.kept()
        w._on_message(w, {"hello": True}, [])  # a view: it says hello once it is painted
        await asyncio.sleep(0)
        new = set(_ids(sent)) - drawn
        assert new == set()  # what was drawn goes at once; nothing new until the view paints
        both = _id("both", False, False, "auto", "", [])
        for _ in range(3000):  # until every group's picture and the "both" view were sent
            await asyncio.sleep(0.02)  # (60 s at most: no fixed wait, a busy machine is slow)
            if opened | {both} <= set(_ids(sent)):
                break
        await asyncio.sleep(0.5)  # and the rest of the queue (a picture sent twice shows)

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # see test_gradcheck_widget
        pool.submit(asyncio.run, kernel()).result()
    ahead = set(_ids(sent))
    assert opened <= ahead  # every group, opened
    assert len(_ids(sent)) == len(ahead)  # each picture sent once
    assert _id("both", False, False, "auto", "", []) in ahead
    w.show_values = True  # outside a loop: nothing is drawn ahead
    assert len(set(_ids(sent))) == len(ahead)


def test_widget_opens_big_tapes_collapsed_and_expands_on_request():
    tape = scoped_tape(blocks=3, ops_per_block=24)
    w = tv.GraphWidget(tape)
    assert len(tape.nodes) > 60 and w.collapse == "auto"
    groups = re.findall(r"<title>(c\d+)</title>", w.svg)
    assert groups, "a tape over 60 ops opens collapsed"
    w.expanded = [groups[0]]
    assert f"<title>{groups[0]}</title>" not in w.svg and f"cluster_x{groups[0]}" in w.svg
    w.expanded = []
    small, *_ = reuse_tape()
    s = tv.GraphWidget(small)
    assert not re.findall(r"<title>c\d+</title>", s.svg)
    s.collapse = "on"  # what "fit" asks for when the text would get too small
    assert re.findall(r"<title>c\d+</title>", s.svg)  # the scope "blk" is one node now


def test_a_run_of_identical_blocks_opens_block_by_block():
    data = extract(scoped_tape(blocks=12, ops_per_block=8))
    dot = to_dot(data, collapse=True, max_nodes=20)
    runs = re.findall(r'^"(m\d+)" \[', dot, re.M)
    assert runs and "(\u00d712 identical)" in dot  # one node for the 12 blocks
    opened = to_dot(data, collapse=True, max_nodes=20, expand=[runs[0]])
    blocks = re.findall(r'^"(c\d+)" \[', opened, re.M)
    assert "identical)" not in opened  # one node per block (+ a chunk of the loose ops)
    assert sum(f"block{i}<" in opened for i in range(12)) == 12
    deeper = to_dot(data, collapse=True, max_nodes=20, expand=[runs[0], blocks[1]])
    assert f'"cluster_x{blocks[1]}"' in deeper
    assert len(re.findall(r'^"(c\d+)" \[', deeper, re.M)) == len(blocks) - 1
