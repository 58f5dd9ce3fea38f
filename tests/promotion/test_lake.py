"""The Parquet lake: Hive-partitioned, incremental, readable by polars and DuckDB."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import sqlalchemy as sa

from pipelines import promote as job
from pipelines.lake import export
from pipelines.promotion_policy import Policy
from tests.promotion.test_promotion import add_runs
from tracelake.store import Store
from tracelake.store.schema import events, learning_records


def _count(store: Store, table: sa.Table) -> int:
    with store.reading() as conn:
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
    rows = _duckdb(
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
    repaired = next(i for i, e in enumerate(run) if e["type"] == "binding.repaired")
    # the evidence row exists once the repaired step has started (it names the tool)
    cut = next(i for i, e in enumerate(run) if i > repaired and e["type"] == "step.started") + 1
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
    read = _duckdb(
        f"SELECT DISTINCT collection_id, collection FROM "
        f"read_parquet('{lake}/events/**/*.parquet', hive_partitioning=true) ORDER BY 1"
    ).fetchall()
    assert read == [
        ("../../escaped", "../../escaped"),
        ("a=b%c", "a=b%c"),
        ("team/orders", "team/orders"),
    ]


def _newest(root: Path, table: str, key: str) -> pl.DataFrame:
    return (
        pl.scan_parquet(str(root / table / "**" / "*.parquet"), hive_partitioning=True)
        .sort("last_position")
        .group_by(key)
        .last()
        .collect()
    )


def test_runs_and_suggestions_in_the_lake_follow_the_log(store: Store, tmp_path: Path) -> None:
    """Learning records are exported once each; the status a run's group has is read from the
    lake's suggestions (newest per id), and equals the database's after every export."""
    from tracelake.store.schema import runs, suggestions

    add_runs(store, "orders-api", ["order_detail", "order_detail"], "a")
    job.run(store, Policy())
    export(store, tmp_path)
    add_runs(store, "orders-api", ["rate_limited_429"] * 3, "b")  # same goal, failing
    job.run(store, Policy())
    export(store, tmp_path)
    records = pl.read_parquet(
        str(tmp_path / "learning_records" / "**" / "*.parquet"), hive_partitioning=True
    )
    assert records.height == records["run_id"].n_unique() == _count(store, learning_records) == 5
    with store.reading() as conn:
        db_status = dict(
            conn.execute(sa.select(suggestions.c.id, suggestions.c.status)).tuples().all()
        )
        db_runs = dict(conn.execute(sa.select(runs.c.run_id, runs.c.status)).tuples().all())
    lake = _newest(tmp_path, "suggestions", "id")
    assert dict(zip(lake["id"], lake["status"], strict=True)) == db_status
    assert db_status and lake.height == len(db_status)
    lake_runs = _newest(tmp_path, "runs", "run_id")
    assert dict(zip(lake_runs["run_id"], lake_runs["status"], strict=True)) == db_runs
    assert len(db_runs) == 5  # runner runs only: the decisions' runs are not runs


def _duckdb(query: str) -> duckdb.DuckDBPyRelation:
    """duckdb.sql for a query that returns rows (its stubs allow None for statements)."""
    relation = duckdb.sql(query)
    assert relation is not None
    return relation
