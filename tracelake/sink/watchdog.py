"""Ending database calls that hang: a server that stopped answering (SIGSTOP, a frozen VM)
ignores its own statement timeouts, and the kernel still answers TCP keepalives for it, so
the only way out of such a call is to interrupt its connection from another thread (how, per
driver, is the store's: ``Store.interrupt``)."""

from __future__ import annotations

import threading
import time

from tracelake.store import Store


class Watchdog:
    """Shuts a store's connections down when no progress was reported for ``timeout``."""

    def __init__(self, store: Store, timeout: float) -> None:
        self.store = store
        self.timeout = timeout
        self.last = time.monotonic()
        self.fired = False
        self._done = threading.Event()

    def tick(self) -> None:
        self.last = time.monotonic()

    def watch(self) -> None:
        while not self._done.wait(min(1.0, self.timeout / 4)):
            if time.monotonic() - self.last > self.timeout:
                self.fired = True
                self.store.interrupt()
                self.last = time.monotonic()

    def stop(self) -> None:
        self._done.set()
