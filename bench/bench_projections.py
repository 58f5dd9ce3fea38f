"""Projection rebuild throughput on PostgreSQL against a plain read of the same events.

The corpus is real and scrubbed: the demo scenarios (real PlanRunner) and the agentlane
samples are ingested once through the normal path (normalize -> scrub -> append); their stored
payloads are then appended again under fresh run ids until the log holds ``--events`` events.

Baseline: ``Reader.iter_all`` — every event read in global order, batch by batch, decoded to
``StoredEvent`` and dropped. Measured: ``ProjectionEngine.rebuild()`` of all projections (reset
in one transaction, then catch up: read, fold every touched run, replace its rows in every
projection table, move the checkpoints, commit — per batch). Printed: events/s of each and
the ratio, best of ``--rounds``.

    python bench/bench_projections.py [--events 100000] [--batch 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import sys
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TRACELAKE_PSEUDONYM_KEY", "tracelake-bench-pseudonym-key-0123456789")

from bench._pg import scratch_database
from tracelake.config import Settings
from tracelake.demo import run_scenario, scenarios
from tracelake.ingest import Ingestor
from tracelake.projections import ProjectionEngine, default_projections
from tracelake.scrub import get_scrubber, load_pseudonym_key
from tracelake.store import NewEvent, Store, open_store

AGENTLANE = (
    Path(__file__).resolve().parents[2] / "shared" / "samples" / "agentlane" / "events.jsonl"
)


def seed(store: Store) -> None:
    buf = io.BytesIO()
    for s in scenarios():
        for seq, e in enumerate(run_scenario(s), 1):
            env = {
                "type": "runner.event",
                "run_id": f"seed-{s.name}",
                "seq": seq,
                "event": asdict(e),
            }
            buf.write(json.dumps(env, ensure_ascii=False).encode() + b"\n")
    if AGENTLANE.is_file():
        buf.write(AGENTLANE.read_bytes())
    buf.seek(0)
    key = load_pseudonym_key(store.url)
    Ingestor(store, get_scrubber(key), key, Settings(database_url=store.url)).ingest(
        io.BufferedReader(buf), origin="bench-seed"
    )


def grow(store: Store, n: int, batch: int) -> int:
    templates = list(store.reader.iter_all())
    copy = 0
    total = len(templates)
    while total < n:
        copy += 1
        rows = [
            NewEvent(
                run_id=f"{e.run_id}-c{copy}",
                seq=e.seq,
                type=e.type,
                source=e.source,
                payload=e.payload,
                recorded_at=e.recorded_at,
                plan_id=e.plan_id,
                step_id=e.step_id,
                tool=e.tool,
                collection_id=e.collection_id,
            )
            for e in templates
        ][: n - total]
        for i in range(0, len(rows), batch):
            store.appender.append(rows[i : i + batch])
        total += len(rows)
    return total


def plain_read(store: Store, batch: int) -> tuple[float, int]:
    start = time.perf_counter()
    count = sum(1 for _ in store.reader.iter_all(batch=batch))
    return time.perf_counter() - start, count


def rebuild(store: Store, batch: int) -> tuple[float, int]:
    engine = ProjectionEngine(store, batch_size=batch)
    start = time.perf_counter()
    result = engine.rebuild()
    return time.perf_counter() - start, result.events


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with scratch_database("tl_bench_proj") as url:
        store = open_store(url)
        seed(store)
        n = grow(store, args.events, args.batch)
        runs = len({e.run_id for e in store.reader.iter_all()})
        best = {"read": 1e9, "rebuild": 1e9}
        for _ in range(args.rounds):
            t, c = plain_read(store, args.batch)
            assert c == n, (c, n)
            best["read"] = min(best["read"], t)
            t, c = rebuild(store, args.batch)
            assert c == n, (c, n)
            best["rebuild"] = min(best["rebuild"], t)
        store.dispose()
    rate = {k: n / v for k, v in best.items()}
    print(f"machine: {platform.machine()} cpus={os.cpu_count()} python {platform.python_version()}")
    print(f"events: {n} in {runs} runs, batch: {args.batch}, best of {args.rounds} rounds")
    print(f"plain read in global order (Reader.iter_all): {rate['read']:>10,.0f} events/s")
    n_proj = len(default_projections())
    print(f"projection rebuild ({n_proj} projections)         : {rate['rebuild']:>10,.0f} events/s")
    print(f"ratio rebuild / plain read                 : {rate['rebuild'] / rate['read']:.2f}x")


if __name__ == "__main__":
    main()
