"""Reading JSONL / JSONL.gz input line by line, within a byte limit per line.

An over-long line is never held in memory whole: its first bytes are kept for a (scrubbed)
preview and the rest is skipped up to the next newline.
"""

from __future__ import annotations

import gzip
import io
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, cast

GZIP_MAGIC = b"\x1f\x8b"
PREVIEW_BYTES = 4096
_CHUNK = 1 << 16


@dataclass(frozen=True, slots=True)
class Line:
    number: int  # 1-based
    data: bytes  # the whole line, or its first PREVIEW_BYTES when too_long
    too_long: bool = False
    size: int = 0  # the full size in bytes (without the newline)


def open_source(path: str) -> BinaryIO:
    """A binary stream for a path or ``-`` (stdin), gunzipped when it starts with gzip magic."""
    raw: BinaryIO = sys.stdin.buffer if path == "-" else Path(path).open("rb")  # noqa: SIM115
    buffered: Any = raw if hasattr(raw, "peek") else io.BufferedReader(raw)
    stream: BinaryIO = buffered
    if buffered.peek(2)[:2] == GZIP_MAGIC:
        stream = cast(BinaryIO, gzip.GzipFile(fileobj=buffered, mode="rb"))
    return stream


def iter_lines(stream: BinaryIO, max_bytes: int) -> Iterator[Line]:
    """Lines without their terminator; blank lines are counted but not yielded."""
    number = 0
    parts: list[bytes] = []
    size = 0
    too_long = False
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            break
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            piece = chunk[start:] if nl < 0 else chunk[start:nl]
            size += len(piece)
            if not too_long:
                if size > max_bytes:
                    too_long = True
                    kept = b"".join(parts) + piece
                    parts = [kept[:PREVIEW_BYTES]]
                else:
                    parts.append(piece)
            if nl < 0:
                break
            number += 1
            line = _finish(number, parts, size, too_long)
            if line is not None:
                yield line
            parts, size, too_long = [], 0, False
            start = nl + 1
    if parts or size:
        number += 1
        line = _finish(number, parts, size, too_long)
        if line is not None:
            yield line


def _finish(number: int, parts: list[bytes], size: int, too_long: bool) -> Line | None:
    data = b"".join(parts)
    if not too_long:
        data = data.rstrip(b"\r")
        if not data.strip():
            return None
    return Line(number, data, too_long, size)
