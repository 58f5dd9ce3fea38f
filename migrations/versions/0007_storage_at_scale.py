"""Storage at scale: interned redaction sites, only the indexes queries use, compressed rows.

* ``redaction_sites`` interns the (field path, entity) pairs of redaction reports; events
  store ``{"s": {site id: count}, "a": {action: count}}`` (see ``tracelake.store.redactions``).
  Reports stored before this revision keep their old form; readers accept both.
* ``ix_events_type_position`` and ``ix_events_collection_id_position`` are dropped: no query
  reads the log by type or collection (pollers, projections and exports read by position,
  ``runs show`` and the appender by run), and each cost ~40 bytes and a write per event.
* PostgreSQL: rows longer than 256 bytes have their payload and redactions compressed in line
  (``toast_tuple_target``; lz4 where the server has it). Scrubbed payloads are 0.5-1 KB, under
  the default 2 KB threshold, so before this they were stored uncompressed.

Revision ID: 0007
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# lz4 needs a server built with it (PostgreSQL 14+); otherwise pglz (the default) is used.
_LZ4 = """
DO $$
BEGIN
    ALTER TABLE events ALTER COLUMN payload SET COMPRESSION lz4;
    ALTER TABLE events ALTER COLUMN redactions SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value OR syntax_error THEN
    NULL;
END $$;
"""


def upgrade() -> None:
    op.create_table(
        "redaction_sites",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("entity", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_redaction_sites"),
        sa.UniqueConstraint("path", "entity", name="uq_redaction_sites_path_entity"),
    )
    op.execute("DROP INDEX IF EXISTS ix_events_type_position")
    op.execute("DROP INDEX IF EXISTS ix_events_collection_id_position")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE events SET (toast_tuple_target = 256)")
        op.execute(_LZ4)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE events RESET (toast_tuple_target)")
    op.create_index("ix_events_collection_id_position", "events", ["collection_id", "position"])
    op.create_index("ix_events_type_position", "events", ["type", "position"])
    op.drop_table("redaction_sites")
