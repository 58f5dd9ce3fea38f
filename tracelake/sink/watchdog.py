"""Ending database calls that hang: a server that stopped answering (SIGSTOP, a frozen VM)
ignores its own statement timeouts, and the kernel still answers TCP keepalives for it, so
the only way out of such a call is to interrupt its connection from another thread (how, per
driver, is the store's: ``store.interrupt``)."""

from __future__ import annotations

import threading
import time
from typing import Any

from tracelake.store import Store
from tracelake.store.interrupt import interrupt_connections


class Watchdog:
    """Shuts a store's connections down when no progress was reported for ``timeout``."""

    def __init__(self, store: Store, timeout: float) -> None:
        self.timeout = timeout
        self.conns: dict[int, Any] = {}
        self.last = time.monotonic()
        self.fired = False
        self._done = threading.Event()
        store.on_pool("connect", lambda c, _r: self.conns.__setitem__(id(c), c))
        store.on_pool("close", lambda c, _r: self.conns.pop(id(c), None))

    def tick(self) -> None:
        self.last = time.monotonic()

    def watch(self) -> None:
        while not self._done.wait(min(1.0, self.timeout / 4)):
            if time.monotonic() - self.last > self.timeout:
                self.fired = True
                interrupt_connections(self.conns)
                self.last = time.monotonic()

    def stop(self) -> None:
        self._done.set()
