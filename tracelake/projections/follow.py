"""``tracelake project --follow``: keep the projections caught up as events arrive.

The follower is a loop around :meth:`ProjectionEngine.catch_up` — the same checkpoints, the
same one-transaction-per-batch rule, nothing of its own is written — plus two things:

* **Waking up.** When the store notifies (PostgreSQL: ``LISTEN``/``NOTIFY``, see
  ``store.leadership``), the wake-up arrives when appended events are committed (and visible).
  The leader listens *before* the first catch-up, so nothing that commits between a catch-up
  and the next wait is missed; a slow poll still runs as a safety net (events written by an
  older client that does not notify). Otherwise (SQLite) the follower polls ``max(position)``
  — a read that never takes the write lock — and runs a catch-up only when the log has moved
  past the lowest checkpoint.
* **One leader.** Two followers (``serve`` and a ``project --follow``, two replicas) would both
  wait on the checkpoint rows and re-read every batch. Only the holder of the store's
  leadership (:meth:`Store.lead`: an advisory lock on PostgreSQL, ``flock`` beside the SQLite
  file, both released when the process dies) works; the others stand by and retry every
  ``standby_interval`` seconds. Even without the lock the engine's row locks would keep two
  projectors from applying a batch twice; the lock only avoids the duplicate work.

Errors (database down, a restart) arrive translated by the store (``tracelake.errors``), are
logged and retried with backoff; the loop only ends when its ``stop`` event is set.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from tracelake.projections.runner import ProjectionEngine
from tracelake.store import Leadership, Store

log = logging.getLogger("tracelake.follow")

MAX_BACKOFF = 30.0


@dataclass
class FollowerState:
    """What the follower did; read by ``/metrics`` and the CLI (plain fields, one writer)."""

    leader: bool = False
    catch_ups: int = 0
    events: int = 0
    errors: int = 0
    last_error: str | None = None
    last_catch_up_at: float | None = None
    positions: dict[str, int] = field(default_factory=dict)


class _Waiter(Protocol):
    def wait(self, timeout: float) -> str | None:
        """Block up to ``timeout`` seconds: ``"notified"`` (new events committed), ``"poll"``
        (time to look whether the log moved) or None."""

    def close(self) -> None: ...


class Follower:
    def __init__(
        self,
        store: Store,
        names: Sequence[str] | None = None,
        *,
        poll_interval: float = 0.25,
        notify_fallback: float = 10.0,
        standby_interval: float = 5.0,
        engine: ProjectionEngine | None = None,
    ) -> None:
        self.store = store
        self.engine = engine or ProjectionEngine(store)
        self.names = list(names) if names else None
        self.engine.select(self.names)  # an unknown name fails now, not in the loop
        self.poll_interval = poll_interval
        self.notify_fallback = notify_fallback
        self.standby_interval = standby_interval
        self.state = FollowerState()

    # -- the loop --------------------------------------------------------------------------
    def run(self, stop: threading.Event, on_catch_up: Any = None) -> None:
        """Follow until ``stop`` is set. ``on_catch_up(result)`` after each catch-up that read
        events (the CLI prints them)."""
        backoff = 1.0
        while not stop.is_set():
            try:
                with self.store.lead("follow the log") as leading:
                    self.state.leader = leading is not None
                    if leading is None:
                        stop.wait(self.standby_interval)
                        continue
                    self._lead(leading, stop, on_catch_up)
                backoff = 1.0
            except Exception as exc:  # noqa: BLE001 - a follower outlives database outages
                self.state.errors += 1
                self.state.last_error = f"{type(exc).__name__}: {exc}"
                log.warning("follower: %s; retrying in %.0f s", self.state.last_error, backoff)
                stop.wait(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF)
            finally:
                self.state.leader = False

    def _lead(self, leading: Leadership, stop: threading.Event, on_catch_up: Any) -> None:
        waiter = self._open_waiter(leading)
        try:
            self.catch_up(on_catch_up)  # after LISTEN: nothing committed from now on is missed
            while not stop.is_set():
                why = waiter.wait(0.5)
                if stop.is_set():
                    return
                if why == "notified" or (why == "poll" and self._behind()):
                    self.catch_up(on_catch_up)
        finally:
            waiter.close()

    def catch_up(self, on_catch_up: Any = None) -> int:
        result = self.engine.catch_up(self.names)
        self.state.catch_ups += 1
        self.state.events += result.events
        self.state.positions = dict(result.positions)
        self.state.last_catch_up_at = time.time()
        if result.events and on_catch_up is not None:
            on_catch_up(result)
        return result.events

    def _behind(self) -> bool:
        """Poll: has the log moved past the lowest checkpoint? (a read; no write lock)."""
        low = min(self.state.positions.values(), default=0)
        return self.store.max_position() > low

    # -- leadership (the lock and the wake-up are the store's: ``store.leadership``) ----------
    def _open_waiter(self, leading: Leadership) -> _Waiter:
        if leading.notifies:
            return _NotifyWaiter(leading, self.notify_fallback)
        return _PollWaiter(self.poll_interval)


class _PollWaiter:
    """SQLite: sleep a poll interval; the caller then checks ``max(position)``."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._next = time.monotonic() + interval

    def wait(self, timeout: float) -> str | None:
        left = self._next - time.monotonic()
        if left > 0:
            time.sleep(min(left, timeout))
        if time.monotonic() < self._next:
            return None
        self._next = time.monotonic() + self.interval
        return "poll"

    def close(self) -> None:
        return None


class _NotifyWaiter:
    """PostgreSQL: listen on the leader's connection and wait for an append's notification."""

    def __init__(self, leading: Leadership, fallback: float) -> None:
        self.leading = leading
        self.fallback = fallback
        self._last = time.monotonic()
        leading.listen()

    def wait(self, timeout: float) -> str | None:
        if self.leading.wait(timeout):
            self._last = time.monotonic()
            return "notified"
        if time.monotonic() - self._last >= self.fallback:
            self._last = time.monotonic()
            return "poll"  # the safety net: look anyway now and then
        return None

    def close(self) -> None:
        self.leading.unlisten()


def start_thread(follower: Follower, stop: threading.Event) -> threading.Thread:
    """Run a follower on a daemon thread (``serve`` does this unless ``--no-follow``)."""
    thread = threading.Thread(
        target=follower.run, args=(stop,), name="tracelake-follow", daemon=True
    )
    thread.start()
    return thread
