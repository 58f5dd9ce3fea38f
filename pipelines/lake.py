"""``tracelake export parquet DIR``: the scrubbed events and the derived tables as a Parquet
lake, Hive-partitioned by ``collection`` and ``date``, written incrementally.

Layout: ``DIR/<table>/collection=<id>/date=<YYYY-MM-DD>/part-<from>-<to>.parquet`` (``_none``
for rows without a collection). ``DIR/_watermarks.json`` keeps, per table, the last global
position exported; a second export reads only what is above it, so it adds only new files.
Readable by polars (``scan_parquet(..., hive_partitioning=True)``), DuckDB
(``read_parquet('DIR/events/**/*.parquet', hive_partitioning=true)``) and Spark.

Watermarks are gap-safe: for ``events`` the bound is the log's highest position when the export
starts (appends are serialised, nothing can appear below it later); for a derived table it is
the lowest projection checkpoint, so no row below the bound can still be projected later.
Derived rows are keyed by the position of the event they come from. Learning records are
facts (frozen at the run's finish, keyed by that event): each is exported once. ``runs`` and
``suggestions`` rows change as events arrive: a row that moved on is exported again with its
``last_position``, and so is every per-event row of a run that moved on (a binding repair's
``run_completed`` is set when its run ends), tagged ``run_position``: readers keep, per key,
the row with the highest ``last_position`` / ``run_position``. Promotion status is read from
``suggestions`` (the decisions' one source of truth), never from a learning record.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from tracelake.projections import ProjectionEngine
from tracelake.store import Store

from . import io

TABLES = (
    "events",
    "runs",
    "learning_records",
    "failure_taxonomy",
    "tool_calls",
    "binding_repair_evidence",
    "coercion_evidence",
    "data_flow_evidence",
    "suggestion_decisions",
    "suggestions",
)
NONE = "_none"


def partitioned(frame: pl.DataFrame, time_column: str) -> pl.DataFrame:
    """Add the Hive partition columns: ``collection`` and ``date`` (UTC)."""
    return frame.with_columns(
        collection=pl.col("collection_id").fill_null(NONE).replace("", NONE),
        date=pl.col(time_column).dt.convert_time_zone("UTC").dt.strftime("%Y-%m-%d"),
    )


@dataclass
class LakeReport:
    rows: dict[str, int] = field(default_factory=dict)
    files: int = 0
    watermarks: dict[str, int] = field(default_factory=dict)


def export(
    store: Store, root: Path, on_table: Callable[[str, int], None] | None = None
) -> LakeReport:
    """Export what is new; ``on_table(name, rows)`` is called as each table is done."""
    engine = ProjectionEngine(store)
    engine.catch_up()
    marks = io.read_watermarks(root)
    log_top = store.max_position()
    projected = min(engine.checkpoints().values(), default=0)
    report = LakeReport()
    for table in TABLES:
        upper = log_top if table in ("events", "suggestion_decisions") else projected
        lower = marks.get(table, 0)
        if upper <= lower:
            report.rows[table], report.watermarks[table] = 0, lower
            if on_table is not None:
                on_table(table, 0)
            continue
        count = 0
        for chunk, time_column in io.read_table_range(store, table, lower, upper):
            count += chunk.height
            report.files += io.write_partitions(
                partitioned(chunk, time_column), root / table, f"{lower:012d}-{upper:012d}"
            )
        report.rows[table] = count
        marks[table] = upper
        report.watermarks[table] = upper
        io.write_watermarks(root, marks)  # after the table's files: a crash re-exports it
        if on_table is not None:
            on_table(table, count)
    return report
