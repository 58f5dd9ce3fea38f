"""What tamper evidence costs: append with and without the hash chain, and `db verify` speed.

For each backend, the same in-memory events (realistic graph-tool-call payloads, as
``bench_append`` builds them) are appended in batches into two fresh databases, alternately,
best of N rounds: once as shipped (the chain link written in every append transaction) and
once with the link step switched off. Then ``db verify --full`` walks the whole log.
Printed: events/s of each, the ratio, and verify's events/s.

    python bench/bench_lifecycle.py [--events 100000] [--batch 2000] [--rounds 3]

``--ingest N`` measures end to end instead: ``tracelake ingest`` of N generated graph-tool-call
lines (Faker, in envelopes, one of ``--subjects`` member ids per run) three ways, alternately: as before
this issue (no chain, the key used directly for pseudonyms), with the chain only, and as
shipped (chain and per-subject secrets, looked up and cached).
"""

from __future__ import annotations

import argparse
import contextlib
import platform
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._pg import scratch_database
from bench.bench_append import corpus
from tracelake.lifecycle.verify import verify
from tracelake.store import NewEvent, appender, migrate, open_store
from tracelake.store.connection import create_engine


@contextlib.contextmanager
def fresh(backend: str) -> Iterator[str]:
    if backend == "postgresql":
        with scratch_database("tl_bench_life") as url:
            yield url
        return
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/bench.db"
        engine = create_engine(url)
        migrate.upgrade(engine)
        engine.dispose()
        yield url


def run(url: str, rows: list[NewEvent], batch: int, chained: bool) -> float:
    store = open_store(url)
    original = appender.chain.link_appended
    if not chained:
        appender.chain.link_appended = lambda conn: 0  # type: ignore[assignment]
    try:
        start = time.perf_counter()
        for i in range(0, len(rows), batch):
            store.append(rows[i : i + batch])
        return len(rows) / (time.perf_counter() - start)
    finally:
        appender.chain.link_appended = original  # type: ignore[method-assign]
        store.dispose()


def ingest_lines(n: int, people: int) -> bytes:
    from faker import Faker

    from tests.lifecycle.helpers import envelopes, jsonl, subjects

    fake = Faker(["ko_KR", "en_US", "ja_JP"])
    fake.seed_instance(16)
    return jsonl(envelopes(fake, subjects(fake, people), n // 4, "bench"))


def run_ingest(url: str, data: bytes, chained: bool, per_subject: bool) -> float:
    import io

    from tracelake.config import Settings
    from tracelake.ingest import Ingestor
    from tracelake.scrub import get_scrubber, load_pseudonym_key

    store = open_store(url)
    key = load_pseudonym_key(url)
    if not per_subject:
        key = bytes(key)
    original = appender.chain.link_appended
    if not chained:
        appender.chain.link_appended = lambda conn: 0  # type: ignore[assignment]
    try:
        ingestor = Ingestor(store, get_scrubber(key), key, Settings(database_url=url))
        start = time.perf_counter()
        report = ingestor.ingest(io.BufferedReader(io.BytesIO(data)), "bench.jsonl")  # type: ignore[arg-type]
        assert not report.quarantined and not report.scrub_failed, report
        return report.lines / (time.perf_counter() - start)
    finally:
        appender.chain.link_appended = original  # type: ignore[method-assign]
        store.dispose()


def main_ingest(n: int, people: int, rounds: int, backends: list[str]) -> None:
    import os

    os.environ.setdefault("TRACELAKE_PSEUDONYM_KEY", "bench-pseudonym-key-0123456789abcdef")
    data = ingest_lines(n, people)
    variants = {
        "before (no chain, key only)": (False, False),
        "chain only": (True, False),
        "as shipped (chain + secrets)": (True, True),
    }
    print(f"ingest: {n} lines, {n // 4} runs, {people} distinct subjects, best of {rounds}")
    for backend in backends:
        best = dict.fromkeys(variants, 0.0)
        for _ in range(rounds):
            for name, (chained, per_subject) in variants.items():
                with fresh(backend) as url:
                    best[name] = max(best[name], run_ingest(url, data, chained, per_subject))
        print(f"[{backend}]")
        base = best["before (no chain, key only)"]
        for name, rate in best.items():
            print(f"  {name:<30}: {rate:>8,.0f} lines/s  {rate / base:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--ingest", type=int, default=0, help="lines; end to end instead")
    parser.add_argument("--subjects", type=int, default=2000, help="distinct ids (--ingest)")
    args = parser.parse_args()
    if args.ingest:
        main_ingest(args.ingest, args.subjects, args.rounds, args.backends.split(","))
        return
    rows = corpus(args.events)
    print(f"machine: {platform.machine()}  python {platform.python_version()}")
    print(f"events: {args.events}, batch: {args.batch}, best of {args.rounds} rounds")
    for backend in args.backends.split(","):
        best = {True: 0.0, False: 0.0}
        verify_rate = 0.0
        for _ in range(args.rounds):
            for chained in (False, True):  # alternate, so load spikes hit both
                with fresh(backend) as url:
                    best[chained] = max(best[chained], run(url, rows, args.batch, chained))
                    if chained:
                        store = open_store(url)
                        t = time.perf_counter()
                        result = verify(store, full=True, save=False)
                        elapsed = time.perf_counter() - t
                        store.dispose()
                        assert result.ok and result.events == len(rows), result
                        verify_rate = max(verify_rate, result.events / elapsed)
        print(f"[{backend}]")
        print(f"  append without chain : {best[False]:>10,.0f} events/s")
        print(f"  append with chain    : {best[True]:>10,.0f} events/s")
        print(f"  ratio with / without : {best[True] / best[False]:.2f}x")
        print(f"  db verify --full     : {verify_rate:>10,.0f} events/s")


if __name__ == "__main__":
    main()
