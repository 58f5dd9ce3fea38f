"""Alembic environment for tracelake (SQLite and PostgreSQL).

Run through ``tracelake db upgrade`` (or ``alembic`` with ``-x url=...``). A caller may hand
over an open connection in ``config.attributes["connection"]`` (the tests do).
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from tracelake.store.connection import create_engine
from tracelake.store.migrate import compare_type
from tracelake.store.schema import metadata

config = context.config


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=compare_type,
        transaction_per_migration=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = context.get_x_argument(as_dictionary=True).get("url") or config.get_main_option(
        "sqlalchemy.url"
    )
    if not url:
        raise SystemExit("no database URL: pass -x url=... or use `tracelake db upgrade`")
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            _run(conn)
    finally:
        engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline (--sql) mode is not supported; run against a database")
run_migrations_online()
