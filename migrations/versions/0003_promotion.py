"""Promotion: data-flow evidence and the suggestions projection.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copies of the types in tracelake.store.schema (migrations never import live types).
POSITION = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
JSON_DOC = sa.Text().with_variant(postgresql.JSONB(), "postgresql")
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "data_flow_evidence",
        sa.Column("position", POSITION, autoincrement=False, nullable=False),
        sa.Column("to_field", sa.Text(), nullable=False),
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("collection_id", sa.Text(), nullable=True),
        sa.Column("source_step", sa.Text(), nullable=False),
        sa.Column("source_tool", sa.Text(), nullable=False),
        sa.Column("from_path", sa.Text(), nullable=False),
        sa.Column("target_step", sa.Text(), nullable=False),
        sa.Column("target_tool", sa.Text(), nullable=False),
        sa.Column("via", sa.Text(), nullable=False),
        sa.Column("recorded_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("position", "to_field", name="pk_data_flow_evidence"),
    )
    op.create_index("ix_data_flow_evidence_run_id", "data_flow_evidence", ["run_id"])
    op.create_table(
        "suggestions",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("collection_id", sa.Text(), nullable=False),
        sa.Column("query_family", sa.Text(), nullable=True),
        sa.Column("query_fingerprint", sa.Text(), nullable=True),
        sa.Column("target", sa.Text(), nullable=True),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("observations", sa.Integer(), nullable=False),
        sa.Column("prior_failure_count", sa.Integer(), nullable=False),
        sa.Column("document", JSON_DOC, nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("decided_by", sa.Text(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("updated_at", TS, nullable=False),
        sa.Column("last_position", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_suggestions"),
    )
    op.create_index(
        "ix_suggestions_collection_id_status", "suggestions", ["collection_id", "status"]
    )


def downgrade() -> None:
    op.drop_table("suggestions")
    op.drop_table("data_flow_evidence")
