"""The append-only events log and the quarantine table.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copies of the types in tracelake.store.schema (migrations never import live types).
POSITION = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
JSON_DOC = sa.Text().with_variant(postgresql.JSONB(), "postgresql")
TS = sa.DateTime(timezone=True)

# Invariant 1: the database itself refuses UPDATE, DELETE (and TRUNCATE) on events.
PG_TRIGGERS = """
CREATE FUNCTION tracelake_events_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;
CREATE TRIGGER events_append_only_row BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION tracelake_events_append_only();
CREATE TRIGGER events_append_only_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION tracelake_events_append_only();
"""
SQLITE_TRIGGERS = [
    """CREATE TRIGGER events_no_update BEFORE UPDATE ON events
       BEGIN SELECT RAISE(ABORT, 'events is append-only: UPDATE is not allowed'); END""",
    """CREATE TRIGGER events_no_delete BEFORE DELETE ON events
       BEGIN SELECT RAISE(ABORT, 'events is append-only: DELETE is not allowed'); END""",
]


def upgrade() -> None:
    op.create_table(
        "events",
        sa.Column("position", POSITION, autoincrement=True, nullable=False),
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("event_id", sa.Text(), nullable=True),
        sa.Column("plan_id", sa.Text(), nullable=True),
        sa.Column("step_id", sa.Text(), nullable=True),
        sa.Column("tool", sa.Text(), nullable=True),
        sa.Column("collection_id", sa.Text(), nullable=True),
        sa.Column("recorded_at", TS, nullable=False),
        sa.Column("content_hash", sa.Text(), nullable=False),
        sa.Column("payload", JSON_DOC, nullable=False),
        sa.Column("redactions", JSON_DOC, nullable=True),
        sa.PrimaryKeyConstraint("position", name="pk_events"),
        sa.UniqueConstraint("run_id", "seq", name="uq_events_run_id_seq"),
        sa.UniqueConstraint("event_id", name="uq_events_event_id"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_events_type_position", "events", ["type", "position"])
    op.create_index("ix_events_collection_id_position", "events", ["collection_id", "position"])
    op.create_table(
        "quarantine",
        sa.Column("id", POSITION, autoincrement=True, nullable=False),
        sa.Column("recorded_at", TS, nullable=False),
        sa.Column("origin", sa.Text(), nullable=False),
        sa.Column("line_no", sa.Integer(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("event_type", sa.Text(), nullable=True),
        sa.Column("run_id", sa.Text(), nullable=True),
        sa.Column("seq", sa.Integer(), nullable=True),
        sa.Column("preview", sa.Text(), nullable=True),
        sa.Column("dedupe_key", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_quarantine"),
        sa.UniqueConstraint("dedupe_key", name="uq_quarantine_dedupe_key"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_quarantine_reason", "quarantine", ["reason"])
    if op.get_bind().dialect.name == "postgresql":
        op.execute(PG_TRIGGERS)
    else:
        for ddl in SQLITE_TRIGGERS:
            op.execute(ddl)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS events_append_only_truncate ON events")
        op.execute("DROP TRIGGER IF EXISTS events_append_only_row ON events")
        op.execute("DROP FUNCTION IF EXISTS tracelake_events_append_only()")
    op.drop_index("ix_quarantine_reason", table_name="quarantine")
    op.drop_table("quarantine")
    op.drop_index("ix_events_collection_id_position", table_name="events")
    op.drop_index("ix_events_type_position", table_name="events")
    op.drop_table("events")
