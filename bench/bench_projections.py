"""Projection throughput on PostgreSQL against a plain ordered read of the same events, the
writes it costs, and whether its cost is linear in run length.

Corpus: realistic scrubbed events. The real PlanRunner's commerce corpus
(``tests/corpora/gtc_commerce.py``: personal data in goals, arguments, outputs and messages),
the demo scenarios and the agentlane samples are ingested once through the normal path
(normalize -> scrub -> append); their stored payloads are then appended again under fresh run
ids until the log holds ``--events`` events.

1. **Rebuild**: ``ProjectionEngine.rebuild()`` of every projection against a plain read in
   global order (``Reader.iter_all``: every event read and decoded to ``StoredEvent``), the
   two measured alternately in one run, best of ``--rounds``. Then, from
   ``pg_stat_user_tables``, the rows inserted / updated / deleted per table by one rebuild,
   and the updates per learning record.
2. **Linear in run length**: ``--long`` events of ONE run (a plan of many steps) appended in
   ``--piece``-event pieces with a catch-up after each piece (a projector following the log),
   against the same number of events in runs of the same shape, ``--piece`` events each,
   appended and projected the same way: the cost per event of each and their ratio
   (1.0 = linear in run length).

    python bench/bench_projections.py [--events 200000] [--batch 2000] [--rounds 2]
                                      [--long 50000] [--piece 1000]
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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TRACELAKE_PSEUDONYM_KEY", "tracelake-bench-pseudonym-key-0123456789")


from bench._pg import scratch_database
from tracelake.config import Settings
from tracelake.demo import run_scenario, scenarios
from tracelake.ingest import Ingestor
from tracelake.projections import ProjectionEngine, default_projections
from tracelake.scrub import get_scrubber, load_pseudonym_key
from tracelake.store import NewEvent, Store, open_store
from tracelake.store.records import StoredEvent

AGENTLANE = (
    Path(__file__).resolve().parents[2] / "shared" / "samples" / "agentlane" / "events.jsonl"
)


def seed(store: Store, customers: int) -> None:
    from tests.corpora.gtc_commerce import build_gtc_corpus

    buf = io.BytesIO()
    events, _ = build_gtc_corpus(runs=customers, seed=11)
    for e in events:  # bare stream: runs split at plan.started, ids derived by ingest
        buf.write(json.dumps(e, ensure_ascii=False, default=str).encode() + b"\n")
    for s in scenarios():
        for seq, ev in enumerate(run_scenario(s), 1):
            env = {"type": "runner.event", "run_id": f"seed-{s.name}", "seq": seq}
            buf.write(json.dumps({**env, "event": asdict(ev)}, ensure_ascii=False).encode())
            buf.write(b"\n")
    if AGENTLANE.is_file():
        buf.write(AGENTLANE.read_bytes())
    buf.seek(0)
    key = load_pseudonym_key(store.url)
    Ingestor(store, get_scrubber(key), key, Settings(database_url=store.url)).ingest(
        io.BufferedReader(buf), origin="bench-seed"
    )


def copy_of(e: StoredEvent, run_id: str, seq: int) -> NewEvent:
    return NewEvent(
        run_id=run_id,
        seq=seq,
        type=e.type,
        source=e.source,
        payload=e.payload,
        recorded_at=e.recorded_at,
        redactions=e.redactions,
        plan_id=e.plan_id,
        step_id=e.step_id,
        tool=e.tool,
        collection_id=e.collection_id,
    )


def grow(store: Store, n: int, batch: int) -> int:
    templates = list(store.iter_all())
    total, copy = len(templates), 0
    while total < n:
        copy += 1
        rows = [copy_of(e, f"{e.run_id}-c{copy}", e.seq) for e in templates][: n - total]
        for i in range(0, len(rows), batch):
            store.append(rows[i : i + batch])
        total += len(rows)
    return total


def plain_read(store: Store, batch: int) -> tuple[float, int]:
    start = time.perf_counter()
    count = sum(1 for _ in store.iter_all(batch=batch))
    return time.perf_counter() - start, count


def rebuild(store: Store, batch: int) -> tuple[float, int]:
    engine = ProjectionEngine(store, batch_size=batch)
    start = time.perf_counter()
    result = engine.rebuild()
    return time.perf_counter() - start, result.events


def table_stats(store: Store) -> dict[str, tuple[int, int, int]]:
    store.dispose()  # closed sessions flush their counters
    time.sleep(1.5)
    with store.reading() as conn:
        conn.exec_driver_sql("SELECT pg_stat_clear_snapshot()")
        rows = conn.exec_driver_sql(
            "SELECT relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables"
        ).all()
    return {r[0]: (int(r[1]), int(r[2]), int(r[3])) for r in rows}


def count(store: Store, table: str) -> int:
    with store.reading() as conn:
        return int(conn.exec_driver_sql(f"SELECT count(*) FROM {table}").scalar() or 0)


# -- linear in run length ------------------------------------------------------------------


def long_run(templates: list[StoredEvent], n: int, run_id: str) -> list[NewEvent]:
    """One graph-tool-call run of ``n`` events: plan.started, step pairs, plan.completed."""
    by_type = {e.type: e for e in templates if e.source == "graph_tool_call"}
    start, end = by_type["plan.started"], by_type["plan.completed"]
    pair = (by_type["step.started"], by_type["step.completed"])
    out = [copy_of(start, run_id, 1)]
    i = 0
    while len(out) < n - 1:
        e = pair[len(out) % 2 == 0]
        step = f"s{i // 2}"
        i += 1
        payload: dict[str, Any] = {**e.payload, "step_id": step}
        out.append(copy_of(e, run_id, len(out) + 1))
        out[-1] = NewEvent(**{**asdict(out[-1]), "payload": payload, "step_id": step})
    out.append(copy_of(end, run_id, len(out) + 1))
    return out


def short_runs(templates: list[StoredEvent], n: int, length: int) -> list[NewEvent]:
    """``n`` events in runs of the long run's shape, ``length`` events each."""
    return [e for k in range(n // length) for e in long_run(templates, length, f"short-{k}")]


def follow(store: Store, events: list[NewEvent], piece: int) -> float:
    """Append in pieces, catching the projections up after each (one long-lived projector)."""
    engine = ProjectionEngine(store)
    engine.catch_up()
    spent = 0.0
    for i in range(0, len(events), piece):
        store.append(events[i : i + piece])
        start = time.perf_counter()
        engine.catch_up()
        spent += time.perf_counter() - start
    return spent


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=200_000)
    ap.add_argument("--batch", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--customers", type=int, default=60)
    ap.add_argument("--long", type=int, default=50_000)
    ap.add_argument("--piece", type=int, default=1000)
    ap.add_argument("--only-linear", action="store_true", help="skip the rebuild part")
    args = ap.parse_args()
    print(
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, machine: {platform.machine()} "
        f"cpus={os.cpu_count()} python {platform.python_version()} (shared, loaded)"
    )
    with scratch_database("tl_bench_proj") as url:
        store = open_store(url)
        seed(store, args.customers)
        n = grow(store, args.events if not args.only_linear else 0, args.batch)
        runs = count(store, "(SELECT DISTINCT run_id FROM events) r")
        best = {"read": 1e9, "rebuild": 1e9}
        before = after = {}
        for r in range(0 if args.only_linear else args.rounds):
            t, c = plain_read(store, args.batch)
            assert c == n, (c, n)
            best["read"] = min(best["read"], t)
            if r == args.rounds - 1:
                before = table_stats(store)
            t, c = rebuild(store, args.batch)
            assert c == n, (c, n)
            best["rebuild"] = min(best["rebuild"], t)
        if not args.only_linear:
            after = table_stats(store)
            records = count(store, "learning_records")
            rate = {k: n / v for k, v in best.items()}
            print(f"events: {n} in {runs} runs, batch {args.batch}, best of {args.rounds} rounds")
            print(f"plain read in global order (Reader.iter_all): {rate['read']:>10,.0f} events/s")
            n_proj = len(default_projections())
            print(
                f"projection rebuild ({n_proj} projections)  : {rate['rebuild']:>10,.0f} events/s"
            )
            print(f"ratio rebuild / plain read: {rate['rebuild'] / rate['read']:.2f}x")
            print("rows written by one rebuild (pg_stat_user_tables): table ins upd del")
            for table in sorted(after):
                d = [a - b for a, b in zip(after[table], before.get(table, (0, 0, 0)), strict=True)]
                if any(d) and table != "events":
                    print(f"  {table:28} {d[0]:>9,} {d[1]:>9,} {d[2]:>9,}")
            upd = after["learning_records"][1] - before.get("learning_records", (0, 0, 0))[1]
            print(f"learning records: {records:,}; updates per record: {upd / max(records, 1):.2f}")

        templates = list(store.read_after(0, 20_000))
        long_events = long_run(templates, args.long, "long-run")
        short = short_runs(templates, args.long, args.piece)
        half = len(short) // 2 // args.piece * args.piece
        # short runs before and after the long one: the machine's load drifts
        t_short = follow(store, short[:half], args.piece)
        t_long = follow(store, long_events, args.piece)
        t_short += follow(store, short[half:], args.piece)
        print(
            f"one run of {args.long:,} events in {args.piece:,}-event pieces: "
            f"{t_long / args.long * 1e6:.1f} us/event; the same number of events in short "
            f"runs: {t_short / args.long * 1e6:.1f} us/event; ratio long/short "
            f"{t_long / t_short:.2f}"
        )
        store.dispose()


if __name__ == "__main__":
    main()
