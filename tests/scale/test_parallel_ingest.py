"""A parallel ingest stores exactly what a serial one stores: same rows in the same order,
same run ids and seqs, same quarantine, same idempotency on a second pass. Inputs are drawn
by hypothesis from real runner events (PlanRunner, agentlane samples), envelopes with
colliding run ids and seqs, and hostile lines; batch and chunk sizes are drawn too, so runs
straddle chunk and batch boundaries in every way."""

from __future__ import annotations

import io
import json
import random
import re
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.ingest.helpers import agentlane_bytes, gtc_runs
from tracelake.config import Settings
from tracelake.ingest import Ingestor, IngestReport
from tracelake.ingest.lines import Chunk
from tracelake.scrub import get_scrubber, load_pseudonym_key
from tracelake.store import Store, migrate, open_store
from tracelake.store.connection import create_engine

BAD_LINES = [
    b"not json, Bearer abcdefghijklmnopqrstuvwxyz012345",
    b"[1, 2]",
    b'{"no_type": 1, "email": "kim.seoyeon@example.com"}',
    b'{"type": "plan.started", "step_count": "lots"}',
    b'{"type": "x", "n": NaN}',
    b'{"type": "x", "n": 1e400}',
    b'{"type": "x", "v": "\xff"}',
    b'{"type": "x", "note": "a\\u0000b \\ud800"}',
    b'{"type": "runner.event", "run_id": "r-1", "seq": 0, "event": {"type": "x"}}',
    b'{"type": "x", "d": ' + b'{"a": ' * 70 + b"1" + b"}" * 70 + b"}",
]


@cache
def _agentlane_runs() -> list[list[bytes]]:
    runs: list[list[bytes]] = []
    for line in agentlane_bytes().splitlines():
        obj = json.loads(line)
        if (obj["type"] == "agent_start" and obj["payload"].get("is_root")) or not runs:
            runs.append([])
        runs[-1].append(line)
    return runs


@cache
def _gtc() -> list[list[dict[str, Any]]]:
    return gtc_runs()


@st.composite
def segment(draw: st.DrawFn) -> list[bytes]:
    kind = draw(st.sampled_from(["bare", "envelope_seq", "envelope_plain", "agentlane", "bad"]))
    if kind == "bad":
        return [draw(st.sampled_from(BAD_LINES))]
    if kind == "agentlane":
        return list(draw(st.sampled_from(_agentlane_runs())))
    run = draw(st.sampled_from(_gtc()))
    if kind == "bare":
        return [json.dumps(e, ensure_ascii=False).encode() for e in run]
    run_id = draw(st.sampled_from(["ql-run-1", "ql-run-2", "kim.minjun@example.com"]))
    out = []
    for i, e in enumerate(run, 1):
        env: dict[str, Any] = {"type": "runner.event", "run_id": run_id, "event": e}
        if kind == "envelope_seq":
            env["seq"] = i  # the same run id drawn twice: duplicates or sequence conflicts
        out.append(json.dumps(env, ensure_ascii=False).encode())
    return out


inputs = st.lists(segment(), min_size=1, max_size=8).map(
    lambda parts: b"\n".join(line for part in parts for line in part) + b"\n"
)


def _store(tmp: Path, name: str) -> Store:
    url = f"sqlite:///{tmp / name}"
    engine = create_engine(url)
    migrate.upgrade(engine)
    engine.dispose()
    return open_store(url)


def _ingest(store: Store, data: bytes, workers: int, batch: int) -> IngestReport:
    key = load_pseudonym_key(store.url)
    s = Settings(database_url=store.url, ingest_workers=workers, batch_size=batch)
    return Ingestor(store, get_scrubber(key), key, s).ingest(
        io.BufferedReader(io.BytesIO(data)), "same-origin.jsonl"
    )


def _dump(store: Store) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    events = [
        (
            e.position,
            e.run_id,
            e.seq,
            e.type,
            e.source,
            e.event_id,
            e.plan_id,
            e.step_id,
            e.tool,
            e.collection_id,
            json.dumps(e.payload, sort_keys=True),
            json.dumps(store.redaction_report(e.redactions), sort_keys=True),
        )
        for e in store.iter_all()
    ]
    with store.reading() as conn:
        quarantine = [
            tuple(r)
            for r in conn.execute(
                sa.text(
                    "SELECT origin, line_no, reason, detail, event_type, run_id, seq, preview,"
                    " dedupe_key FROM quarantine ORDER BY id"
                )
            )
        ]
    return _same_subjects(events), _same_subjects(_same_hashes(quarantine))


def _same_hashes(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """A conflict's dedupe key ends with the hash of its scrubbed payload, which holds the
    database's own pseudonyms (hypothesis seeds 2342779019, 3738174023: a `custNo` in a
    conflicting event): hashes numbered by first appearance, like the pseudonyms."""
    names: dict[str, str] = {}
    out = []
    for row in rows:
        *rest, key = row
        if isinstance(key, str) and key.startswith("conflict:"):
            head, _, digest = key.rpartition(":")
            key = f"{head}:{names.setdefault(digest, f'hash#{len(names)}')}"
        out.append((*rest, key))
    return out


# pseudonyms, and the event ids derived from a pseudonymised run id
_PSEUDONYM = re.compile(r"psn_[0-9a-f]{16,}|ev-[0-9a-f]{24}")


def _same_subjects(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Pseudonyms numbered by first appearance. Each database holds its own per-subject secrets
    (erasure by crypto-shredding), so two databases give one subject different pseudonyms; what
    must be the same is which values share one."""
    names: dict[str, str] = {}

    def name(m: re.Match[str]) -> str:
        return names.setdefault(m.group(0), f"psn#{len(names)}")

    return [
        tuple(_PSEUDONYM.sub(name, v) if isinstance(v, str) else v for v in row) for row in rows
    ]


@pytest.mark.slow
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    data=inputs, batch=st.integers(1, 40), chunk=st.integers(1, 7), serial_chunks=st.integers(0, 3)
)
def test_parallel_ingest_stores_exactly_what_serial_ingest_stores(
    data: bytes, batch: int, chunk: int, serial_chunks: int
) -> None:
    from tracelake.ingest import ingestor

    old = ingestor.CHUNK_LINES, ingestor.CHUNKS_BEFORE_WORKERS
    ingestor.CHUNK_LINES, ingestor.CHUNKS_BEFORE_WORKERS = chunk, serial_chunks
    try:
        with tempfile.TemporaryDirectory() as tmp:
            serial, parallel = _store(Path(tmp), "serial.db"), _store(Path(tmp), "parallel.db")
            try:
                for _pass in range(2):  # the second pass must append nothing new, alike
                    a = _ingest(serial, data, 1, batch).as_dict()
                    b = _ingest(parallel, data, 2, batch).as_dict()
                    assert a == b
                assert a["appended"] == 0 and a["lines"] == data.count(b"\n")
                assert _dump(serial) == _dump(parallel)
            finally:
                serial.dispose()
                parallel.dispose()
    finally:
        ingestor.CHUNK_LINES, ingestor.CHUNKS_BEFORE_WORKERS = old


def _mixed_input(seed: int) -> bytes:
    """Every kind of segment once or more, in an order drawn from *seed*."""
    rng = random.Random(seed)
    parts: list[list[bytes]] = [[line] for line in BAD_LINES]
    parts += [rng.choice(_agentlane_runs()) for _ in range(3)]
    for i, run in enumerate(rng.sample(_gtc(), min(6, len(_gtc())))):
        if i % 2:
            parts.append([json.dumps(e, ensure_ascii=False).encode() for e in run])
        else:
            envs = [{"type": "runner.event", "run_id": f"ql-run-{i}", "event": e} for e in run]
            parts.append([json.dumps(env, ensure_ascii=False).encode() for env in envs])
    rng.shuffle(parts)
    return b"\n".join(line for part in parts for line in part) + b"\n"


@pytest.mark.postgres
def test_forked_workers_on_postgresql_store_what_serial_ingest_stores(pg_server: Any) -> None:
    """The workers are forked from a process that holds PostgreSQL connections (the store's,
    and the subject secrets' one that the first chunks used): they must open their own, and
    the parent's must still work afterwards (the second pass runs on them)."""
    from tracelake.ingest import ingestor

    old = ingestor.CHUNK_LINES, ingestor.CHUNKS_BEFORE_WORKERS
    ingestor.CHUNK_LINES, ingestor.CHUNKS_BEFORE_WORKERS = 5, 2
    data = _mixed_input(random.randrange(2**32))
    serial = open_store(pg_server.url(pg_server.create(template=pg_server.template)))
    parallel = open_store(pg_server.url(pg_server.create(template=pg_server.template)))
    try:
        for _pass in range(2):
            a = _ingest(serial, data, 1, 16).as_dict()
            b = _ingest(parallel, data, 2, 16).as_dict()
            assert a == b
        assert a["appended"] == 0 and a["lines"] == data.count(b"\n")
        assert _dump(serial) == _dump(parallel)
    finally:
        ingestor.CHUNK_LINES, ingestor.CHUNKS_BEFORE_WORKERS = old
        serial.dispose()
        parallel.dispose()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are Linux's")
def test_the_pools_pipes_hold_a_whole_chunk() -> None:
    """A chunk (~250 KB of lines) and its results cross each pipe in one write: with Linux's
    64 KB default they went in pieces, each waiting for this process's GIL (see
    ``workers._widen_pipes``), and the workers sat idle meanwhile."""
    import fcntl

    from tracelake.ingest import workers

    executor = workers.pool(2)
    queues = [executor._call_queue, executor._result_queue]  # type: ignore[attr-defined]
    sizes = [fcntl.fcntl(q._writer.fileno(), fcntl.F_GETPIPE_SZ) for q in queues]
    if workers.pipe_bytes() <= 65536:
        pytest.skip("this system allows no pipe larger than the default")
    assert sizes == [workers.pipe_bytes()] * 2
    line = b'{"type": "plan.started", "note": "' + b"x" * 300_000 + b'"}\n'
    chunk = Chunk(first=1, data=line, count=1)
    config = (b"k" * 32, 1 << 20, 64)
    (result,) = next(workers.prepare_ordered(executor, "big.jsonl", config, [chunk], 2))
    assert type(result).__name__ == "Ready"
