from __future__ import annotations

from collections.abc import Iterator

import pytest

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
