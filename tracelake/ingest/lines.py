"""Reading JSONL / JSONL.gz input line by line, within a byte limit per line.

An over-long line is never held in memory whole: its first bytes are kept for a (scrubbed)
preview and the rest is skipped up to the next newline.

Damaged input never costs the lines before the damage. gzip is decompressed here, member by
member, in bounded steps (a "gzip bomb" never inflates more than one chunk at a time), so a
truncated file, a corrupt block, trailing bytes after the last member, or more decompressed
bytes than ``max_decompressed`` allow end the input with one :class:`Line` whose ``damage``
names the reason; every complete line before it is yielded as usual. The line that was being
read when the damage hit is that damage line (its bytes, cut, are kept for the preview).
"""

from __future__ import annotations

import io
import sys
import zlib
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
    data: bytes  # the whole line, or its first PREVIEW_BYTES when too_long or damaged
    too_long: bool = False
    size: int = 0  # the full size in bytes (without the newline)
    damage: str | None = None  # a quarantine reason: the input was damaged at this line
    detail: str = ""

    def __reduce__(self) -> tuple[type[Line], tuple[int, bytes, bool, int, str | None, str]]:
        # to the ingest workers: the dataclass's own pickling (its slots state, then a frozen
        # setattr per field) cost ~11 us a line across both processes; this ~2 us
        return Line, (self.number, self.data, self.too_long, self.size, self.damage, self.detail)


class InputDamagedError(Exception):
    """The input cannot be read past this point (the lines before it are good)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


class GunzipReader(io.RawIOBase):
    """gzip decompression that keeps everything good before damage and then says what broke."""

    def __init__(self, raw: BinaryIO, max_decompressed: int | None = None) -> None:
        self._raw = raw
        self._limit = max_decompressed
        self._inflater: Any = zlib.decompressobj(31)
        self._tail = b""  # compressed bytes read but not yet given to the inflater
        self._out = b""
        self._at = 0
        self._consumed = 0
        self._total = 0
        self._members = 1
        self._error: InputDamagedError | None = None
        self._done = False

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()

    def readinto(self, buffer: Any) -> int:
        while self._at >= len(self._out):
            if self._error is not None:
                raise self._error
            if self._done:
                return 0
            self._out, self._at = self._step(), 0
        n = min(len(buffer), len(self._out) - self._at)
        buffer[:n] = self._out[self._at : self._at + n]
        self._at += n
        return n

    def _compressed(self) -> bytes:
        data, self._tail = self._tail, b""
        if not data:
            data = self._raw.read(_CHUNK)
            self._consumed += len(data)
        return data

    def _step(self) -> bytes:
        if self._inflater is None:  # between members: another member, zero padding, or junk
            self._between_members()
            return b""
        data = self._inflater.unconsumed_tail or self._compressed()
        if not data:
            self._error = InputDamagedError(
                "truncated_gzip",
                f"the gzip data ends early (after {self._consumed} compressed bytes); "
                "the lines before it were stored",
            )
            return b""
        saved = self._inflater.copy()
        try:
            out: bytes = self._inflater.decompress(data, _CHUNK)
        except zlib.error as exc:
            self._error = InputDamagedError(
                "damaged_gzip",
                f"corrupt gzip data near compressed byte {self._consumed} ({exc}); "
                "the lines before it were stored",
            )
            return _salvage(saved, data)
        if self._inflater.eof:
            self._tail = self._inflater.unused_data
            self._inflater = None
        self._total += len(out)
        if self._limit is not None and self._total > self._limit:
            out = out[: len(out) - (self._total - self._limit)]
            self._error = InputDamagedError(
                "decompressed_too_large",
                f"more than {self._limit} bytes after decompression "
                "(TRACELAKE_MAX_DECOMPRESSED_BYTES); the rest of the file was not read",
            )
        return out

    def _between_members(self) -> None:
        data = self._compressed()
        while data and not data.strip(b"\x00"):  # zero padding after the last member is fine
            data = self._compressed()
        data = data.lstrip(b"\x00")
        if not data:
            self._done = True
            return
        if len(data) < 2:
            more = self._compressed()
            data += more
        if data[:2] == GZIP_MAGIC:
            self._tail = data
            self._inflater = zlib.decompressobj(31)
            self._members += 1
            return
        self._error = InputDamagedError(
            "trailing_bytes",
            f"bytes after the end of gzip member {self._members} that are not gzip data; "
            "every line before them was stored",
        )


def _salvage(inflater: Any, data: bytes) -> bytes:
    """What inflates before the corrupt byte: the chunk again, in small steps."""
    out: list[bytes] = []
    size = 0
    for start in range(0, len(data), 256):
        before = inflater.copy()
        try:
            piece = inflater.decompress(data[start : start + 256], _CHUNK)
        except zlib.error:  # the bad byte is in this piece: take it byte by byte up to it
            out.append(_bytewise(before, data[start : start + 256]))
            break
        out.append(piece)
        size += len(piece)
        if size >= _CHUNK * 16 or inflater.unconsumed_tail:
            break
    return b"".join(out)


def _bytewise(inflater: Any, data: bytes) -> bytes:
    """Everything that inflates before the first byte zlib refuses."""
    out: list[bytes] = []
    for i in range(len(data)):
        try:
            out.append(inflater.decompress(data[i : i + 1]))
        except zlib.error:
            break
    return b"".join(out)


def open_source(path: str, max_decompressed: int | None = None) -> BinaryIO:
    """A binary stream for a path or ``-`` (stdin), gunzipped when it starts with gzip magic."""
    raw: BinaryIO = sys.stdin.buffer if path == "-" else Path(path).open("rb")  # noqa: SIM115
    buffered: Any = raw if hasattr(raw, "peek") else io.BufferedReader(raw)
    stream: BinaryIO = buffered
    if buffered.peek(2)[:2] == GZIP_MAGIC:
        # Not wrapped in a BufferedReader: it would drop data read before an error in one call.
        stream = cast(BinaryIO, GunzipReader(buffered, max_decompressed))
    return stream


def iter_lines(stream: BinaryIO, max_bytes: int) -> Iterator[Line]:
    """Lines without their terminator; blank lines are counted but not yielded.

    When the stream reports damage (:class:`InputDamagedError`), one last line carries it.
    """
    number = 0
    parts: list[bytes] = []
    size = 0
    too_long = False
    while True:
        try:
            chunk = stream.read(_CHUNK)
        except InputDamagedError as exc:
            kept = b"".join(parts)[:PREVIEW_BYTES]
            yield Line(number + 1, kept, too_long, size, exc.reason, exc.detail)
            return
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
