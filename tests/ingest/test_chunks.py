"""The chunked reader (what the ingest workers are handed) against the line-by-line reader it
replaced, kept here as the reference: the same lines, numbers, sizes, previews and damage, for
any bytes, any line limit, any chunk size and any pattern of short reads."""

from __future__ import annotations

import io
import pickle
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracelake.ingest.lines import (
    PREVIEW_BYTES,
    InputDamagedError,
    Line,
    iter_chunks,
    iter_lines,
)
from tracelake.store import Store

_READ = 1 << 16  # what both readers ask for per read


def reference_lines(stream: io.RawIOBase, max_bytes: int) -> Iterator[Line]:
    """``iter_lines`` as it was before the chunked reader (a loop per line)."""
    number = 0
    parts: list[bytes] = []
    size = 0
    too_long = False
    while True:
        try:
            chunk = stream.read(_READ)
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


@dataclass
class Stream(io.RawIOBase):
    """*data* in reads of the given sizes (a pipe, a decompressor), then damage if asked."""

    data: bytes
    reads: list[int]
    damage_at: int | None = None

    def __post_init__(self) -> None:
        self.at = 0
        self.turn = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        end = len(self.data) if self.damage_at is None else self.damage_at
        if self.at >= end:
            if self.damage_at is not None:
                raise InputDamagedError("damaged_gzip", f"at byte {self.at}")
            return b""
        step = self.reads[self.turn % len(self.reads)] if self.reads else size
        self.turn += 1
        piece = self.data[self.at : min(end, self.at + min(size, step))]
        self.at += len(piece)
        return piece


# lines of every kind: blank, CR, spaces, short, around the limit, beyond a read
_PIECES = st.one_of(
    st.sampled_from([b"\n", b"\r\n", b"\r", b" ", b"\t", b"\n\n", b'{"a":1}\n']),
    st.binary(max_size=40),
    st.integers(1, 3 * _READ).map(lambda n: b"x" * n),
    st.integers(1, 600).map(lambda n: b"y" * n + b"\n"),
)
inputs = st.lists(_PIECES, max_size=30).map(b"".join)
limits = st.one_of(st.integers(1, 700), st.sampled_from([PREVIEW_BYTES, _READ, 1 << 20]))
read_sizes = st.lists(st.integers(1, _READ), max_size=6)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=inputs, max_bytes=limits, reads=read_sizes, per_chunk=st.integers(1, 9))
def test_chunks_hold_exactly_the_reference_lines(
    data: bytes, max_bytes: int, reads: list[int], per_chunk: int
) -> None:
    expected = list(reference_lines(Stream(data, reads), max_bytes))
    chunks = list(iter_chunks(Stream(data, reads), max_bytes, per_chunk))  # type: ignore[arg-type]
    got = [line for chunk in chunks for line in chunk.lines(max_bytes)]
    assert got == expected
    assert list(iter_lines(Stream(data, reads), max_bytes)) == expected  # type: ignore[arg-type]
    assert sum(c.read for c in chunks) == len(data)
    for chunk in chunks:
        assert chunk.count <= per_chunk
        assert chunk.count or chunk.last is not None  # never an empty chunk
        assert pickle.loads(pickle.dumps(chunk)) == chunk
    # a chunk is cut short only before an over-long line or at the end
    assert all(c.count == per_chunk or c.last is not None for c in chunks[:-1])
    numbers = [c.first for c in chunks]
    assert numbers == sorted(numbers)


@settings(max_examples=200, deadline=None)
@given(data=inputs, max_bytes=limits, reads=read_sizes, cut=st.integers(0, 10**6))
def test_damage_ends_the_chunks_as_it_ended_the_lines(
    data: bytes, max_bytes: int, reads: list[int], cut: int
) -> None:
    at = cut % (len(data) + 1)
    expected = list(reference_lines(Stream(data, reads, at), max_bytes))
    chunks = list(iter_chunks(Stream(data, reads, at), max_bytes, 4))  # type: ignore[arg-type]
    assert [line for c in chunks for line in c.lines(max_bytes)] == expected
    assert expected[-1].damage == "damaged_gzip"
    assert chunks[-1].last == expected[-1]


def test_a_chunk_crosses_to_a_worker_as_one_bytes_object() -> None:
    lines = b"".join(b'{"n":%d}\n' % i for i in range(500))
    chunks = list(iter_chunks(io.BytesIO(lines), 1 << 20, 200))
    assert [c.count for c in chunks] == [200, 200, 100]
    assert [c.first for c in chunks] == [1, 201, 401]
    assert isinstance(chunks[1].data, bytes) and chunks[1].data.startswith(b'{"n":200}\n')
    assert chunks[2].lines(1 << 20)[-1] == Line(500, b'{"n":499}', False, 9)
    assert len(pickle.dumps(chunks[0])) < len(chunks[0].data) + 200


def test_started_workers_take_the_first_lines(
    store: Store, ingest_workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.ingest.helpers import gtc_runs, jsonl
    from tracelake.config import Settings
    from tracelake.ingest import Ingestor, workers
    from tracelake.ingest import ingestor as ingest_module
    from tracelake.ingest.prepare import Preparer, Ready, Rejected
    from tracelake.scrub import get_scrubber, load_pseudonym_key

    workers.shutdown_pools()  # not one an earlier test left started (tests/scale runs first)
    key = load_pseudonym_key(store.url)
    conf = Settings(database_url=store.url, ingest_workers=ingest_workers)
    ingestor = Ingestor(store, get_scrubber(key), key, conf)
    ingestor.start_workers()
    assert workers.started(2) is (ingest_workers == 2)
    monkeypatch.setattr(ingest_module, "CHUNKS_BEFORE_WORKERS", 10**6)  # all here, unless started
    here: list[int] = []
    prepare = Preparer.prepare

    def counted(self: Preparer, lines: list[Line]) -> list[Ready | Rejected]:
        here.append(len(lines))
        return prepare(self, lines)

    monkeypatch.setattr(Preparer, "prepare", counted)
    events = [e for run in gtc_runs() for e in run]
    report = ingestor.ingest(io.BufferedReader(io.BytesIO(jsonl(events))), "started.jsonl")
    assert report.appended == len(events) and report.lines == len(events)
    assert bool(here) is (ingest_workers == 1)  # started workers: no line prepared here
