"""Storage at scale: interned redaction reports, only the indexes queries use.

* ``redaction_reports`` holds each distinct redaction report once; events store
  ``{"r": <id>}`` (see ``tracelake.store.redactions``). Reports stored before this revision
  keep their inline form; readers accept both.
* ``ix_events_type_position`` and ``ix_events_collection_id_position`` are dropped: no query
  reads the log by type or collection (pollers, projections and exports read by position,
  ``runs show`` and the appender by run), and each cost ~40 bytes and a write per event.
* PostgreSQL: payloads that do reach the TOAST threshold (~2 KB rows) are compressed with lz4
  where the server has it (faster than the default pglz, for reads too).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0007"
down_revision: str | None = "0006"
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
    document = sa.Text().with_variant(postgresql.JSONB(), "postgresql")
    op.create_table(
        "redaction_reports",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("digest", sa.Text(), nullable=False),
        sa.Column("report", document, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_redaction_reports"),
        sa.UniqueConstraint("digest", name="uq_redaction_reports_digest"),
    )
    op.execute("DROP INDEX IF EXISTS ix_events_type_position")
    op.execute("DROP INDEX IF EXISTS ix_events_collection_id_position")
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_LZ4)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_LZ4.replace("lz4", "default"))
    op.create_index("ix_events_collection_id_position", "events", ["collection_id", "position"])
    op.create_index("ix_events_type_position", "events", ["type", "position"])
    op.drop_table("redaction_reports")
