"""A Jupyter environment for the notebook tests whose "python3" kernel is this interpreter.

Notebooks name the kernel ``python3``. Jupyter resolves that name through ``JUPYTER_PATH``
first, then the user's data dir (``~/.local/share/jupyter``), then the environment's, so a
user-level ``python3`` kernelspec pointing at another Python would otherwise win. The tests
write their own ``python3`` kernelspec running ``sys.executable`` (the ``.venv`` Python that
``make test`` built) and put it first on ``JUPYTER_PATH``; no install into any prefix is needed.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

KERNEL_NAME = "python3"
ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS_DIR = ROOT / "notebooks"
ARTIFACTS_DIR = ROOT / "test-artifacts"


def write_kernelspec(root: Path) -> Path:
    """Write ``root/kernels/python3/kernel.json`` launching ipykernel on ``sys.executable``.

    Args:
        root: a directory to use as a ``JUPYTER_PATH`` entry.

    Returns:
        ``root``.

    Example:
        >>> import tempfile
        >>> d = write_kernelspec(Path(tempfile.mkdtemp()))
        >>> (d / "kernels" / "python3" / "kernel.json").is_file()
        True
    """
    kernel_dir = root / "kernels" / KERNEL_NAME
    kernel_dir.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (tapeviz tests)",
        "language": "python",
        "metadata": {"debugger": True},
    }
    (kernel_dir / "kernel.json").write_text(json.dumps(spec, indent=1))
    return root


def jupyter_env(root: Path) -> dict[str, str]:
    """Environment variables that make Jupyter use the kernelspec under ``root``.

    Args:
        root: the directory passed to :func:`write_kernelspec`.

    Returns:
        The variables to set (merge them into ``os.environ`` or a subprocess env).
    """
    path = [str(root)] + [p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p]
    return {
        "JUPYTER_PATH": os.pathsep.join(path),
        "IPYTHONDIR": str(root / "ipython"),
        # ipykernel's debugger prints a frozen-modules warning to stderr on Python 3.11+
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }
