"""``Store.interrupt``: ending a hung call from another thread, with the connections the store
has known since it was opened (``store.interrupt``).

Found by CI: ingest's call guard used to empty the pool when it started so that it would see
every connection opened afterwards. On a store shared with a follower thread (``serve``), the
connection that thread had checked out went back to a discarded pool and was dropped unclosed.
"""

from __future__ import annotations

import contextlib
import gc
import os
import random
import signal
import socket
import threading
import time
import warnings

import pytest
import sqlalchemy as sa

from tests.ingest.helpers import gtc_runs, ingest_bytes, jsonl
from tracelake.errors import TracelakeError
from tracelake.ingest.call_guard import CallGuard, Stopped
from tracelake.store import Store, open_store


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


class _FreezingProxy:
    """A TCP proxy to the test server that answers the login, then never another byte, with
    its sockets open: a client waits as on a server stopped (SIGSTOP) right after login."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = [self.listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            self.sockets += [client, server]
            threading.Thread(target=self._forward, args=(client, server), daemon=True).start()
            threading.Thread(target=self._answer, args=(server, client), daemon=True).start()

    @staticmethod
    def _forward(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)

    @staticmethod
    def _answer(server: socket.socket, client: socket.socket) -> None:
        """Backend messages up to the first ReadyForQuery ('Z'), then nothing."""
        buf = b""
        with contextlib.suppress(OSError):
            while data := server.recv(65536):
                buf += data
                while len(buf) >= 5 and len(buf) >= 1 + int.from_bytes(buf[1:5], "big"):
                    n = 1 + int.from_bytes(buf[1:5], "big")
                    message, buf = buf[:n], buf[n:]
                    client.sendall(message)
                    if message[:1] == b"Z":
                        return  # frozen from here on

    def close(self) -> None:
        for s in self.sockets:
            with contextlib.suppress(OSError):
                s.close()


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_the_guard_ends_a_call_hung_on_the_engines_first_connection(db_url: str) -> None:
    """SQLAlchemy sets a pool's first connection up with about ten queries in its own connect
    listener; the store's registry must know the connection before they run (a fault attack:
    the guard fired, found no connection, and the call waited for good)."""
    url = sa.make_url(db_url)
    proxy = _FreezingProxy((url.host or "127.0.0.1", url.port or 5432))
    frozen = url.set(host="127.0.0.1", port=proxy.port, query={"sslmode": "disable"})
    store = open_store(frozen.render_as_string(hide_password=False))
    guard = CallGuard(store, 1.0)
    seen: list[BaseException] = []

    def ask() -> None:
        try:
            with guard, guard.call():
                store.revision()
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            seen.append(exc)

    thread = threading.Thread(target=ask, daemon=True)
    thread.start()
    thread.join(30)  # a deadline, never a timing assertion: without the fix it waits for good
    try:
        assert not thread.is_alive(), "the guard could not end a call on the first connection"
        assert guard.fired and len(seen) == 1 and isinstance(seen[0], TracelakeError), seen
    finally:
        proxy.close()
        store.dispose()


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_a_stop_inside_a_database_call_ends_it_and_rolls_it_back(store: Store) -> None:
    """``CallGuard.stop`` from a signal handler while a call runs: the call ends at once, its
    transaction is rolled back, and Stopped (not a database error) is what the caller sees."""
    guard = CallGuard(store, 120)
    previous = signal.signal(signal.SIGUSR1, lambda *_: guard.stop(signal.SIGTERM))
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGUSR1))
    started = time.monotonic()
    try:
        with pytest.raises(Stopped) as stopped, guard, guard.call(), store.writing() as conn:
            conn.execute(sa.text("CREATE TABLE stop_probe (x int)"))
            timer.start()
            conn.execute(sa.text("SELECT pg_sleep(30)"))
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR1, previous)
    assert stopped.value.signum == signal.SIGTERM
    assert time.monotonic() - started < 10
    with store.reading() as conn:  # rolled back by the server
        assert conn.execute(sa.text("SELECT to_regclass('stop_probe')")).scalar() is None
