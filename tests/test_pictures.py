"""The README's pictures come from docs/make_pictures.py, on the pip-only path.

The script runs here without a system Graphviz (PATH holds no ``dot``), into a temporary
folder: each picture it writes is a PNG of a sensible size, and each is one the README shows.
"""

import importlib.util
import pathlib
import struct

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _load_script():
    spec = importlib.util.spec_from_file_location("make_pictures", ROOT / "docs/make_pictures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_make_pictures_draws_the_readme_pictures_without_system_graphviz(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no system dot: the default, pip-only path
    written = _load_script().main(tmp_path)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert [p.name for p in written] == ["graph.png", "gradcheck.png"]
    for path in written:
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", path.name
        width, height = struct.unpack(">II", data[16:24])
        assert width >= 600 and height >= 200, (path.name, width, height)
        assert f"](docs/{path.name})" in readme, f"README.md does not show docs/{path.name}"
