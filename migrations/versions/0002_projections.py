"""Projection tables, their checkpoints, and the stable analytics views.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copies of the types in tracelake.store.schema (migrations never import live types).
POSITION = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
JSON_DOC = sa.Text().with_variant(postgresql.JSONB(), "postgresql")
TS = sa.DateTime(timezone=True)

# SQL kept as SQL, versioned by file name: this migration always runs the 0002 definitions.
VIEWS_SQL = Path(__file__).resolve().parents[2] / "tracelake" / "sql" / "views_0002.sql"
VIEWS = (
    "v_tool_latency",
    "v_binding_repair_evidence",
    "v_failure_taxonomy",
    "v_learning_records",
    "v_runs",
)


def _ints(*names: str) -> list[sa.Column[int]]:
    return [sa.Column(n, sa.Integer(), nullable=False) for n in names]


COUNTS = (
    "step_count",
    "retry_count",
    "skip_count",
    "repair_count",
    "coercion_count",
    "binding_repair_count",
)


def upgrade() -> None:
    op.create_table(
        "projection_checkpoints",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_projection_checkpoints"),
    )
    op.create_table(
        "runs",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("collection_id", sa.Text(), nullable=True),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("finished", sa.Boolean(), nullable=False),
        sa.Column("success", sa.Boolean(), nullable=True),
        sa.Column("plan_ids", JSON_DOC, nullable=False),
        sa.Column("started_at", TS, nullable=False),
        sa.Column("ended_at", TS, nullable=True),
        sa.Column("last_event_type", sa.Text(), nullable=False),
        sa.Column("event_count", sa.Integer(), nullable=False),
        *_ints(*COUNTS),
        sa.Column("total_duration_ms", sa.Float(), nullable=True),
        sa.Column("last_position", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", name="pk_runs"),
    )
    op.create_index("ix_runs_collection_id_status", "runs", ["collection_id", "status"])
    op.create_table(
        "learning_records",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("collection_id", sa.Text(), nullable=True),
        sa.Column("plan_ids", JSON_DOC, nullable=False),
        sa.Column("goal", sa.Text(), nullable=True),
        sa.Column("query_family", sa.Text(), nullable=True),
        sa.Column("query_fingerprint", sa.Text(), nullable=True),
        sa.Column("selected_target", sa.Text(), nullable=True),
        sa.Column("plan_tools", JSON_DOC, nullable=False),
        sa.Column("success", sa.Boolean(), nullable=False),
        sa.Column("failure_stage", sa.Text(), nullable=True),
        sa.Column("failure_reason", sa.Text(), nullable=True),
        sa.Column("failed_step", sa.Text(), nullable=True),
        sa.Column("failed_tool", sa.Text(), nullable=True),
        sa.Column("total_duration_ms", sa.Float(), nullable=True),
        *_ints(*COUNTS),
        sa.Column("engine_version", sa.Text(), nullable=True),
        sa.Column("finished_at", TS, nullable=False),
        sa.Column("promotion_status", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", name="pk_learning_records"),
    )
    op.create_index(
        "ix_learning_records_collection_id_query_fingerprint",
        "learning_records",
        ["collection_id", "query_fingerprint"],
    )
    op.create_table(
        "failure_taxonomy",
        sa.Column("position", POSITION, autoincrement=False, nullable=False),
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("event_type", sa.Text(), nullable=False),
        sa.Column("collection_id", sa.Text(), nullable=True),
        sa.Column("plan_id", sa.Text(), nullable=True),
        sa.Column("step_id", sa.Text(), nullable=True),
        sa.Column("tool", sa.Text(), nullable=True),
        sa.Column("stage", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("retryable", sa.Boolean(), nullable=False),
        sa.Column("operator_action", sa.Text(), nullable=False),
        sa.Column("http_status", sa.Integer(), nullable=True),
        sa.Column("exception_type", sa.Text(), nullable=True),
        sa.Column("error_kind", sa.Text(), nullable=True),
        sa.Column("field_name", sa.Text(), nullable=True),
        sa.Column("attempt", sa.Integer(), nullable=True),
        sa.Column("recorded_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("position", name="pk_failure_taxonomy"),
    )
    op.create_index("ix_failure_taxonomy_run_id", "failure_taxonomy", ["run_id"])
    op.create_index("ix_failure_taxonomy_reason", "failure_taxonomy", ["reason"])
    op.create_table(
        "tool_calls",
        sa.Column("position", POSITION, autoincrement=False, nullable=False),
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("collection_id", sa.Text(), nullable=True),
        sa.Column("step_id", sa.Text(), nullable=True),
        sa.Column("tool", sa.Text(), nullable=False),
        sa.Column("ok", sa.Boolean(), nullable=False),
        sa.Column("duration_ms", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("position", name="pk_tool_calls"),
    )
    op.create_index("ix_tool_calls_run_id", "tool_calls", ["run_id"])
    op.create_index("ix_tool_calls_tool", "tool_calls", ["tool"])
    op.create_table(
        "binding_repair_evidence",
        sa.Column("position", POSITION, autoincrement=False, nullable=False),
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("collection_id", sa.Text(), nullable=True),
        sa.Column("plan_id", sa.Text(), nullable=True),
        sa.Column("step_id", sa.Text(), nullable=True),
        sa.Column("tool", sa.Text(), nullable=True),
        sa.Column("field_name", sa.Text(), nullable=True),
        sa.Column("recovered_path", sa.Text(), nullable=True),
        sa.Column("value_preview", JSON_DOC, nullable=True),
        sa.Column("low_confidence", sa.Boolean(), nullable=False),
        sa.Column("run_completed", sa.Boolean(), nullable=True),
        sa.Column("recorded_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("position", name="pk_binding_repair_evidence"),
    )
    op.create_index("ix_binding_repair_evidence_run_id", "binding_repair_evidence", ["run_id"])
    op.create_table(
        "binding_repair_candidates",
        sa.Column("collection_id", sa.Text(), nullable=False),
        sa.Column("tool", sa.Text(), nullable=False),
        sa.Column("field_name", sa.Text(), nullable=False),
        sa.Column("recovered_path", sa.Text(), nullable=False),
        *_ints("observations", "successes", "failures"),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("first_seen_at", TS, nullable=False),
        sa.Column("last_seen_at", TS, nullable=False),
        sa.PrimaryKeyConstraint(
            "collection_id",
            "tool",
            "field_name",
            "recovered_path",
            name="pk_binding_repair_candidates",
        ),
    )
    op.create_table(
        "coercion_evidence",
        sa.Column("position", POSITION, autoincrement=False, nullable=False),
        sa.Column("change_index", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("collection_id", sa.Text(), nullable=True),
        sa.Column("plan_id", sa.Text(), nullable=True),
        sa.Column("step_id", sa.Text(), nullable=True),
        sa.Column("tool", sa.Text(), nullable=True),
        sa.Column("field_name", sa.Text(), nullable=True),
        sa.Column("rule", sa.Text(), nullable=True),
        sa.Column("from_value", JSON_DOC, nullable=True),
        sa.Column("to_value", JSON_DOC, nullable=True),
        sa.Column("unresolved", JSON_DOC, nullable=False),
        sa.Column("recorded_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("position", "change_index", name="pk_coercion_evidence"),
    )
    op.create_index("ix_coercion_evidence_run_id", "coercion_evidence", ["run_id"])
    op.create_index(
        "ix_coercion_evidence_tool_field_name", "coercion_evidence", ["tool", "field_name"]
    )
    text = "\n".join(
        line
        for line in VIEWS_SQL.read_text(encoding="utf-8").splitlines()
        if not line.strip().startswith("--")
    )
    for statement in text.split(";"):
        if statement.strip():
            op.execute(statement.strip())


def downgrade() -> None:
    for view in VIEWS:
        op.execute(f"DROP VIEW IF EXISTS {view}")
    for table in (
        "coercion_evidence",
        "binding_repair_candidates",
        "binding_repair_evidence",
        "tool_calls",
        "failure_taxonomy",
        "learning_records",
        "runs",
        "projection_checkpoints",
    ):
        op.drop_table(table)
