from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from tests.sink.private_pg import PrivatePostgres, started_server


@pytest.fixture(scope="module")
def private_pg() -> Iterator[PrivatePostgres]:
    """A server of the test's own, started and stopped by the fault tests."""
    yield from started_server()


@pytest.fixture
def fresh_db(private_pg: PrivatePostgres) -> str:
    """A new migrated database on the private server (the server itself may be stopped later)."""
    import time

    name = f"sink_{time.time_ns()}"
    private_pg.execute(f"CREATE DATABASE {name}")
    url = sa.make_url(private_pg.url).set(database=name).render_as_string(hide_password=False)
    from tracelake.store import migrate
    from tracelake.store.connection import create_engine

    engine = create_engine(url, poolclass=sa.NullPool)
    migrate.upgrade(engine)
    engine.dispose()
    return url
