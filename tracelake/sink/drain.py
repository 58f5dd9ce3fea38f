"""``tracelake spool drain``: replay what sinks that are gone left in the spool.

Every database call is bounded like the sink's (connect, statement and lock timeouts, TCP
keepalives), and a watchdog shuts the connection down when one call overruns ``timeout``
(a server that stopped answering ignores its own timeouts): the drain then fails with the
store's error instead of hanging, and what it did not append stays in the spool.
"""

from __future__ import annotations

import threading
from pathlib import Path

from tracelake.sink.spool import Spool
from tracelake.sink.watchdog import Watchdog
from tracelake.sink.writer import Replayed, replay


def drain(database_url: str, spool_dir: Path, *, timeout: float = 30.0) -> Replayed:
    """Replay the spool at ``spool_dir`` into the database; no call waits beyond ``timeout``."""
    from tracelake.store import open_store
    from tracelake.wiring import ensure_schema

    store = open_store(database_url, bounded=timeout)
    dog = Watchdog(store, timeout)
    thread = threading.Thread(target=dog.watch, name="tracelake-drain-watchdog", daemon=True)
    thread.start()
    try:
        ensure_schema(store)
        dog.tick()
        return replay(Spool(spool_dir), store, progress=dog.tick)
    finally:
        dog.stop()
        store.dispose()
