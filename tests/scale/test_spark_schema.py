"""The Parquet lake is readable by Spark (and so by Trino and DuckDB over the Hive layout).

What Spark's Parquet reader refuses or misreads, checked file by file with pyarrow on a real
export (both backends): unsigned integers, nanosecond or INT96 timestamps, Parquet's NULL
(unknown) type, field names Spark's Parquet source rejects (`` ,;{}()\\n\\t=``), partition
columns repeated inside the files (Spark then sees a duplicate column), and files of one table
whose schemas disagree (Spark reads one file's footer unless mergeSchema is on).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipelines import promote as job
from pipelines.lake import TABLES, export
from pipelines.promotion_policy import Policy
from tests.promotion.test_promotion import add_runs
from tracelake.store import Store

SPARK_BAD_NAME = set(" ,;{}()\n\t=")
PARTITIONS = {"collection", "date"}


def spark_problems(field: pa.Field, where: str) -> list[str]:
    t, name = field.type, f"{where}.{field.name}"
    problems = []
    if SPARK_BAD_NAME & set(field.name):
        problems.append(f"{name}: name has a character Spark's Parquet source rejects")
    if pa.types.is_null(t):
        problems.append(f"{name}: null type (Parquet UNKNOWN; Spark cannot read it)")
    elif pa.types.is_unsigned_integer(t):
        problems.append(f"{name}: unsigned {t} (Spark has no unsigned types)")
    elif pa.types.is_timestamp(t) and t.unit == "ns":
        problems.append(f"{name}: nanosecond timestamp (Spark reads micro/milliseconds)")
    elif pa.types.is_time(t) or pa.types.is_duration(t) or pa.types.is_interval(t):
        problems.append(f"{name}: {t} has no Spark type")
    elif pa.types.is_struct(t):
        for child in t:
            problems += spark_problems(child, name)
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        problems += spark_problems(t.value_field, name)
    elif pa.types.is_map(t):
        problems += spark_problems(t.key_field, name) + spark_problems(t.item_field, name)
    return problems


def test_every_lake_file_has_a_spark_readable_schema_and_one_schema_per_table(
    store: Store, tmp_path: Path
) -> None:
    lake = tmp_path / "lake"
    add_runs(store, "orders-api", ["order_detail", "auth_403", "shipment"], "a")
    add_runs(store, "claims-api", ["coerced"], "a")
    job.run(store, Policy())
    export(store, lake)
    add_runs(store, "orders-api", ["order_detail"], "b")  # a second, incremental export
    export(store, lake)

    problems: list[str] = []
    tables_seen = 0
    for table in TABLES:
        files = sorted((lake / table).rglob("*.parquet"))
        if not files:
            continue
        tables_seen += 1
        schemas = {}
        for f in files:
            schema = pq.read_schema(f)
            schemas[f] = schema.remove_metadata()
            where = f"{table}/{f.relative_to(lake / table)}"
            for field in schema:
                problems += spark_problems(field, where)
            if PARTITIONS & set(schema.names):
                problems.append(f"{where}: partition column inside the file")
            for part in f.relative_to(lake / table).parts[:-1]:  # Hive: name=value folders
                if part.split("=", 1)[0] not in PARTITIONS:
                    problems.append(f"{where}: folder {part!r} is not a Hive partition")
            meta = pq.ParquetFile(f).metadata
            for i in range(meta.num_columns):
                col = meta.schema.column(i)
                if col.physical_type == "INT96":
                    problems.append(f"{where}.{col.name}: INT96 timestamp")
        first = next(iter(schemas.values()))
        problems += [
            f"{table}: {f.name} has schema {s} but {files[0].name} has {first}"
            for f, s in schemas.items()
            if not s.equals(first)
        ]
    assert tables_seen >= 5
    assert problems == []


def test_the_checker_finds_what_spark_refuses() -> None:
    bad = pa.schema(
        [
            pa.field("u", pa.uint64()),
            pa.field("ts", pa.timestamp("ns")),
            pa.field("n", pa.null()),
            pa.field("a b", pa.int32()),
            pa.field("s", pa.struct([pa.field("inner", pa.uint8())])),
        ]
    )
    found = [p for field in bad for p in spark_problems(field, "t")]
    assert len(found) == 5, found
