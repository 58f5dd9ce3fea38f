"""Client event ids are unique within their run, not across all runs; SQLite refuses REPLACE.

* SSE producers often number events per stream ("1", "2", ...): two runs may both use "1".
  The constraint becomes UNIQUE (run_id, event_id).
* SQLite's INSERT OR REPLACE deletes the old row without firing DELETE triggers (unless
  recursive triggers are on), so a BEFORE INSERT trigger refuses any insert that would
  replace a stored event (invariant 1 is enforced by the database, not by politeness).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQLITE_TRIGGERS = [
    """CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
       BEGIN SELECT RAISE(ABORT, 'events is append-only: UPDATE is not allowed'); END""",
    """CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
       BEGIN SELECT RAISE(ABORT, 'events is append-only: DELETE is not allowed'); END""",
    """CREATE TRIGGER IF NOT EXISTS events_no_replace BEFORE INSERT ON events
       WHEN EXISTS (SELECT 1 FROM events WHERE position = NEW.position)
         OR EXISTS (SELECT 1 FROM events WHERE run_id = NEW.run_id AND seq = NEW.seq)
         OR (NEW.event_id IS NOT NULL AND EXISTS (
             SELECT 1 FROM events WHERE run_id = NEW.run_id AND event_id = NEW.event_id))
       BEGIN SELECT RAISE(ABORT, 'events is append-only: REPLACE is not allowed'); END""",
]


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        # batch mode copies the table; its triggers go with the old copy and are made again
        with op.batch_alter_table("events", recreate="always") as batch:
            batch.drop_constraint("uq_events_event_id", type_="unique")
            batch.create_unique_constraint("uq_events_run_id_event_id", ["run_id", "event_id"])
        for ddl in SQLITE_TRIGGERS:
            op.execute(ddl)
        return
    op.drop_constraint("uq_events_event_id", "events", type_="unique")
    op.create_unique_constraint("uq_events_run_id_event_id", "events", ["run_id", "event_id"])


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS events_no_replace")
        with op.batch_alter_table("events", recreate="always") as batch:
            batch.drop_constraint("uq_events_run_id_event_id", type_="unique")
            batch.create_unique_constraint("uq_events_event_id", ["event_id"])
        for ddl in SQLITE_TRIGGERS[:2]:
            op.execute(ddl)
        return
    op.drop_constraint("uq_events_run_id_event_id", "events", type_="unique")
    op.create_unique_constraint("uq_events_event_id", "events", ["event_id"])
