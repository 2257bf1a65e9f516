"""The submission's side of grading: a process of its own that runs the notebook, then
answers the grader's calls. It holds no test and no reference: the grader sends the
notebook's code cells and the *probes* (small functions that call the student's code on
inputs and turn the result into plain numbers), then asks for one probe call at a time
and compares what comes back in its own process.

The channel is two pipes (file descriptors given on the command line) carrying JSON whose
arrays are raw bytes of float64, int64 or bool (``encode``/``decode``, also used by the
grader): no pickle, nothing that can run code when read. Everything in this process is the
student's to change, this file's functions included; all it can do is answer differently.

Usage (by ``sandbox.Submission``): python driver.py READ_FD WRITE_FD
"""

from __future__ import annotations

import base64
import json
import os
import select
import struct
import sys
import time

import numpy as np

KINDS = {"f8": "<f8", "i8": "<i8", "b1": "|b1"}  # the only arrays the channel carries
HEADER = struct.Struct("<Q")


class ChannelError(Exception):
    """A message that is not what the channel carries, too large, or late."""


def encode(value):
    """``value`` as JSON-able data: numbers, strings, lists, str-keyed dicts, arrays."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (np.ndarray, np.generic)):
        a = np.asarray(value)
        kind = "b1" if a.dtype == bool else "i8" if a.dtype.kind in "iu" else "f8"
        a = np.array(a, KINDS[kind], order="C")  # (ascontiguousarray makes 0-d 1-d)
        return {"__nd__": [kind, list(a.shape), base64.b64encode(a.tobytes()).decode()]}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: encode(v) for k, v in value.items()}
    raise TypeError(f"the channel carries numbers, arrays, lists and dicts, not {type(value)}")


def decode(data):
    """The inverse of ``encode``; anything else raises ``ChannelError``."""
    if data is None or type(data) in (bool, int, float, str):
        return data
    if type(data) is list:
        return [decode(v) for v in data]
    if type(data) is dict:
        if "__nd__" in data:
            kind, shape, raw = data["__nd__"]
            if kind not in KINDS or type(shape) is not list or type(raw) is not str:
                raise ChannelError("an array of an unknown kind")
            if not all(type(n) is int and n >= 0 for n in shape):
                raise ChannelError("an array with a bad shape")
            flat = np.frombuffer(base64.b64decode(raw, validate=True), KINDS[kind])
            if flat.size != int(np.prod(shape, dtype=np.int64)):
                raise ChannelError("an array whose bytes do not fill its shape")
            return flat.reshape(tuple(shape)).copy()
        return {str(k): decode(v) for k, v in data.items()}
    raise ChannelError(f"unexpected data of type {type(data).__name__}")


def send(fd: int, message) -> None:
    """Write one framed message (8-byte length, then JSON)."""
    body = json.dumps(encode(message), allow_nan=True).encode()
    view = memoryview(HEADER.pack(len(body)) + body)
    while view:
        view = view[os.write(fd, view) :]


def _read(fd: int, n: int, deadline: float | None) -> bytes:
    chunks, left = [], n
    while left:
        if deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([fd], [], [], wait)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def receive(fd: int, limit: int = 64 << 20, deadline: float | None = None):
    """One framed message; ``EOFError`` when the other side is gone, ``TimeoutError`` past
    ``deadline`` (``time.monotonic()``), ``ChannelError`` if longer than ``limit`` bytes or
    not what the channel carries."""
    (n,) = HEADER.unpack(_read(fd, HEADER.size, deadline))
    if n > limit:
        raise ChannelError(f"a reply of {n:,} bytes (more than {limit:,})")
    try:
        return decode(json.loads(_read(fd, n, deadline)))
    except (ValueError, TypeError, RecursionError) as e:
        raise ChannelError(f"a reply that is not the channel's data ({type(e).__name__})") from e


def describe_error(e: BaseException) -> str:
    """``Type: first line of the message`` (200 characters at most)."""
    first = str(e).splitlines()[0] if str(e).strip() else ""
    return f"{type(e).__name__}: {first}"[:200]


def run_cells(cells: list[str], ns: dict) -> list[str]:
    """Run the notebook's code cells in ``ns`` as a kernel would (IPython's syntax turned
    into calls); a cell that raises (or exits) is reported and the next one runs."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        transform = TransformerManager().transform_cell
    except ImportError:  # plain Python cells still run
        transform = str
    errors = []
    for i, source in enumerate(cells):
        try:
            exec(compile(transform(source), f"<cell {i}>", "exec"), ns)
        except BaseException as e:  # SystemExit too: the notebook goes on, as Otter's run did
            errors.append(f"cell {i}: {describe_error(e)}")
    return errors


def main(argv: list[str]) -> int:
    read_fd, write_fd = int(argv[1]), int(argv[2])
    setup = receive(read_fd)
    ns = {"__name__": "__main__", "__builtins__": __builtins__}
    errors = run_cells(setup["cells"], ns)
    probes = {"__name__": "probes"}
    exec(compile(setup["probes"], "<probes>", "exec"), probes)
    send(write_fd, {"ready": True, "errors": errors})
    while True:
        try:
            request = receive(read_fd)
        except EOFError:
            return 0
        try:
            reply = {"id": request["id"], "ok": probes[request["probe"]](ns, **request["args"])}
            body = encode(reply)
        except BaseException as e:  # a student's exit or error answers this call only
            body = {"id": request["id"], "error": describe_error(e)}
        send(write_fd, body)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
