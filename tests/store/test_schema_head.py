"""The revision the code checks without alembic is alembic's head, and a database's stored
revision reads the same both ways."""

from __future__ import annotations

import sqlalchemy as sa

from tracelake.store import Store, migrate
from tracelake.store.schema_head import HEAD_REVISION, VERSION_TABLE, stored_revision


def test_head_revision_is_alembics_head() -> None:
    assert migrate.head_revision() == HEAD_REVISION, (
        "a migration was added: set tracelake.store.schema_head.HEAD_REVISION to its revision"
    )


def test_stored_revision_reads_as_alembic_reads_it(store: Store) -> None:
    engine = store._engine
    assert stored_revision(engine) == migrate.current_revision(engine) == HEAD_REVISION
    with engine.begin() as conn:
        conn.execute(sa.text(f"UPDATE {VERSION_TABLE} SET version_num = '0007'"))
    assert stored_revision(engine) == migrate.current_revision(engine) == "0007"
    with engine.begin() as conn:
        conn.execute(sa.text(f"DELETE FROM {VERSION_TABLE}"))
    assert stored_revision(engine) is None and migrate.current_revision(engine) is None
    with engine.begin() as conn:
        conn.execute(sa.text(f"DROP TABLE {VERSION_TABLE}"))
    assert stored_revision(engine) is None and migrate.current_revision(engine) is None


def test_a_null_stamp_reads_as_no_revision(store: Store) -> None:
    engine = store._engine
    with engine.begin() as conn:
        conn.execute(sa.text(f"DROP TABLE {VERSION_TABLE}"))
        conn.execute(sa.text(f"CREATE TABLE {VERSION_TABLE} (version_num VARCHAR(32))"))
        conn.execute(sa.text(f"INSERT INTO {VERSION_TABLE} VALUES (NULL)"))
    assert stored_revision(engine) is None and migrate.current_revision(engine) is None
