"""The only I/O of the batch jobs: the store (through SQL) and Parquet files, as polars frames.

Reads stream in chunks (``pl.read_database(..., iter_batches=True)`` on a SQLAlchemy
connection; ``LazyFrame.collect_batches`` for Parquet), so a job never holds a whole table;
the transforms in ``pipelines.derive`` and ``pipelines.promotion_policy`` never touch a database or
a file. JSON columns are read as text (``CAST(... AS TEXT)``) and decoded by the transforms.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import polars as pl
import sqlalchemy as sa

from tracelake.run_identity import TRACELAKE_SOURCE
from tracelake.store import Store, schema
from tracelake.store.schema import learning_records, suggestions

from .suggestion_kinds import evidence_source

CHUNK = 100_000
lr = learning_records

RECORD_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "collection_id": pl.String(),
    "query_family": pl.String(),
    "query_fingerprint": pl.String(),
    "selected_target": pl.String(),
    "plan_tools": pl.String(),  # JSON text; decoded by suggestions.normalize_records
    "success": pl.Boolean(),
    "finished_at": pl.Datetime("us", "UTC"),
}
_SCOPE = (lr.c.query_family, lr.c.query_fingerprint, lr.c.success, lr.c.finished_at)


def _text(column: sa.ColumnElement[object]) -> sa.ColumnElement[str]:
    return sa.cast(column, sa.Text)


def _where(
    query: sa.Select[tuple[object, ...]], collection: str | None
) -> sa.Select[tuple[object, ...]]:
    if collection is None:
        return query
    return query.where(sa.func.coalesce(lr.c.collection_id, "") == collection)


def _chunks(
    store: Store, query: sa.Select[tuple[object, ...]], schema: dict[str, pl.DataType], size: int
) -> Iterator[pl.DataFrame]:
    with store.reading("read for the promotion job") as conn:
        frames = pl.read_database(
            query,
            conn.execution_options(stream_results=True),
            iter_batches=True,
            batch_size=size,
            schema_overrides=schema,
            infer_schema_length=None,  # a column NULL in its first rows must not be typed Null
        )
        for frame in frames:
            yield _utc(frame, schema)


def _utc(frame: pl.DataFrame, schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """SQLite hands back naive datetimes (stored as UTC): mark them UTC like PostgreSQL's."""
    fixes = [
        pl.col(name).dt.replace_time_zone("UTC")
        if frame.schema[name] == pl.Datetime("us")
        else pl.col(name).dt.convert_time_zone("UTC")
        for name, dtype in schema.items()
        if isinstance(dtype, pl.Datetime) and isinstance(frame.schema.get(name), pl.Datetime)
    ]
    return frame.with_columns(fixes) if fixes else frame


def read_learning_records(
    store: Store, collection: str | None = None, size: int = CHUNK
) -> Iterator[pl.DataFrame]:
    """Learning records in chunks of ``size`` rows (the job folds them chunk by chunk)."""
    query = sa.select(
        lr.c.run_id,
        lr.c.collection_id,
        *_SCOPE[:2],
        lr.c.selected_target,
        _text(lr.c.plan_tools).label("plan_tools"),
        *_SCOPE[2:],
    ).order_by(lr.c.run_id)
    return _chunks(store, _where(query, collection), RECORD_SCHEMA, size)


def scan_learning_parquet(path: str | Path, size: int = CHUNK) -> Iterator[pl.DataFrame]:
    """Learning records from Parquet (same columns; ``plan_tools`` text or list) in chunks."""
    yield from pl.scan_parquet(path).collect_batches(chunk_size=size)


def read_evidence(
    store: Store, kind: str, collection: str | None = None, size: int = CHUNK
) -> Iterator[pl.DataFrame]:
    """Evidence rows joined (in SQL) to their run's learning record: the run's family,
    fingerprint, success and finish time come with each row."""
    source = evidence_source(kind)
    ev, cols, cond = source.table, source.columns(source.table), source.keep(source.table)
    query = (
        sa.select(ev.c.run_id, lr.c.collection_id, *_SCOPE, *cols)
        .join_from(ev, lr, ev.c.run_id == lr.c.run_id)
        .where(cond)
        .order_by(ev.c.run_id)
    )
    schema = {
        "run_id": pl.String(),
        "collection_id": pl.String(),
        "query_family": pl.String(),
        "query_fingerprint": pl.String(),
        "success": pl.Boolean(),
        "finished_at": pl.Datetime("us", "UTC"),
        **{str(c.key): pl.String() for c in cols},
    }
    return _chunks(store, _where(query, collection), schema, size)


def read_current_suggestions(store: Store, collection: str | None = None) -> pl.DataFrame:
    """The suggestions projection: id, status, version and the document as JSON text."""
    s = suggestions
    query = sa.select(s.c.id, s.c.status, s.c.version, _text(s.c.document).label("document"))
    if collection is not None:
        query = query.where(s.c.collection_id == collection)
    schema: dict[str, pl.DataType] = {
        "id": pl.String(),
        "status": pl.String(),
        "version": pl.Int64(),
        "document": pl.String(),
    }
    frames = list(_chunks(store, query, schema, CHUNK))
    return pl.concat(frames) if frames else pl.DataFrame(schema=schema)


# --- the Parquet lake ---------------------------------------------------------------------

WATERMARKS = "_watermarks.json"


def read_watermarks(root: Path) -> dict[str, int]:
    path = root / WATERMARKS
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {str(k): int(v) for k, v in data.items()}


def write_watermarks(root: Path, marks: dict[str, int]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / (WATERMARKS + ".tmp")
    tmp.write_text(json.dumps(marks, indent=2, sort_keys=True), encoding="utf-8")
    os.replace(tmp, root / WATERMARKS)


def read_table_range(
    store: Store, table: str, lower: int, upper: int, size: int = CHUNK
) -> Iterator[tuple[pl.DataFrame, str]]:
    """Rows of a table (or the log) with position in ``(lower, upper]``, JSON as text."""
    query, time_column = _range_query(table, lower, upper)
    types = {c.name: _polars_type(c.type) for c in query.selected_columns}
    # Text and numbers get their table type up front (no guessing from the first rows);
    # booleans and datetimes are cast after the read (SQLite hands back 0/1 and naive times).
    overrides = {n: t for n, t in types.items() if t in (pl.String(), pl.Int64(), pl.Float64())}
    for frame in _chunks(store, query.order_by(query.selected_columns.position), overrides, size):
        if frame.height:
            yield _utc_all(_typed(frame, types)), time_column


def _typed(frame: pl.DataFrame, types: dict[str, pl.DataType]) -> pl.DataFrame:
    """A column that is all NULL in one chunk would be written as type Null and clash with the
    next file's String/Int64: give it its table type. SQLite returns booleans as 0/1: cast
    them too, so both backends write one schema."""
    casts = [
        pl.col(n).cast(types[n])
        for n, t in frame.schema.items()
        if t == pl.Null or (types[n] == pl.Boolean() and t != pl.Boolean())
    ]
    return frame.with_columns(casts) if casts else frame


def _range_query(table: str, lower: int, upper: int) -> tuple[sa.Select[Any], str]:
    """The query for one table's rows in ``(lower, upper]`` and the column that dates them."""
    if table in ("events", "suggestion_decisions"):
        source = schema.events
        where = source.c.position > lower, source.c.position <= upper
        is_decision = source.c.source == TRACELAKE_SOURCE
        query = sa.select(*_as_text(source)).where(
            *where, is_decision if table == "suggestion_decisions" else sa.true()
        )
        return query, "recorded_at"
    if table == "learning_records":
        # A learning record is a fact written once at its run's finish (``position``, the
        # finishing event): each is exported exactly once. Its promotion status is not in it:
        # join the lake's ``suggestions`` (newest ``last_position`` per id).
        source = schema.learning_records
        query = sa.select(*_as_text(source)).where(
            source.c.position > lower, source.c.position <= upper
        )
        return query, "finished_at"
    if table in ("runs", "suggestions"):
        # One row per run / suggestion that changes as events arrive: every row that moved on
        # since the last export is exported again with ``last_position``; readers keep, per
        # run_id / id, the row with the highest ``last_position`` (a run stays in the partition
        # of its start; a suggestion moves to the date of its latest change).
        source = schema.metadata.tables[table]
        query = sa.select(*_as_text(source), source.c.last_position.label("position")).where(
            source.c.last_position > lower, source.c.last_position <= upper
        )
        return query, "started_at" if table == "runs" else "updated_at"
    return _per_run_query(table, lower, upper), "recorded_at"


def _per_run_query(table: str, lower: int, upper: int) -> sa.Select[Any]:
    """Per-run derived rows change while their run goes on (``run_completed`` of a binding
    repair, say): every row of a run that moved on since the last export is exported again,
    tagged with the run's last position; readers keep the newest per key."""
    source, runs = schema.metadata.tables[table], schema.runs
    query = (
        sa.select(*_as_text(source), runs.c.last_position.label("run_position"))
        .join_from(source, runs, source.c.run_id == runs.c.run_id)
        .where(runs.c.last_position > lower, runs.c.last_position <= upper)
    )
    if "recorded_at" not in source.c:  # tool_calls: the time of the event it comes from
        ev = schema.events
        query = query.add_columns(ev.c.recorded_at).join_from(
            source, ev, source.c.position == ev.c.position
        )
    return query


def _polars_type(sql_type: Any) -> pl.DataType:
    if isinstance(sql_type, sa.Boolean):
        return pl.Boolean()
    if isinstance(sql_type, sa.Integer):
        return pl.Int64()
    if isinstance(sql_type, sa.Float):
        return pl.Float64()
    if isinstance(sql_type, sa.DateTime):
        return pl.Datetime("us", "UTC")
    return pl.String()


def _as_text(table: sa.Table) -> list[sa.ColumnElement[Any]]:
    return [
        sa.cast(c, sa.Text).label(c.name) if isinstance(c.type, schema.JSONDocument) else c
        for c in table.columns
    ]


def _utc_all(frame: pl.DataFrame) -> pl.DataFrame:
    fixes = [
        pl.col(n).dt.replace_time_zone("UTC")
        if t == pl.Datetime("us") or t == pl.Datetime("ns")
        else pl.col(n).dt.convert_time_zone("UTC")
        for n, t in frame.schema.items()
        if isinstance(t, pl.Datetime)
    ]
    return frame.with_columns(fixes) if fixes else frame


_NOT_NAME = re.compile(r"[^\w.-]+")
MAX_ENCODED = 128  # bytes of a percent-encoded partition value kept as it is


def partition_dir(value: str) -> str:
    """A directory name for a partition value: percent-encoded as Hive does (readers decode it
    back to the exact value) when that is at most MAX_ENCODED bytes; otherwise a readable
    prefix and a hash of the exact value (``주문조회_고객센터~1f0c...``), so no value can exceed
    the file system's 255-byte name limit. Readers always find the exact value in the
    ``collection_id`` column."""
    encoded = quote(value, safe="")
    if value and len(encoded) <= MAX_ENCODED:
        return encoded
    prefix = _NOT_NAME.sub("_", unicodedata.normalize("NFKC", value)).strip("._")[:32]
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{prefix}~{digest}" if prefix else f"~{digest}"


def write_partitions(frame: pl.DataFrame, root: Path, part: str) -> int:
    """One file per (collection, date) partition; the partition values live in the path."""
    written = 0
    base = root.resolve()
    for (collection, date), group in frame.group_by(["collection", "date"], maintain_order=True):
        # Partition values come from event data: percent-encoded (or, when long, hashed), so
        # a collection id can neither leave the lake ("../..") nor add a level
        # ("team/orders") nor exceed the file system's name limit.
        folder = root / f"collection={partition_dir(str(collection))}" / f"date={date}"
        if not folder.resolve().is_relative_to(base):
            raise ValueError(f"partition path escapes the lake: {folder}")
        folder.mkdir(parents=True, exist_ok=True)
        group.drop("collection", "date").write_parquet(folder / f"part-{part}.parquet")
        written += 1
    return written
