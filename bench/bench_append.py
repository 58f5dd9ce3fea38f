"""Append throughput on PostgreSQL: tracelake's appender against raw psycopg COPY.

Both sides get the same in-memory rows (realistic, already scrubbed graph-tool-call event
payloads) and encode the JSON themselves. The baseline COPYs into ``copy_baseline``, a table
with the same columns, constraints and indexes as ``events`` (no triggers, no lock, no
duplicate check). tracelake does everything it does in production: the append lock, the
duplicate/conflict lookup, content hashes, COPY. Printed: events/s of each and the ratio.

    python bench/bench_append.py [--events 200000] [--batch 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sqlalchemy as sa

from bench._pg import scratch_database
from tracelake.demo import run_scenario, scenarios
from tracelake.store import NewEvent, open_store
from tracelake.store.appender import COLUMNS


def corpus(n: int) -> list[NewEvent]:
    templates = [asdict(e) for s in scenarios() for e in run_scenario(s)]
    now = datetime.now(UTC)
    rows: list[NewEvent] = []
    run = 0
    while len(rows) < n:
        run += 1
        for seq, payload in enumerate(templates[:40], 1):
            rows.append(
                NewEvent(
                    run_id=f"run-{run:08d}",
                    seq=seq,
                    type=payload["type"],
                    source="graph_tool_call",
                    payload=payload,
                    recorded_at=now,
                    plan_id=payload.get("plan_id"),
                    step_id=payload.get("step_id") or None,
                    tool=payload.get("tool") or None,
                    collection_id="orders-api",
                )
            )
    return rows[:n]


def raw_copy(url: str, rows: list[NewEvent], batch: int, one_transaction: bool) -> float:
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    raw = engine.raw_connection().driver_connection
    cols = ", ".join(c for c in COLUMNS)
    with raw.cursor() as cur:
        cur.execute("TRUNCATE copy_baseline")
    raw.commit()
    start = time.perf_counter()
    for i in range(0, len(rows), batch):
        with raw.cursor() as cur, cur.copy(f"COPY copy_baseline ({cols}) FROM STDIN") as copy:
            for e in rows[i : i + batch]:
                payload = json.dumps(e.payload, ensure_ascii=False, separators=(",", ":"))
                copy.write_row(
                    (
                        e.run_id,
                        e.seq,
                        e.type,
                        e.source,
                        e.event_id,
                        e.plan_id,
                        e.step_id,
                        e.tool,
                        e.collection_id,
                        e.recorded_at,
                        "-",
                        payload,
                        None,
                    )
                )
        if not one_transaction:
            raw.commit()
    raw.commit()
    elapsed = time.perf_counter() - start
    raw.close()
    engine.dispose()
    return elapsed


def tracelake_append(url: str, rows: list[NewEvent], batch: int, round_no: int) -> float:
    store = open_store(url)
    rows = [
        NewEvent(**{**{f: getattr(e, f) for f in e.__slots__}, "run_id": f"{e.run_id}-{round_no}"})  # type: ignore[attr-defined]
        for e in rows
    ]
    start = time.perf_counter()
    for i in range(0, len(rows), batch):
        result = store.append(rows[i : i + batch])
        assert result.appended == len(rows[i : i + batch])
    elapsed = time.perf_counter() - start
    store.dispose()
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=200_000)
    ap.add_argument("--batch", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    rows = corpus(args.events)
    with scratch_database("tl_bench_append") as url:
        engine = sa.create_engine(url)
        with engine.begin() as conn:  # same columns, constraints and indexes; its own sequence
            conn.exec_driver_sql(
                "CREATE TABLE copy_baseline (LIKE events INCLUDING CONSTRAINTS INCLUDING INDEXES);"
                "CREATE SEQUENCE copy_baseline_seq;"
                "ALTER TABLE copy_baseline ALTER position SET DEFAULT nextval('copy_baseline_seq')"
            )
        engine.dispose()
        best = {"copy_batched": 1e9, "copy_one_tx": 1e9, "tracelake": 1e9}
        for r in range(args.rounds):
            best["copy_batched"] = min(best["copy_batched"], raw_copy(url, rows, args.batch, False))
            best["copy_one_tx"] = min(best["copy_one_tx"], raw_copy(url, rows, args.batch, True))
            best["tracelake"] = min(best["tracelake"], tracelake_append(url, rows, args.batch, r))
    n = len(rows)
    rate = {k: n / v for k, v in best.items()}
    print(
        f"machine: {platform.machine()} {platform.processor() or ''} python {platform.python_version()}"
    )
    print(f"events: {n}, batch: {args.batch}, best of {args.rounds} rounds")
    print(f"raw COPY, one transaction per batch : {rate['copy_batched']:>10,.0f} events/s")
    print(f"raw COPY, all rows in one transaction: {rate['copy_one_tx']:>10,.0f} events/s")
    print(f"tracelake append (lock+dedupe+COPY)  : {rate['tracelake']:>10,.0f} events/s")
    print(f"ratio tracelake / raw COPY per batch : {rate['tracelake'] / rate['copy_batched']:.2f}x")
    print(f"ratio tracelake / raw COPY one tx    : {rate['tracelake'] / rate['copy_one_tx']:.2f}x")


if __name__ == "__main__":
    main()
