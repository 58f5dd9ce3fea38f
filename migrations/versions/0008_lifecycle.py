"""Data lifecycle: the hash chain, per-subject secrets, erasure receipts, guarded retention;
on PostgreSQL the events table becomes partitioned by month of ``recorded_at``.

* PostgreSQL: the old ``events`` is renamed, a partitioned ``events`` (same columns, position
  from a sequence that continues the old numbering, primary key ``(position, recorded_at)``)
  takes its rows in position order, then the old table is dropped. ``(run_id, seq)`` and
  ``(run_id, event_id)`` become plain indexes (a unique constraint would have to contain the
  partition key); the appender enforces them under the append lock. Other indexes on the old
  table are recreated by their definitions.
* Both: the append-only trigger lets a DELETE through only inside a retention transaction, for
  rows recorded before its cut (``retention_guard``); everything else is refused as before.
* Both: the events already stored are chained (one link) from the genesis anchor.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)
BIG = sa.BigInteger()
JSON_DOC = sa.Text().with_variant(postgresql.JSONB(), "postgresql")

PG_FUNCTION = """
CREATE OR REPLACE FUNCTION tracelake_events_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND TG_LEVEL = 'ROW' AND EXISTS (
        SELECT 1 FROM retention_guard g
        WHERE g.token = txid_current()::text AND OLD.recorded_at < g.cut) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'events is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;
"""
PG_OLD_FUNCTION = """
CREATE OR REPLACE FUNCTION tracelake_events_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;
"""
PG_TRIGGERS = """
CREATE TRIGGER events_append_only_row BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION tracelake_events_append_only();
CREATE TRIGGER events_append_only_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION tracelake_events_append_only();
"""
COLUMNS = (
    "position, run_id, seq, type, source, event_id, plan_id, step_id, tool, collection_id,"
    " recorded_at, content_hash, payload, redactions"
)
PG_TABLE = """
CREATE SEQUENCE tracelake_events_position AS bigint;
CREATE TABLE events (
    position bigint NOT NULL DEFAULT nextval('tracelake_events_position'),
    run_id text NOT NULL,
    seq integer NOT NULL,
    type text NOT NULL,
    source text NOT NULL,
    event_id text,
    plan_id text,
    step_id text,
    tool text,
    collection_id text,
    recorded_at timestamptz NOT NULL,
    content_hash text NOT NULL,
    payload jsonb NOT NULL,
    redactions jsonb,
    CONSTRAINT pk_events PRIMARY KEY (position, recorded_at)
) PARTITION BY RANGE (recorded_at);
ALTER SEQUENCE tracelake_events_position OWNED BY events.position;
CREATE INDEX ix_events_run_id_seq ON events (run_id, seq);
CREATE INDEX ix_events_run_id_event_id ON events (run_id, event_id);
CREATE TABLE events_default PARTITION OF events DEFAULT;
"""
SQLITE_UPDATE = """CREATE TRIGGER events_no_update BEFORE UPDATE ON events
       BEGIN SELECT RAISE(ABORT, 'events is append-only: UPDATE is not allowed'); END"""
SQLITE_REPLACE = """CREATE TRIGGER events_no_replace BEFORE INSERT ON events
       WHEN EXISTS (SELECT 1 FROM events WHERE position = NEW.position)
         OR EXISTS (SELECT 1 FROM events WHERE run_id = NEW.run_id AND seq = NEW.seq)
         OR (NEW.event_id IS NOT NULL AND EXISTS (
             SELECT 1 FROM events WHERE run_id = NEW.run_id AND event_id = NEW.event_id))
       BEGIN SELECT RAISE(ABORT, 'events is append-only: REPLACE is not allowed'); END"""
SQLITE_GUARDED_DELETE = """CREATE TRIGGER events_no_delete BEFORE DELETE ON events
       WHEN NOT EXISTS (SELECT 1 FROM retention_guard WHERE OLD.recorded_at < retention_guard.cut)
       BEGIN SELECT RAISE(ABORT, 'events is append-only: DELETE is not allowed'); END"""
SQLITE_PLAIN_DELETE = """CREATE TRIGGER events_no_delete BEFORE DELETE ON events
       BEGIN SELECT RAISE(ABORT, 'events is append-only: DELETE is not allowed'); END"""


def _tables() -> None:
    op.create_table(
        "event_chain",
        sa.Column("last_position", BIG, autoincrement=False, nullable=False),
        sa.Column("first_position", BIG, nullable=False),
        sa.Column("head", sa.Text(), nullable=False),
        sa.Column("digests", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("last_position", name="pk_event_chain"),
    )
    op.create_table(
        "chain_anchors",
        sa.Column("position", BIG, autoincrement=False, nullable=False),
        sa.Column("head", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("detail", JSON_DOC, nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("position", name="pk_chain_anchors"),
    )
    op.create_table(
        "chain_removed",
        sa.Column("position", BIG, autoincrement=False, nullable=False),
        sa.Column("digest", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("position", name="pk_chain_removed"),
    )
    op.create_table(
        "verify_checkpoints",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("position", BIG, nullable=False),
        sa.Column("head", sa.Text(), nullable=False),
        sa.Column("verified_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_verify_checkpoints"),
    )
    op.create_table(
        "subject_secrets",
        sa.Column("subject_ref", sa.Text(), nullable=False),
        sa.Column("secret", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("subject_ref", name="pk_subject_secrets"),
    )
    op.create_table(
        "erasures",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("erased_at", TS, nullable=False),
        sa.Column("receipt", JSON_DOC, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_erasures"),
    )
    op.create_table(
        "retention_guard",
        sa.Column("token", sa.Text(), nullable=False),
        sa.Column("cut", TS, nullable=False),
        sa.PrimaryKeyConstraint("token", name="pk_retention_guard"),
    )
    anchors = sa.table(
        "chain_anchors",
        sa.column("position", BIG),
        sa.column("head", sa.Text()),
        sa.column("reason", sa.Text()),
        sa.column("created_at", TS),
    )
    op.bulk_insert(
        anchors, [{"position": 0, "head": "0" * 64, "reason": "genesis", "created_at": _now()}]
    )


def _now() -> datetime:
    return datetime.now(UTC)


# The same statement as 0007 (a frozen copy): lz4 where the server has it, else the default.
PG_KEEP_LZ4 = """
DO $$
BEGIN
    ALTER TABLE events ALTER COLUMN payload SET COMPRESSION lz4;
    ALTER TABLE events ALTER COLUMN redactions SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value OR syntax_error THEN
    NULL;
END $$;
"""


def _partition_events() -> None:
    from tracelake.store import partitions

    bind = op.get_bind()
    # Indexes someone added to events (not the ones this migration makes itself).
    mine = {"pk_events", "uq_events_run_id_seq", "uq_events_run_id_event_id"}
    extra = [
        (name, definition)
        for name, definition in bind.execute(
            sa.text(
                "SELECT indexname, indexdef FROM pg_indexes"
                " WHERE tablename = 'events' AND schemaname = current_schema()"
            )
        )
        if name not in mine
    ]
    op.execute("ALTER TABLE events RENAME TO events_unpartitioned")
    for constraint in sorted(mine):
        op.execute(
            f"ALTER TABLE events_unpartitioned RENAME CONSTRAINT {constraint} TO {constraint}_old"
        )
    for name, _ in extra:
        op.execute(f"ALTER INDEX {name} RENAME TO {name}_old")
    op.execute(PG_TABLE)
    op.execute(PG_KEEP_LZ4)  # 0007 set lz4 on the old table's columns; keep it
    for _, definition in extra:
        op.execute(definition.replace(" ON public.events ", " ON events ", 1))
    op.execute(PG_FUNCTION)
    op.execute(PG_TRIGGERS)
    oldest = bind.execute(sa.text("SELECT min(recorded_at) FROM events_unpartitioned")).scalar()
    partitions.ensure_months(bind, oldest or _now())
    op.execute(
        f"INSERT INTO events ({COLUMNS}) SELECT {COLUMNS} FROM events_unpartitioned"
        " ORDER BY position"
    )
    op.execute(  # continue the old numbering (positions are never reused)
        "SELECT setval('tracelake_events_position', max(position)) FROM events_unpartitioned"
        " HAVING max(position) IS NOT NULL"
    )
    op.execute("DROP TABLE events_unpartitioned")


def upgrade() -> None:
    _tables()
    if op.get_bind().dialect.name == "postgresql":
        _partition_events()
    else:
        # 0005's table copy lost AUTOINCREMENT: harmless while nothing was ever deleted, but
        # after retention SQLite would hand out removed positions again and a poller reading
        # "after N" would skip them. Copy once more with it (the copy sets sqlite_sequence to
        # the highest position), then make the triggers again (they go with the old copy).
        with op.batch_alter_table(
            "events", recreate="always", table_kwargs={"sqlite_autoincrement": True}
        ):
            pass
        for ddl in (SQLITE_UPDATE, SQLITE_GUARDED_DELETE, SQLITE_REPLACE):
            op.execute(ddl)
    from tracelake.store import chain

    while chain.link_appended(op.get_bind(), limit=2000):  # the events stored so far
        pass


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE events RENAME TO events_partitioned")
        op.execute("ALTER TABLE events_partitioned RENAME CONSTRAINT pk_events TO pk_events_p")
        op.execute("ALTER INDEX ix_events_run_id_seq RENAME TO ix_events_p_run_id_seq")
        op.execute("ALTER INDEX ix_events_run_id_event_id RENAME TO ix_events_p_run_id_event_id")
        op.execute(
            "CREATE TABLE events (position bigint GENERATED BY DEFAULT AS IDENTITY NOT NULL,"
            " run_id text NOT NULL, seq integer NOT NULL, type text NOT NULL,"
            " source text NOT NULL, event_id text, plan_id text, step_id text, tool text,"
            " collection_id text, recorded_at timestamptz NOT NULL, content_hash text NOT NULL,"
            " payload jsonb NOT NULL, redactions jsonb,"
            " CONSTRAINT pk_events PRIMARY KEY (position),"
            " CONSTRAINT uq_events_run_id_seq UNIQUE (run_id, seq),"
            " CONSTRAINT uq_events_run_id_event_id UNIQUE (run_id, event_id))"
        )
        # Back to 0007's table: no (type, position) or (collection_id, position) index, lz4.
        op.execute(PG_KEEP_LZ4)
        op.execute(
            f"INSERT INTO events ({COLUMNS}) OVERRIDING SYSTEM VALUE"
            f" SELECT {COLUMNS} FROM events_partitioned ORDER BY position"
        )
        op.execute(
            "SELECT setval(pg_get_serial_sequence('events', 'position'),"
            " greatest((SELECT last_value FROM tracelake_events_position), 1), true)"
        )
        op.execute("DROP TABLE events_partitioned CASCADE")
        op.execute(PG_OLD_FUNCTION)
        op.execute(PG_TRIGGERS)
    else:
        op.execute("DROP TRIGGER IF EXISTS events_no_delete")
        op.execute(SQLITE_PLAIN_DELETE)
    for table in (
        "retention_guard",
        "erasures",
        "subject_secrets",
        "verify_checkpoints",
        "chain_removed",
        "chain_anchors",
        "event_chain",
    ):
        op.drop_table(table)
