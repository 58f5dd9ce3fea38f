"""Pure LazyFrame transforms: learning records and evidence -> suggestions (no I/O here).

Vocabulary and shapes are graph-tool-call's (``graph_tool_call.learning``): a suggestion is
scoped to one collection and one query family (fingerprint), its id is
``<type>:<stable_hash(collection|fingerprint|type|key)>`` exactly as ``_suggestion_id`` builds
it, and ``observations`` counts the successful runs that support it.

Every aggregate here is *mergeable*: :func:`reduce_counts` applied to a chunk's rows gives a
partial, and applied again to concatenated partials gives the total. The job
(``pipelines.promote``) folds chunks of records through these transforms, so memory is bounded
by the number of suggestions (and the window), not by the number of records.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import polars as pl

SCOPE = ("collection_id", "query_fingerprint")
# What every suggestion frame carries (the type-specific detail columns follow).
COMMON = (
    "type",
    "collection_id",
    "query_fingerprint",
    "query_family",
    "key",
    "target",
    "observations",
    "created_at",
    "last_seen_at",
)


def stable_hash(value: str) -> str:
    """graph_tool_call.learning.stable_hash."""
    return hashlib.sha256(str(value or "").encode("utf-8")).hexdigest()[:16]


def normalize_records(records: pl.LazyFrame) -> pl.LazyFrame:
    """Learning records as the transforms expect them: '' for no collection, tools as a list."""
    tools = pl.col("plan_tools")
    if records.collect_schema().get("plan_tools") == pl.String:
        tools = tools.str.json_decode(pl.List(pl.String))
    return records.with_columns(
        pl.col("collection_id").fill_null(""),
        pl.col("query_fingerprint").fill_null(""),
        pl.col("query_family").fill_null(""),
        tools.alias("plan_tools"),
    )


def reduce_counts(
    frame: pl.LazyFrame, keys: list[str], least: list[str], same: tuple[str, ...] = ()
) -> pl.LazyFrame:
    """Sum ``observations``/``failures``, min ``created_at``, max ``last_seen_at`` per key;
    the least value of each ``least`` column (deterministic whatever the chunking) and any
    value of each ``same`` column (equal within a key by construction).

    Mergeable: the same reduction turns rows into partials and partials into totals."""
    return frame.group_by(keys).agg(
        pl.col("observations").sum(),
        pl.col("failures").sum(),
        pl.col("created_at").min(),
        pl.col("last_seen_at").max(),
        *(pl.col(c).min() for c in least),
        *(pl.col(c).first() for c in same),
    )


def _as_counts(frame: pl.LazyFrame, success: pl.Expr) -> pl.LazyFrame:
    return frame.with_columns(
        observations=success.cast(pl.Int64),
        failures=(~success).cast(pl.Int64),
        created_at=pl.col("finished_at"),
        last_seen_at=pl.col("finished_at"),
    )


def target_counts(records: pl.LazyFrame) -> pl.LazyFrame:
    """Successful runs per (collection, family, selected target)."""
    ok = records.filter(pl.col("success") & pl.col("selected_target").is_not_null())
    ok = _as_counts(ok, pl.col("success")).rename({"selected_target": "target"})
    return reduce_counts(ok, [*SCOPE, "target"], ["query_family"])


def plan_counts(records: pl.LazyFrame) -> pl.LazyFrame:
    """Successful runs per (collection, family, ordered tools)."""
    ok = records.filter(pl.col("success") & (pl.col("plan_tools").list.len() > 0))
    ok = _as_counts(ok, pl.col("success")).with_columns(key=pl.col("plan_tools").list.join(" -> "))
    return reduce_counts(ok, [*SCOPE, "key"], ["query_family"], ("plan_tools",))


def family_failures(records: pl.LazyFrame) -> pl.LazyFrame:
    """Failed runs per (collection, family): graph-tool-call's ``prior_failure_count``."""
    return records.group_by(SCOPE).agg(prior_failure_count=(~pl.col("success")).sum())


def attempts(records: pl.LazyFrame) -> pl.LazyFrame:
    """One row per (run, target it touched): the selected target and every planned tool.

    A run "matches" a suggestion as in graph-tool-call's ``_record_matches_suggestion``: same
    fingerprint, and the suggestion's target is the run's selected target or one of its tools.
    """
    targets = pl.concat_list(pl.col("selected_target"), pl.col("plan_tools")).list.drop_nulls()
    return (
        records.select(*SCOPE, "run_id", "success", "finished_at", target=targets.list.unique())
        .explode("target", empty_as_null=False)
        .filter(pl.col("target").is_not_null())
    )


def recent_window(attempt_rows: pl.LazyFrame, size: int) -> pl.LazyFrame:
    """The ``size`` most recent attempts per (collection, family, target). Mergeable."""
    return (
        attempt_rows.sort(["finished_at", "run_id"], descending=True)
        .group_by([*SCOPE, "target"], maintain_order=True)
        .head(size)
    )


def window_stats(window: pl.LazyFrame) -> pl.LazyFrame:
    return window.group_by([*SCOPE, "target"]).agg(
        recent_successes=pl.col("success").sum(),
        recent_failures=(~pl.col("success")).sum(),
    )


def evidence_counts(
    evidence: pl.LazyFrame, key: pl.Expr, detail: Sequence[str], target: str
) -> pl.LazyFrame:
    """Evidence rows (joined to their run's learning record) per suggestion key.

    ``key``, ``detail`` and ``target`` come from the kind's entry in
    :mod:`pipelines.suggestion_kinds`. Only successful runs are observations; failed ones count
    as failures (graph-tool-call derives suggestions from successful records only).
    """
    frame = _as_counts(evidence, pl.col("success")).with_columns(
        pl.col("collection_id").fill_null(""),
        pl.col("query_fingerprint").fill_null(""),
        pl.col("query_family").fill_null(""),
    )
    frame = frame.with_columns(key=key, target=pl.col(target))
    return reduce_counts(frame, [*SCOPE, "key"], ["query_family", "target", *detail])


def finish(
    frame: pl.LazyFrame, kind: str, fill: Mapping[str, pl.Expr] | None = None
) -> pl.LazyFrame:
    """A reduced frame as suggestions of one type: the id, and ``key``/``target`` filled in
    (``fill``: the kind's expressions for the columns its counts do not carry)."""
    if fill:
        frame = frame.with_columns(**fill)
    basis = pl.concat_str(
        pl.col("collection_id"), pl.col("query_fingerprint"), pl.lit(kind), pl.col("key"),
        separator="|",
    )  # fmt: skip
    return frame.filter(pl.col("observations") > 0).with_columns(
        type=pl.lit(kind),
        # one hash per suggestion (not per record): SHA-256 has no polars expression.
        id=pl.lit(kind + ":") + basis.map_batches(_hashes, return_dtype=pl.String),
    )


def _hashes(basis: pl.Series) -> pl.Series:
    return pl.Series([stable_hash(v) for v in basis], dtype=pl.String)
