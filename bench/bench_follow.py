"""Live projections: how long after an append commits until ``project --follow`` has projected
it, side by side with the floor — the same catch-up called synchronously right after the append.

    .venv/bin/python bench/bench_follow.py [--batches 15] [--backends sqlite,postgresql]

Each batch is the 14 demo scenarios through graph-tool-call's real PlanRunner (~100 events, as
envelopes), ingested with the normal path (scrubbed); the clock starts when the ingest has
committed. Follow mode: a :class:`Follower` thread (PostgreSQL: woken by NOTIFY; SQLite: polling
every 0.25 s, as shipped); the probe reads the checkpoints every 2 ms. Baseline: no follower,
``ProjectionEngine.catch_up()`` called at once. The difference is the wake-up cost.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _lines(tag: str) -> bytes:
    from tracelake.demo import run_scenario, scenarios

    out = []
    for s in scenarios():
        run_id = f"bench-{tag}-{s.name}"
        for seq, e in enumerate(run_scenario(s, trace_metadata={"collection_id": "bench"}), 1):
            env = {"type": "runner.event", "run_id": run_id, "seq": seq, "event": asdict(e)}
            out.append(json.dumps(env, ensure_ascii=False).encode() + b"\n")
    return b"".join(out)


def _ingest(store: object, data: bytes) -> None:
    import io

    from tracelake.config import Settings
    from tracelake.ingest import Ingestor
    from tracelake.scrub import get_scrubber, load_pseudonym_key

    key = load_pseudonym_key(store.url)  # type: ignore[attr-defined]
    ing = Ingestor(store, get_scrubber(key), key, Settings(database_url=store.url))  # type: ignore[attr-defined, arg-type]
    ing.ingest(io.BytesIO(data), origin="bench.jsonl")


def _projected(store: object) -> bool:
    from tracelake.projections import ProjectionEngine

    low = min(ProjectionEngine(store).checkpoints().values())  # type: ignore[arg-type]
    return low >= store.max_position()  # type: ignore[attr-defined]


def measure(url: str, batches: int) -> dict[str, object]:
    from tracelake.projections import ProjectionEngine
    from tracelake.projections.follow import Follower, start_thread
    from tracelake.store import open_store

    store = open_store(url)
    payloads = [_lines(f"b{i}") for i in range(2 * batches + 1)]
    _ingest(store, payloads[0])  # warm-up: scrubber loaded, first projection done
    ProjectionEngine(store).catch_up()
    floor = []
    for i in range(batches):
        _ingest(store, payloads[1 + i])
        t0 = time.perf_counter()
        ProjectionEngine(store).catch_up()
        floor.append(time.perf_counter() - t0)
    follower = Follower(store)
    stop = threading.Event()
    thread = start_thread(follower, stop)
    while not follower.state.leader:
        time.sleep(0.01)
    follow = []
    for i in range(batches):
        _ingest(store, payloads[1 + batches + i])
        t0 = time.perf_counter()
        while not _projected(store):
            time.sleep(0.002)
        follow.append(time.perf_counter() - t0)
    stop.set()
    thread.join(timeout=30)
    store.dispose()
    med_f, med_b = statistics.median(follow), statistics.median(floor)
    return {
        "events_per_batch": payloads[1].count(b"\n"),
        "follow_median_ms": round(med_f * 1000, 1),
        "follow_max_ms": round(max(follow) * 1000, 1),
        "floor_median_ms": round(med_b * 1000, 1),
        "floor_max_ms": round(max(floor) * 1000, 1),
        "ratio_median": round(med_f / med_b, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=15)
    parser.add_argument("--backends", default="sqlite,postgresql")
    args = parser.parse_args()
    import os

    os.environ.setdefault("TRACELAKE_PSEUDONYM_KEY", "bench-follow-pseudonym-key-0123456789")
    from tracelake.store import migrate
    from tracelake.store.connection import create_engine

    for backend in args.backends.split(","):
        if backend == "sqlite":
            with tempfile.TemporaryDirectory() as tmp:
                url = f"sqlite:///{tmp}/bench.db"
                engine = create_engine(url)
                migrate.upgrade(engine)
                engine.dispose()
                result = measure(url, args.batches)
        else:
            from bench._pg import scratch_database

            with scratch_database("tl_bench_follow") as url:
                result = measure(url, args.batches)
        print(json.dumps({"backend": backend, **result}))


if __name__ == "__main__":
    main()
