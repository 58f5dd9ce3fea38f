"""The appender's per-batch statements stay index probes when the table has no statistics.

A bulk ingest outruns autovacuum's ANALYZE: on 1M events the partition had none after 430k
rows, and the planner read ``run_id = ANY(<214 ids>)`` as a third of the table. The old
statements became parallel sequential scans, 13 ms -> 207 ms per batch (which runs are
stored) and 0.16 s per link (the chain's digests): server time per event grew with the log.
Here a fresh PostgreSQL database gets 200,000 events with ``autovacuum_enabled = off`` and no
ANALYZE, and every such statement's plan must touch the events partitions by index only.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import sqlalchemy as sa

from tracelake.store import chain
from tracelake.store.appender import EXISTING_KEYS
from tracelake.store.connection import create_engine
from tracelake.store.reader import STORED_RUNS

pytestmark = pytest.mark.postgres

ROWS = 200_000


@pytest.fixture
def loaded(request: pytest.FixtureRequest) -> Any:
    server = request.getfixturevalue("pg_server")
    url = server.url(server.create(template=server.template))
    engine = create_engine(url)
    with engine.begin() as conn:
        partitions = (
            conn.execute(
                sa.text(
                    "SELECT inhrelid::regclass::text FROM pg_inherits"
                    " WHERE inhparent = 'events'::regclass"
                )
            )
            .scalars()
            .all()
        )
        for name in partitions:
            conn.exec_driver_sql(f"ALTER TABLE {name} SET (autovacuum_enabled = off)")
        conn.exec_driver_sql(
            "INSERT INTO events (run_id, seq, type, source, event_id, recorded_at,"
            " content_hash, payload)"
            f" SELECT 'run-' || (g / 10), g %% 10, 'step.completed', 'graph_tool_call',"
            " 'ev-' || g, now(), md5(g::text), jsonb_build_object('n', g)"
            f" FROM generate_series(1, {ROWS}) g"
        )
        never = conn.execute(
            sa.text(
                "SELECT count(*) FROM pg_stat_user_tables WHERE relname LIKE 'events%'"
                " AND (last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL)"
            )
        ).scalar_one()
        assert never == 0  # the point of the test: no statistics
    yield engine
    engine.dispose()


def _plan(conn: sa.Connection, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    text = sa.text("EXPLAIN (FORMAT JSON) " + sql)
    raw = conn.execute(text, params).scalar_one()
    plan = raw if isinstance(raw, list) else json.loads(raw)
    nodes: list[dict[str, Any]] = []

    def walk(node: dict[str, Any]) -> None:
        nodes.append(node)
        for child in node.get("Plans", []):
            walk(child)

    walk(plan[0]["Plan"])
    return nodes


def _full_reads_of_events(nodes: list[dict[str, Any]]) -> list[str]:
    return [
        f"{n['Node Type']} on {n.get('Relation Name')}"
        for n in nodes
        if n["Node Type"] in ("Seq Scan", "Parallel Seq Scan")
        and str(n.get("Relation Name", "")).startswith("events")
        and n.get("Plan Rows", 0) > 1_000  # an empty partition's scan is nothing
    ]


def test_batch_statements_probe_indexes_without_statistics(loaded: Any) -> None:
    runs = [f"run-{i}" for i in range(0, 20_000, 97)] + [f"new-{i}" for i in range(150)]
    keys = [(f"run-{i}", i % 10) for i in range(0, 20_000, 11)]
    with loaded.connect() as conn:
        checks: dict[str, tuple[str, dict[str, Any]]] = {
            "stored runs": (STORED_RUNS.text, {"runs": runs}),
            "chain page": (
                chain._PG_PAGE,
                {"after": ROWS - 2_000, "limit": chain._LINK_PAGE},
            ),
            "verify's rows": (
                chain._PG_ROWS + " LIMIT :limit",
                {"after": ROWS - 2_000, "limit": chain._LINK_PAGE},
            ),
            "existing keys": (
                EXISTING_KEYS.text,
                {"runs": [k[0] for k in keys], "seqs": [k[1] for k in keys]},
            ),
        }
        for name, (sql, params) in checks.items():
            bad = _full_reads_of_events(_plan(conn, sql, params))
            assert not bad, (name, bad)
        # the statement STORED_RUNS replaced did read the whole partition here: the test
        # would see a regression
        old = "SELECT DISTINCT run_id FROM events WHERE run_id = ANY(CAST(:runs AS text[]))"
        assert _full_reads_of_events(_plan(conn, old, {"runs": runs}))
        assert {r[0] for r in conn.execute(STORED_RUNS, {"runs": runs})} == {
            r for r in runs if r.startswith("run-")
        }
