"""A corpus of real runner events for projection tests: the demo scenarios through the real
PlanRunner (as SSE envelopes with run id and seq) and the agentlane samples."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import sqlalchemy as sa

from tests.ingest.helpers import agentlane_bytes, ingest_bytes
from tracelake.demo import run_scenario, scenarios
from tracelake.projections import default_projections
from tracelake.store import Store

# every table of every registered projection: a new projection cannot be left out
TABLES = tuple(t for p in default_projections() for t in p.tables)


def demo_lines(prefix: str = "run") -> list[bytes]:
    """One envelope line per event; run id ``<prefix>-<scenario>``."""
    lines: list[bytes] = []
    for s in scenarios():
        for seq, event in enumerate(run_scenario(s, plan_id=f"plan-{s.name}"), 1):
            envelope = {
                "type": "runner.event",
                "run_id": f"{prefix}-{s.name}",
                "seq": seq,
                "event": asdict(event),
            }
            lines.append(json.dumps(envelope, ensure_ascii=False).encode() + b"\n")
    return lines


def load_corpus(store: Store, agentlane: bool = True) -> None:
    ingest_bytes(store, b"".join(demo_lines()), origin="demo.jsonl")
    if agentlane:
        ingest_bytes(store, agentlane_bytes(), origin="agentlane.jsonl")


def snapshot(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Every projection table, rows in primary-key order, JSON compared as parsed values."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    with store.reading() as conn:
        for table in TABLES:
            order = list(table.primary_key.columns)
            rows = conn.execute(sa.select(table).order_by(*order)).all()
            out[table.name] = [tuple(r) for r in rows]
    return out
