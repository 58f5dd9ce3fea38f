"""Storage compact: each distinct ``trace_metadata`` stored once; the event-id index partial.

* ``trace_contexts`` holds each distinct (scrubbed) ``trace_metadata`` object once, keyed by a
  digest of its JSON, like ``redaction_reports`` (0007). graph-tool-call repeats the run's whole
  ``trace_metadata`` in every event (~330 of ~770 bytes of a stored payload); new events store
  the payload without it and ``events.redactions`` references it (``{"r": ..., "t": <id>}``);
  the reader puts it back. Rows stored before keep it inline (readers accept both), so no
  stored row changes and the hash chain is untouched. The content hash stays the hash of the
  whole payload, so a re-ingest dedupes against rows of either form.
* PostgreSQL: ``(run_id, event_id)`` is indexed only where ``event_id IS NOT NULL``: the
  appender looks events up by a client's id only for events that have one (most rows have
  none, and their ``(run_id, NULL)`` entries cost ~20 bytes per event for nothing). SQLite keeps
  its unique constraint (it is the uniqueness check there; changing it means copying the table).

Downgrade puts every interned ``trace_metadata`` back into its events (with the append-only
trigger lifted for that statement) and re-links the hash chain from the first changed event:
the chain then verifies again, with new heads from that point on.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON_DOC = sa.Text().with_variant(postgresql.JSONB(), "postgresql")

# Frozen copies of 0008's trigger definitions (the downgrade lifts and restores them).
PG_ROW_TRIGGER = """
CREATE TRIGGER events_append_only_row BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION tracelake_events_append_only();
"""
SQLITE_UPDATE = """CREATE TRIGGER events_no_update BEFORE UPDATE ON events
       BEGIN SELECT RAISE(ABORT, 'events is append-only: UPDATE is not allowed'); END"""

PG_INFLATE = """
UPDATE events e SET
    payload = e.payload || jsonb_build_object('trace_metadata', c.document),
    redactions = CASE WHEN e.redactions ? 'r'
                      THEN jsonb_build_object('r', e.redactions -> 'r') END
FROM trace_contexts c
WHERE e.redactions ? 't' AND c.id = (e.redactions ->> 't')::int
"""
SQLITE_INFLATE = """
UPDATE events SET
    payload = json_set(payload, '$.trace_metadata', json((SELECT c.document
        FROM trace_contexts c WHERE c.id = json_extract(events.redactions, '$.t')))),
    redactions = CASE WHEN json_extract(redactions, '$.r') IS NOT NULL
                      THEN json_object('r', json_extract(redactions, '$.r')) END
WHERE json_extract(redactions, '$.t') IS NOT NULL
"""


def upgrade() -> None:
    op.create_table(
        "trace_contexts",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("digest", sa.Text(), nullable=False),
        sa.Column("document", JSON_DOC, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_trace_contexts"),
        sa.UniqueConstraint("digest", name="uq_trace_contexts_digest"),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP INDEX IF EXISTS ix_events_run_id_event_id")
        op.execute(
            "CREATE INDEX ix_events_run_id_event_id ON events (run_id, event_id)"
            " WHERE event_id IS NOT NULL"
        )


def _first_referencing(pg: bool) -> int | None:
    where = "redactions ? 't'" if pg else "json_extract(redactions, '$.t') IS NOT NULL"
    found = op.get_bind().execute(sa.text(f"SELECT min(position) FROM events WHERE {where}"))
    value = found.scalar()
    return None if value is None else int(value)


def downgrade() -> None:
    pg = op.get_bind().dialect.name == "postgresql"
    first = _first_referencing(pg)
    if first is not None:
        if pg:
            op.execute("DROP TRIGGER events_append_only_row ON events")
            op.execute(PG_INFLATE)
            op.execute(PG_ROW_TRIGGER)
        else:
            op.execute("DROP TRIGGER events_no_update")
            op.execute(SQLITE_INFLATE)
            op.execute(SQLITE_UPDATE)
        from tracelake.store import chain

        # the links that cover a changed event are made again from the stored rows
        op.execute(sa.text("DELETE FROM event_chain WHERE last_position >= :p").bindparams(p=first))
        while chain.link_appended(op.get_bind(), limit=2000):
            pass
    if pg:
        op.execute("DROP INDEX IF EXISTS ix_events_run_id_event_id")
        op.execute("CREATE INDEX ix_events_run_id_event_id ON events (run_id, event_id)")
    op.drop_table("trace_contexts")
