"""Ending a database call of ``ingest`` that hangs: a server that stopped answering (SIGSTOP,
a frozen VM) ignores its own statement timeouts, and the kernel still answers TCP keepalives
for it, so a call on it waits for good (found by a fault attack: an ingest waited 180 s and
more on a stopped server, without a word). When one section of database work
(:meth:`CallGuard.call`) lasts longer than the timeout, every connection of the store is shut
down under it (``Store.interrupt``): the call fails, and the ingest stops with an error that
says what to do.

Only those sections are timed, never the time between them: an ingest reading a slow pipe
waits for its input as long as it takes. The store knows every connection it opened (a
reused connection's liveness check runs before any checkout event, so the guard could not
learn of it itself); the pool is left alone, since other threads (a follower in ``serve``)
may be using it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

from tracelake.errors import StoreUnavailableError
from tracelake.store import Store


@contextlib.contextmanager
def guarded(store: Store, timeout: float) -> Iterator[CallGuard]:
    """A :class:`CallGuard` over the block; a failure after it fired becomes the error that
    says what happened and what to do."""
    with CallGuard(store, timeout) as guard:
        try:
            yield guard
            return
        except Exception:
            if not guard.fired:
                raise
    raise StoreUnavailableError(
        f"a database call did not end within {timeout:g} s (TRACELAKE_DB_CALL_TIMEOUT), so the "
        "ingest stopped (the events it had appended stay stored). Check the database, then run "
        "the same ingest again: it stores only what is missing."
    )


class Stopped(KeyboardInterrupt):
    """The ingest was asked to stop (SIGTERM, Ctrl-C: :meth:`CallGuard.stop`)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class CallGuard:
    """While entered, interrupts a :meth:`call` section on *store* that outlasts *timeout* s."""

    def __init__(self, store: Store, timeout: float) -> None:
        self.store, self.timeout = store, timeout
        self.fired = False
        self.stop_requested: int | None = None
        self._since: float | None = None  # monotonic start of the section running, if any
        self._done = threading.Event()
        self._thread = threading.Thread(
            target=self._watch, name="tracelake-ingest-guard", daemon=True
        )

    def __enter__(self) -> CallGuard:
        if not self.store.url.startswith("postgresql"):
            return self  # SQLite: no server to stop; its waits end with its busy timeout
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._thread.is_alive():
            return
        self._done.set()
        self._thread.join()

    @contextlib.contextmanager
    def call(self) -> Iterator[None]:
        """A section of database work, timed (and where a stop is not raised: :meth:`stop`)."""
        self._since = time.monotonic()
        try:
            yield
        except Exception:
            if self.stop_requested is not None:  # the call failed because it was interrupted
                raise Stopped(self.stop_requested) from None
            raise
        finally:
            self._since = None
        if self.stop_requested is not None:
            raise Stopped(self.stop_requested)

    def stop(self, signum: int) -> None:
        """Stop the ingest (called by a signal handler, on the main thread). Between database
        sections :class:`Stopped` is raised at once. Inside one, an exception raised in the
        middle of a driver call left the connection mid-command: the pool's rollback of it
        failed and its error replaced the stop (a fault attack: exit 2 with a traceback, and
        on a stopped server only after psycopg's 10 s cancel wait). So the section's
        connections are shut down instead: the call fails at once, its transaction is rolled
        back by the server as for any lost client, and the stop is raised as the section ends."""
        self.stop_requested = signum
        if self._since is None:
            raise Stopped(signum)
        self.store.interrupt()

    def _watch(self) -> None:
        while not self._done.wait(min(1.0, self.timeout / 4)):
            since = self._since
            if since is not None and time.monotonic() - since > self.timeout:
                self.fired = True
                self._since = time.monotonic()  # again after as long, if the section goes on
                self.store.interrupt()
