from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from tests.conftest import REQUIRE_PG
from tests.sink.private_pg import PrivatePostgres


@pytest.fixture(scope="module")
def private_pg() -> Iterator[PrivatePostgres]:
    """A server of the test's own, started and stopped by the fault tests."""
    try:
        server = PrivatePostgres()
        server.start()
        server.migrate()
    except Exception as exc:  # noqa: BLE001 - any failure means "cannot run a private server"
        if REQUIRE_PG:
            pytest.fail(
                f"TRACELAKE_REQUIRE_POSTGRES=1 but a private PostgreSQL could not start: {exc}"
            )
        pytest.skip(f"SKIPPING FAULT TESTS: a private PostgreSQL could not start: {exc}")
    yield server
    server.destroy()


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
