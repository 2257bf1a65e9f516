"""Rewrite imports of the engine from top-level ``core`` to ``tapeviz.core``, repo-wide.

The engine's folder stays ``core/`` at the repository's top level, but it installs as
``tapeviz.core`` (pyproject.toml's ``package-dir``): a top-level ``core`` in site-packages
would collide, and a second copy of the engine would have its own registries. Run it from the
repository root after merging a branch that still writes ``import core``::

    python scripts/rename_core.py          # rewrite files in place, print what changed
    python scripts/rename_core.py --check  # exit 1 if a file still imports top-level core

It is idempotent. ``import core`` becomes ``import tapeviz.core as core`` (later ``core.x``
references keep working); ``import core as tv`` becomes ``import tapeviz.core as tv``;
``from core.x import y`` becomes ``from tapeviz.core.x import y``; module names in strings
given to ``import_module``/``__import__``/``sys.modules``/``monkeypatch`` get the prefix too.
"""

from __future__ import annotations

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
SUFFIXES = {".py", ".ipynb", ".md"}
SKIP_DIRS = {".git", ".venv", "build", "dist", "node_modules", "test-artifacts", "__pycache__"}
# this script, and the test whose examples of a top-level `core` import must stay as written
SKIP_FILES = {"scripts/rename_core.py", "tests/test_packaging.py"}

FROM_IMPORT = re.compile(r"\bfrom core((?:\.\w+)*) import\b")
# an import statement on one line, also inside a doctest (>>>), a string or notebook JSON
IMPORT_LINE = re.compile(
    r'^(?P<pre>[ \t]*(?:(?:>>>|\.\.\.) )?(?:[rf]?"|\')?)import (?P<names>[\w.]+(?: as \w+)?'
    r"(?:, *[\w.]+(?: as \w+)?)*)(?P<post>[^\w.,\n].*)?$",
    re.M,
)
NAME = re.compile(r"^core((?:\.\w+)*)(?: as (\w+))?$")
MODULE_STRING = re.compile(
    r"""(?P<pre>(?:import_module|__import__|sys\.modules\[|setattr|setitem|patch)\(?\s*["'])"""
    r"""core(?P<rest>\.[\w.]+|(?=["']))"""
)


def _rename_names(names: str, where: str) -> str:
    out = []
    for item in (n.strip() for n in names.split(",")):
        m = NAME.match(item)
        if m is None:
            out.append(item)
        elif m.group(2):
            out.append(f"tapeviz.core{m.group(1)} as {m.group(2)}")
        elif not m.group(1):
            out.append("tapeviz.core as core")
        else:
            raise SystemExit(f"{where}: 'import {item}' binds 'core'; rewrite it by hand")
    return ", ".join(out)


def rename(text: str, where: str = "<text>") -> str:
    """``text`` with every import of top-level ``core`` rewritten to ``tapeviz.core``."""
    text = FROM_IMPORT.sub(r"from tapeviz.core\1 import", text)

    def line(m):
        names = _rename_names(m.group("names"), where)
        return f"{m.group('pre')}import {names}{m.group('post') or ''}"

    text = IMPORT_LINE.sub(line, text)
    return MODULE_STRING.sub(lambda m: f"{m.group('pre')}tapeviz.core{m.group('rest')}", text)


def files(root: pathlib.Path = ROOT):
    """Every .py, .ipynb and .md file of the repository (not .venv, build outputs, .git)."""
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.suffix in SUFFIXES and path.is_file() and not SKIP_DIRS & set(rel.parts):
            if rel.as_posix() not in SKIP_FILES:
                yield path


def main(argv: list[str]) -> int:
    check = "--check" in argv
    changed = []
    for path in files():
        old = path.read_text(encoding="utf-8")
        new = rename(old, str(path.relative_to(ROOT)))
        if new != old:
            changed.append(path.relative_to(ROOT))
            if not check:
                path.write_text(new, encoding="utf-8")
    verb = "still import top-level core" if check else "rewritten"
    for rel in changed:
        print(f"{verb}: {rel}")
    print(f"rename_core: {len(changed)} file(s) {verb}")
    return 1 if check and changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
