"""``Store.interrupt``: ending a hung call from another thread, with the connections the store
has known since it was opened (``store.interrupt``).

Found by CI: ingest's call guard used to empty the pool when it started so that it would see
every connection opened afterwards. On a store shared with a follower thread (``serve``), the
connection that thread had checked out went back to a discarded pool and was dropped unclosed.
"""

from __future__ import annotations

import gc
import os
import random
import threading
import time
import warnings

import pytest
import sqlalchemy as sa

from tests.ingest.helpers import gtc_runs, ingest_bytes, jsonl
from tracelake.errors import TracelakeError
from tracelake.store import Store


def _backend_pid(conn: sa.Connection) -> int:
    return int(conn.execute(sa.text("SELECT pg_backend_pid()")).scalar_one())


def test_an_ingest_leaves_a_connection_another_thread_holds_alone(store: Store) -> None:
    data = b"".join(jsonl(run) for run in gtc_runs(f"shared-{random.random()}"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with store.reading("held by a follower") as held:
            held.execute(sa.text("SELECT 1")).all()
            report = ingest_bytes(store, data)  # its call guard starts and ends meanwhile
            held.execute(sa.text("SELECT 1")).all()  # the same connection, still usable
        del held
        gc.collect()
    assert report.appended > 0
    dropped = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert dropped == [], dropped


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_interrupt_ends_a_call_on_a_connection_opened_before_anyone_watched(store: Store) -> None:
    with store.reading() as conn:  # opened and pooled before the call below
        first = _backend_pid(conn)
    outcome: dict[str, object] = {}

    def sleep_long() -> None:
        started = time.monotonic()
        try:
            with store.reading("sleep") as conn:
                outcome["pid"] = _backend_pid(conn)
                conn.execute(sa.text("SELECT pg_sleep(60)"))
        except TracelakeError as exc:
            outcome["error"] = exc
        outcome["seconds"] = time.monotonic() - started

    thread = threading.Thread(target=sleep_long)
    thread.start()
    deadline = time.monotonic() + 30
    while "pid" not in outcome and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # inside pg_sleep
    store.interrupt()
    thread.join(30)
    assert outcome.get("pid") == first  # the pooled connection was the one reused
    assert isinstance(outcome.get("error"), TracelakeError), outcome
    assert float(outcome["seconds"]) < 30  # type: ignore[arg-type]
    with store.reading() as conn:  # the pool replaced the connection it lost
        assert conn.execute(sa.text("SELECT 1")).scalar_one() == 1


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_a_forked_child_never_shuts_its_parents_connections(store: Store) -> None:
    with store.reading() as conn:
        before = _backend_pid(conn)
        pid = os.fork()
        if pid == 0:  # the child: interrupt must not touch the parent's sockets
            try:
                store.interrupt()
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        assert _backend_pid(conn) == before  # still the same, working connection
