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
from typing import Any, BinaryIO, NamedTuple, cast

GZIP_MAGIC = b"\x1f\x8b"
PREVIEW_BYTES = 4096
_CHUNK = 1 << 16
_new_line = tuple.__new__


class Line(NamedTuple):
    """One input line. A tuple: a worker builds one per line of its chunk, and a tuple is built
    in a fraction of the time a frozen dataclass takes (its ``__init__`` sets each field
    through ``object.__setattr__``)."""

    number: int  # 1-based
    data: bytes  # the whole line, or its first PREVIEW_BYTES when too_long or damaged
    too_long: bool = False
    size: int = 0  # the full size in bytes (without the newline)
    damage: str | None = None  # a quarantine reason: the input was damaged at this line
    detail: str = ""


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
    for chunk in iter_chunks(stream, max_bytes, 256):
        yield from chunk.lines(max_bytes)


@dataclass(frozen=True, slots=True)
class Chunk:
    """Consecutive lines of the input, as read: what an ingest worker is handed.

    One bytes object crosses the process boundary instead of a :class:`Line` per line, and the
    reading process finds line ends with one ``rfind`` per block read instead of a loop per
    line; the worker splits them (:meth:`lines`). Every line of ``data`` is whole: one within
    the limit, or one over it that fitted in a single 64 KiB block (:meth:`lines` cuts it to its
    preview). A line over the limit that spans blocks is never held whole: it ends the chunk as
    ``last``, its first bytes only.
    """

    first: int  # the number of data's first line (1-based, blank lines counted)
    data: bytes  # whole lines, each followed by its b"\n" (the last one's may be missing)
    count: int  # how many lines data holds
    last: Line | None = None  # after them: an over-long line (its preview) or the damage line
    read: int = 0  # input bytes read for this chunk (progress)

    def __reduce__(
        self,
    ) -> tuple[type[Chunk], tuple[int, bytes, int, Line | None, int]]:
        return Chunk, (self.first, self.data, self.count, self.last, self.read)

    def lines(self, max_bytes: int) -> list[Line]:
        """The chunk's lines as :func:`iter_lines` yields them: blank ones left out, a trailing
        CR dropped, one over *max_bytes* cut to its first :data:`PREVIEW_BYTES`."""
        out: list[Line] = []
        if self.count:
            number = self.first
            for raw in self.data.split(b"\n"):  # (after a last newline: b"", blank)
                size = len(raw)
                if size > max_bytes:
                    out.append(Line(number, raw[:PREVIEW_BYTES], True, size))
                else:
                    data = raw.rstrip(b"\r")
                    if data.strip():  # (tuple.__new__: the fields in order, no Python call)
                        out.append(_new_line(Line, (number, data, False, size, None, "")))
                number += 1
        if self.last is not None:
            out.append(self.last)
        return out


def iter_chunks(stream: BinaryIO, max_bytes: int, lines: int) -> Iterator[Chunk]:
    """The input in chunks of *lines* lines, in order (fewer before an over-long line, the
    damage or the end of the input).

    Memory stays bounded by the block read (64 KiB), the chunk and *max_bytes*: the line being
    read is held whole only while it is within the limit. Damage reported by the stream ends
    the input with a chunk whose ``last`` line carries it (everything before it included).
    """
    reader = _ChunkReader(max_bytes, lines)
    while True:
        try:
            block = stream.read(_CHUNK)
        except InputDamagedError as exc:
            yield reader.damaged(exc)
            return
        if not block:
            break
        yield from reader.block(block)
    yield from reader.end()


class _ChunkReader:
    """The state of :func:`iter_chunks` between blocks."""

    def __init__(self, max_bytes: int, lines: int) -> None:
        self.max_bytes = max_bytes
        self.lines = lines
        self.base = 0  # lines before the pending chunk
        self.done: list[bytes] = []  # whole lines of the pending chunk, each with its newline
        self.count = 0
        self.read = 0
        self.partial: list[bytes] = []  # the line being read (its preview once over the limit)
        self.size = 0  # that line's bytes so far
        self.too_long = False

    def _chunk(self, last: Line | None) -> Chunk:
        chunk = Chunk(self.base + 1, b"".join(self.done), self.count, last, self.read)
        self.base += self.count + (last is not None)
        self.done, self.count, self.read = [], 0, 0
        return chunk

    def _partial_line(self, reason: str | None = None, detail: str = "") -> Line:
        kept = b"".join(self.partial)[:PREVIEW_BYTES]
        return Line(self.base + self.count + 1, kept, self.too_long, self.size, reason, detail)

    def damaged(self, exc: InputDamagedError) -> Chunk:
        return self._chunk(self._partial_line(exc.reason, exc.detail))

    def block(self, block: bytes) -> Iterator[Chunk]:
        self.read += len(block)
        end = block.rfind(b"\n")
        if end < 0:  # the line being read goes on
            self.size += len(block)
            if not self.too_long:
                self.partial.append(block)
                self._check_limit()
            return
        first_end = block.find(b"\n")
        rest = 0  # where the block's whole lines after the line being read start
        if self.too_long or self.size + first_end > self.max_bytes:  # it ends a chunk
            if not self.too_long:  # (once over, the preview is what was read until then)
                self.partial.append(block[:first_end])
                self.too_long = True
            self.size += first_end
            yield self._chunk(self._partial_line())
            rest = first_end + 1
        else:
            self.done += self.partial
        self.done.append(block[rest : end + 1])
        self.count += block.count(b"\n", rest, end + 1)
        tail = block[end + 1 :]
        self.partial, self.size, self.too_long = [tail], len(tail), False
        self._check_limit()
        if self.count >= self.lines:
            yield from self._full_chunks()

    def _check_limit(self) -> None:
        if self.size > self.max_bytes:
            self.too_long = True
            self.partial = [b"".join(self.partial)[:PREVIEW_BYTES]]

    def _full_chunks(self) -> Iterator[Chunk]:
        data = b"".join(self.done)
        while self.count >= self.lines:
            cut = _after_newline(data, self.lines)
            yield Chunk(self.base + 1, data[:cut], self.lines, None, self.read)
            self.base, self.count, self.read = self.base + self.lines, self.count - self.lines, 0
            data = data[cut:]
        self.done = [data]

    def end(self) -> Iterator[Chunk]:
        if self.too_long:
            yield self._chunk(self._partial_line())
            return
        if self.size:  # a last line without its newline
            self.done += self.partial
            self.count += 1
        if self.count:
            yield self._chunk(None)


def _after_newline(data: bytes, n: int) -> int:
    """The index just after the *n*-th newline of *data* (which holds at least *n*)."""
    at = -1
    for _ in range(n):
        at = data.index(b"\n", at + 1)
    return at + 1
