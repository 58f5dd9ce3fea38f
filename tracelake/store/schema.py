"""The one SQLAlchemy Core schema. Alembic migrations must produce exactly this (tested).

``events`` is the append-only log. Its payload is JSONB on PostgreSQL and UTF-8 JSON text on
SQLite (never ``\\u``-escaped, so analysts can read and ``json_extract`` it as is).
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    Index,
    Integer,
    Table,
    Text,
    UniqueConstraint,
)

from tracelake.store.column_types import NAMING, JSONDocument, Position, Timestamp, dumps, metadata
from tracelake.store.lifecycle_tables import (
    chain_anchors,
    chain_removed,
    erasures,
    event_chain,
    retention_guard,
    subject_secrets,
    verify_checkpoints,
)

events = Table(
    "events",
    metadata,
    Column("position", Position, primary_key=True, autoincrement=True),
    Column("run_id", Text, nullable=False),
    Column("seq", Integer, nullable=False),
    Column("type", Text, nullable=False),
    Column("source", Text, nullable=False),
    Column("event_id", Text, nullable=True),  # a client's id: unique within its run
    Column("plan_id", Text, nullable=True),
    Column("step_id", Text, nullable=True),
    Column("tool", Text, nullable=True),
    Column("collection_id", Text, nullable=True),
    Column("recorded_at", Timestamp, nullable=False),
    Column("content_hash", Text, nullable=False),
    Column("payload", JSONDocument, nullable=False),
    Column("redactions", JSONDocument, nullable=True),
    UniqueConstraint("run_id", "seq"),
    UniqueConstraint("run_id", "event_id"),
    # No other index (migration 0007 dropped (type, position) and (collection_id, position)):
    # every query of the log reads by position (pollers, projections, export) or by run
    # (runs show, dedupe, numbering, folds), which the primary key and (run_id, seq) serve.
    sqlite_autoincrement=True,
)

# Each distinct redaction report once; events.redactions holds {"r": id} (store.redactions).
redaction_reports = Table(
    "redaction_reports",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("digest", Text, nullable=False, unique=True),  # blake2b-128 of the report's JSON
    Column("report", JSONDocument, nullable=False),
)

# Each distinct trace_metadata object once (0009); events.redactions holds {"t": id} beside
# the report's {"r": id}, and the reader puts the object back into the payload.
trace_contexts = Table(
    "trace_contexts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("digest", Text, nullable=False, unique=True),  # blake2b-128 of the object's JSON
    Column("document", JSONDocument, nullable=False),  # scrubbed
)

quarantine = Table(
    "quarantine",
    metadata,
    Column("id", Position, primary_key=True, autoincrement=True),
    Column("recorded_at", Timestamp, nullable=False),
    Column("origin", Text, nullable=False),  # a file name, "-" for stdin, "sink"
    Column("line_no", Integer, nullable=True),
    Column("reason", Text, nullable=False),
    Column("detail", Text, nullable=False),  # scrubbed; never the raw content
    Column("event_type", Text, nullable=True),
    Column("run_id", Text, nullable=True),
    Column("seq", Integer, nullable=True),
    Column("preview", Text, nullable=True),  # scrubbed, truncated
    Column("dedupe_key", Text, nullable=False, unique=True),
    Index(None, "reason"),
    sqlite_autoincrement=True,
)

# --- Projections (issue 4): derived from the scrubbed log, rebuildable, NOT append-only. ---
# Each projection writes its rows and its checkpoint row in one transaction (invariant 4).

projection_checkpoints = Table(
    "projection_checkpoints",
    metadata,
    Column("name", Text, primary_key=True),
    Column("position", BigInteger, nullable=False),  # last global position applied
    Column("updated_at", Timestamp, nullable=False),
)

runs = Table(
    "runs",
    metadata,
    Column("run_id", Text, primary_key=True),
    Column("source", Text, nullable=False),
    Column("collection_id", Text, nullable=True),
    Column("status", Text, nullable=False),  # seed 000's UI grouping
    Column("finished", Boolean, nullable=False),
    Column("success", Boolean, nullable=True),
    Column("plan_ids", JSONDocument, nullable=False),
    Column("started_at", Timestamp, nullable=False),
    Column("ended_at", Timestamp, nullable=True),
    Column("last_event_type", Text, nullable=False),
    Column("event_count", Integer, nullable=False),
    Column("step_count", Integer, nullable=False),
    Column("retry_count", Integer, nullable=False),
    Column("skip_count", Integer, nullable=False),
    Column("repair_count", Integer, nullable=False),
    Column("coercion_count", Integer, nullable=False),
    Column("binding_repair_count", Integer, nullable=False),
    Column("total_duration_ms", Float, nullable=True),
    Column("last_position", BigInteger, nullable=False),
    Index(None, "collection_id", "status"),
)

learning_records = Table(
    "learning_records",
    metadata,
    Column("run_id", Text, primary_key=True),
    # the event that finished the run: a record is written once, then never updated (0006)
    Column("position", BigInteger, nullable=False),
    Column("source", Text, nullable=False),
    Column("collection_id", Text, nullable=True),
    Column("plan_ids", JSONDocument, nullable=False),
    Column("goal", Text, nullable=True),  # scrubbed
    Column("query_family", Text, nullable=True),
    Column("query_fingerprint", Text, nullable=True),
    Column("selected_target", Text, nullable=True),
    Column("plan_tools", JSONDocument, nullable=False),
    Column("success", Boolean, nullable=False),
    Column("failure_stage", Text, nullable=True),
    Column("failure_reason", Text, nullable=True),
    Column("failed_step", Text, nullable=True),
    Column("failed_tool", Text, nullable=True),
    Column("total_duration_ms", Float, nullable=True),
    Column("step_count", Integer, nullable=False),
    Column("retry_count", Integer, nullable=False),
    Column("skip_count", Integer, nullable=False),
    Column("repair_count", Integer, nullable=False),
    Column("coercion_count", Integer, nullable=False),
    Column("binding_repair_count", Integer, nullable=False),
    Column("engine_version", Text, nullable=True),
    Column("finished_at", Timestamp, nullable=False),
    # no promotion status: it lives in the suggestion decisions (suggestions), read by views
    Index(None, "collection_id", "query_fingerprint"),
    Index(None, "position"),
)

failure_taxonomy = Table(
    "failure_taxonomy",
    metadata,
    Column("position", Position, primary_key=True, autoincrement=False),  # the failure event
    Column("run_id", Text, nullable=False),
    Column("source", Text, nullable=False),
    Column("event_type", Text, nullable=False),
    Column("collection_id", Text, nullable=True),
    Column("plan_id", Text, nullable=True),
    Column("step_id", Text, nullable=True),
    Column("tool", Text, nullable=True),
    Column("stage", Text, nullable=False),
    Column("reason", Text, nullable=False),
    Column("detail", Text, nullable=False),  # snake_case sub-code of the reason (0006)
    Column("retryable", Boolean, nullable=False),
    # operator_action is a function of the reason: stored once per reason in failure_actions
    # (0011) and joined back by v_failure_taxonomy
    Column("http_status", Integer, nullable=True),
    Column("exception_type", Text, nullable=True),
    Column("error_kind", Text, nullable=True),
    Column("field_name", Text, nullable=True),
    Column("attempt", Integer, nullable=True),
    Column("recorded_at", Timestamp, nullable=False),
    Index(None, "run_id"),
    Index(None, "reason"),
)

# What an operator should do about each failure reason (0011; written by the failure_taxonomy
# projection from runners.failure_reasons), once per reason instead of once per failure row.
failure_actions = Table(
    "failure_actions",
    metadata,
    Column("reason", Text, primary_key=True),
    Column("operator_action", Text, nullable=False),
)

tool_calls = Table(
    "tool_calls",
    metadata,
    Column("position", Position, primary_key=True, autoincrement=False),  # the ending event
    Column("run_id", Text, nullable=False),
    Column("source", Text, nullable=False),
    Column("collection_id", Text, nullable=True),
    Column("step_id", Text, nullable=True),
    Column("tool", Text, nullable=False),
    Column("ok", Boolean, nullable=False),
    Column("duration_ms", Float, nullable=True),
    Index(None, "run_id"),
    Index(None, "tool"),
)

binding_repair_evidence = Table(
    "binding_repair_evidence",
    metadata,
    Column("position", Position, primary_key=True, autoincrement=False),
    Column("run_id", Text, nullable=False),
    Column("collection_id", Text, nullable=True),
    Column("plan_id", Text, nullable=True),
    Column("step_id", Text, nullable=True),
    Column("tool", Text, nullable=True),
    Column("field_name", Text, nullable=True),
    Column("recovered_path", Text, nullable=True),
    Column("value_preview", JSONDocument, nullable=True),  # scrubbed preview
    Column("low_confidence", Boolean, nullable=False),
    Column("run_completed", Boolean, nullable=True),  # NULL while the run is open
    Column("recorded_at", Timestamp, nullable=False),
    Index(None, "run_id"),
)

binding_repair_candidates = Table(
    "binding_repair_candidates",
    metadata,
    Column("collection_id", Text, primary_key=True),  # '' when the run had none
    Column("tool", Text, primary_key=True),
    Column("field_name", Text, primary_key=True),
    Column("recovered_path", Text, primary_key=True),
    Column("observations", Integer, nullable=False),
    Column("successes", Integer, nullable=False),
    Column("failures", Integer, nullable=False),
    # no status (0006): v_binding_repair_evidence reads it from the suggestion decisions
    Column("first_seen_at", Timestamp, nullable=False),
    Column("last_seen_at", Timestamp, nullable=False),
)

coercion_evidence = Table(
    "coercion_evidence",
    metadata,
    Column("position", Position, primary_key=True, autoincrement=False),
    Column("change_index", Integer, primary_key=True, autoincrement=False),
    Column("run_id", Text, nullable=False),
    Column("collection_id", Text, nullable=True),
    Column("plan_id", Text, nullable=True),
    Column("step_id", Text, nullable=True),
    Column("tool", Text, nullable=True),
    Column("field_name", Text, nullable=True),
    Column("rule", Text, nullable=True),  # cast | enum | unresolved
    Column("from_value", JSONDocument, nullable=True),
    Column("to_value", JSONDocument, nullable=True),
    Column("unresolved", JSONDocument, nullable=False),
    Column("recorded_at", Timestamp, nullable=False),
    Index(None, "run_id"),
    Index(None, "tool", "field_name"),
)

# --- Promotion (issue 6) ---------------------------------------------------------------------

data_flow_evidence = Table(
    "data_flow_evidence",
    metadata,
    # One row per observed field flow into a step's argument: the argument's value was seen in
    # an earlier step's output (``via`` = "value") or a binding was repaired to it ("repair").
    Column("position", Position, primary_key=True, autoincrement=False),  # the step.started
    Column("to_field", Text, primary_key=True),
    Column("run_id", Text, nullable=False),
    Column("collection_id", Text, nullable=True),
    Column("source_step", Text, nullable=False),
    Column("source_tool", Text, nullable=False),
    Column("from_path", Text, nullable=False),
    Column("target_step", Text, nullable=False),
    Column("target_tool", Text, nullable=False),
    Column("via", Text, nullable=False),
    Column("recorded_at", Timestamp, nullable=False),
    Index(None, "run_id"),
)

suggestions = Table(
    "suggestions",
    metadata,
    # The current state of each suggestion, projected from its ``suggestion.*`` events (run id
    # ``suggestion:<id>``): every event carries the suggestion as it is after the event.
    Column("id", Text, primary_key=True),
    Column("type", Text, nullable=False),
    Column("collection_id", Text, nullable=False),
    Column("query_family", Text, nullable=True),
    Column("query_fingerprint", Text, nullable=True),
    Column("target", Text, nullable=True),
    Column("status", Text, nullable=False),
    Column("observations", Integer, nullable=False),
    Column("prior_failure_count", Integer, nullable=False),
    Column("document", JSONDocument, nullable=False),  # the whole suggestion object
    Column("version", Integer, nullable=False),  # events in its history
    Column("decided_by", Text, nullable=True),  # who/which policy made the last status change
    Column("reason", Text, nullable=True),
    Column("updated_at", Timestamp, nullable=False),
    Column("last_position", BigInteger, nullable=False),
    Index(None, "collection_id", "status"),
)

# What this module re-exports from column_types and lifecycle_tables (its own tables import as usual).
__all__ = [
    "NAMING",
    "JSONDocument",
    "Position",
    "Timestamp",
    "chain_anchors",
    "chain_removed",
    "dumps",
    "erasures",
    "event_chain",
    "metadata",
    "retention_guard",
    "subject_secrets",
    "verify_checkpoints",
]
