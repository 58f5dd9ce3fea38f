"""The schema revision this code needs, and the revision a database is at, without alembic.

Every command checks the schema before it touches the store (:func:`tracelake.wiring.
ensure_schema`). Asking alembic imports it and reads every migration script: 0.11 s of CPU on
each start of a command, 1% of a 100,000-line ingest. A database at :data:`HEAD_REVISION` is
recognised by one query; anything else goes to alembic for the full answer.
``tests/store/test_schema_head.py`` holds :data:`HEAD_REVISION` to alembic's head.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Engine

HEAD_REVISION = "0011"
VERSION_TABLE = "alembic_version"  # alembic's default, which tracelake's migrations use


def stored_revision(engine: Engine) -> str | None:
    """The revision stamped in the database (None: never migrated), as alembic reads it."""
    with engine.connect() as conn:
        if not sa.inspect(conn).has_table(VERSION_TABLE):
            return None
        rows = conn.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).all()
    if len(rows) > 1:  # more than one head stamped: alembic says which
        from tracelake.store import migrate

        return migrate.current_revision(engine)
    return None if not rows or rows[0][0] is None else str(rows[0][0])
