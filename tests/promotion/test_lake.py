"""The Parquet lake: Hive-partitioned, incremental, readable by polars and DuckDB."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import sqlalchemy as sa

from pipelines import promote as job
from pipelines.lake import export
from pipelines.policy import Policy
from tests.promotion.test_promotion import add_runs
from tracelake.store import Store
from tracelake.store.schema import events, learning_records


def _count(store: Store, table: sa.Table) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(table)).scalar() or 0)


def _files(root: Path) -> set[Path]:
    return set(root.rglob("*.parquet"))


def test_incremental_hive_partitioned_export(store: Store, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    add_runs(store, "orders-api", ["order_detail", "auth_403"], "a")
    add_runs(store, "claims-api", ["coerced"], "a")
    job.run(store, Policy())
    first = export(store, lake)
    assert first.rows["events"] == _count(store, events)
    assert first.rows["learning_records"] == 3
    assert first.rows["suggestion_decisions"] > 0
    files = _files(lake)
    assert any("collection=claims-api" in str(f) for f in files)
    assert all("date=" in str(f) for f in files)

    again = export(store, lake)  # nothing new: nothing written
    assert sum(again.rows.values()) == 0 and _files(lake) == files

    add_runs(store, "orders-api", ["shipment"], "b")
    third = export(store, lake)
    assert third.rows["learning_records"] == 1 and third.rows["events"] > 0
    assert files < _files(lake)

    scanned = pl.scan_parquet(lake / "events" / "**" / "*.parquet", hive_partitioning=True)
    frame = scanned.collect()
    assert frame.height == _count(store, events)
    assert frame["position"].n_unique() == frame.height  # no event twice
    assert set(frame["collection"]) == {"orders-api", "claims-api"}  # decisions too

    glob = str(lake / "learning_records" / "**" / "*.parquet")
    rows = duckdb.sql(
        f"SELECT collection, count(*) AS n FROM read_parquet('{glob}', hive_partitioning=true) "
        "GROUP BY collection ORDER BY collection"
    ).fetchall()
    assert rows == [("claims-api", 1), ("orders-api", 3)]
    assert sum(n for _, n in rows) == _count(store, learning_records)


def test_rows_of_a_run_that_moved_on_are_exported_again(store: Store, tmp_path: Path) -> None:
    """A binding repair exported before its run ended is re-exported with run_completed set."""
    from tests.ingest.helpers import gtc_runs, ingest_bytes, jsonl

    run = next(r for r in gtc_runs() if any(e["type"] == "binding.repaired" for e in r))
    env = [{"type": "runner.event", "run_id": "run-lake", "event": e} for e in run]
    cut = next(i for i, e in enumerate(run) if e["type"] == "binding.repaired") + 1
    ingest_bytes(store, jsonl(env[:cut]))
    export(store, tmp_path)
    ingest_bytes(store, jsonl(env[cut:]))
    export(store, tmp_path)
    rows = pl.read_parquet(
        str(tmp_path / "binding_repair_evidence" / "**" / "*.parquet"), hive_partitioning=True
    )
    newest = rows.sort("run_position").group_by("position").last()
    assert rows.height == 2 and newest["run_completed"].to_list() in ([True], [1])


def test_columns_null_in_their_first_rows_do_not_break_the_export(
    store: Store, tmp_path: Path
) -> None:
    """agentlane events (no event_id, no plan ids) first, then graph-tool-call ones."""
    from tests.ingest.helpers import agentlane_bytes, gtc_runs, ingest_bytes, jsonl

    ingest_bytes(store, agentlane_bytes())
    ingest_bytes(store, jsonl([e for run in gtc_runs() for e in run]))
    report = export(store, tmp_path)
    assert report.rows["events"] > 900
    frame = pl.scan_parquet(str(tmp_path / "events" / "**" / "*.parquet"), hive_partitioning=True)
    assert frame.select(pl.len()).collect().item() == report.rows["events"]


def test_collection_ids_cannot_leave_the_lake(store: Store, tmp_path: Path) -> None:
    from dataclasses import asdict

    from tests.ingest.helpers import ingest_bytes, jsonl
    from tracelake.demo import run_scenario, scenarios

    lines = [
        {"type": "runner.event", "run_id": f"c{i}", "event": asdict(e)}
        for i, c in enumerate(["../../escaped", "team/orders", "a=b%c"])
        for e in run_scenario(scenarios()[1], trace_metadata={"collection_id": c})
    ]
    ingest_bytes(store, jsonl(lines))
    lake = tmp_path / "lake"
    export(store, lake)
    assert not (tmp_path / "escaped").exists()
    files = list(tmp_path.rglob("*.parquet"))
    assert files and all(lake in f.parents for f in files)
    read = duckdb.sql(
        f"SELECT DISTINCT collection_id, collection FROM "
        f"read_parquet('{lake}/events/**/*.parquet', hive_partitioning=true) ORDER BY 1"
    ).fetchall()
    assert read == [
        ("../../escaped", "../../escaped"),
        ("a=b%c", "a=b%c"),
        ("team/orders", "team/orders"),
    ]


def test_a_new_run_refreshes_its_groups_promotion_status_in_the_lake(
    store: Store, tmp_path: Path
) -> None:
    add_runs(store, "orders-api", ["order_detail", "order_detail"], "a")
    export(store, tmp_path)
    add_runs(store, "orders-api", ["rate_limited_429"] * 3, "b")  # same goal, failing
    export(store, tmp_path)
    lake = (
        pl.scan_parquet(
            str(tmp_path / "learning_records" / "**" / "*.parquet"), hive_partitioning=True
        )
        .sort("run_position")
        .group_by("run_id")
        .last()
        .collect()
    )
    with store.engine.connect() as conn:
        db = dict(
            conn.execute(
                sa.select(learning_records.c.run_id, learning_records.c.promotion_status)
            ).all()
        )
    assert dict(zip(lake["run_id"], lake["promotion_status"], strict=True)) == db
