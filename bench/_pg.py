"""A scratch PostgreSQL database for a benchmark run (created and dropped by the benchmark)."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator

import sqlalchemy as sa

from tracelake.store import migrate
from tracelake.store.connection import create_engine

ADMIN_URL = os.environ.get(
    "TRACELAKE_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


@contextlib.contextmanager
def scratch_database(prefix: str) -> Iterator[str]:
    admin = create_engine(ADMIN_URL, isolation_level="AUTOCOMMIT", poolclass=sa.NullPool)
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE {name}")
    url = sa.make_url(ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    try:
        engine = create_engine(url, poolclass=sa.NullPool)
        migrate.upgrade(engine)
        engine.dispose()
        yield url
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.dispose()
