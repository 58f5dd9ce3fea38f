"""Length-prefixed pickle frames between the sink and its scrubber process (a private pipe
between two processes of the same program: both ends are ours)."""

from __future__ import annotations

import pickle
import struct
from typing import IO, Any

_HEADER = struct.Struct(">I")


def frame(obj: Any) -> bytes:
    body = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(body)) + body


def write_frame(out: IO[bytes], obj: Any) -> None:
    data = memoryview(frame(obj))
    while data:
        written = out.write(data)
        data = data[written or 0 :]
    out.flush()


def read_frame(inp: IO[bytes]) -> Any | None:
    """The next object, or None at the end of the stream (or a torn last frame)."""
    header = _read_exactly(inp, _HEADER.size)
    if header is None:
        return None
    body = _read_exactly(inp, _HEADER.unpack(header)[0])
    return None if body is None else pickle.loads(body)


def _read_exactly(inp: IO[bytes], size: int) -> bytes | None:
    chunks: list[bytes] = []
    left = size
    while left:
        chunk = inp.read(left)
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
