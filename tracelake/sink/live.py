"""The process's open sinks: closed (flushed) at interpreter exit and on SIGTERM, and started
afresh in a forked child."""

from __future__ import annotations

import atexit
import logging
import os
import sys
from typing import TYPE_CHECKING

from tracelake.sink import signals

if TYPE_CHECKING:
    from tracelake.sink.sink import TraceSink

log = logging.getLogger("tracelake.sink")

# True in the sink's scrubber process (set by tracelake.sink.scrub_worker before it loads any
# event): a sink the runner's modules make there stays inert.
IN_SCRUBBER = False

# Strong references: a sink the application dropped without close() must still be flushed at
# exit (its writer thread is a daemon and would be killed with its queue).
SINKS: set[TraceSink] = set()


def register(sink: TraceSink) -> None:
    """A new sink: closed at exit. In a multiprocessing worker (which leaves through
    ``os._exit`` under fork and forkserver: no atexit), through multiprocessing's exit hook."""
    SINKS.add(sink)
    mp = sys.modules.get("multiprocessing")
    if mp is not None and mp.parent_process() is not None:
        _close_at_worker_exit(sink)


def close_all_on_sigterm() -> None:
    for sink in list(SINKS):
        sink.close(timeout=5.0)  # the spool first, then at most 5 s for the database


@atexit.register
def close_all() -> None:  # interpreter exit: flush with a bounded timeout
    for sink in list(SINKS):
        try:
            sink.close(timeout=10.0)
        except Exception:
            log.exception("tracelake sink: close at exit failed; the spool keeps what was left")


# What a forked child inherited from its parent's sinks: kept referenced and never used or
# closed here (closing a database connection, a spool lock or a pipe in the child would end
# the parent's; dropping them would close them on garbage collection).
_inherited: list[object] = []


def _start_afresh_in_child() -> None:
    """After ``fork()`` (gunicorn ``--preload``, multiprocessing's ``fork``): the child has the
    sinks' objects but none of their threads, and their queues hold the parent's events (the
    parent stores those). Each sink starts again here as it was created: a new database
    connection, its own spool owner folder, new threads and scrubber process; the inherited
    pipes to the parent's scrubber process are detached so that process still sees its input
    end when the parent exits. A multiprocessing worker, which leaves through ``os._exit``
    (no atexit), closes its sinks through multiprocessing's own exit hook.

    A SIGTERM arriving meanwhile (``Pool.terminate()`` while a worker still starts) waits
    until the sinks have started: closing one that still holds its parent's objects took the
    parent's handoff lock, held for good when a thread of the parent's held it at fork."""
    signals.closing_here.depth = getattr(signals.closing_here, "depth", 0) + 1
    try:
        _restart_sinks()
    finally:
        signals.closing_here.depth -= 1
        signals.after_close()


def _restart_sinks() -> None:
    for sink in list(SINKS):
        try:
            _inherited.append(sink.__dict__.copy())
            if sink._writer.offload is not None:
                sink._writer.offload.detach()
            sink.__init__(**sink._args)  # type: ignore[misc]
        except Exception:
            log.exception("tracelake sink: could not start the sink again after fork()")
    mp_util = sys.modules.get("multiprocessing.util")
    if mp_util is not None:  # (a worker clears its exit hooks after this: register after it)
        for sink in SINKS:
            mp_util.register_after_fork(sink, _close_at_worker_exit)


def _close_at_worker_exit(sink: TraceSink) -> None:
    import multiprocessing.util

    multiprocessing.util.Finalize(sink, sink.close, kwargs={"timeout": 10.0}, exitpriority=100)


os.register_at_fork(after_in_child=_start_afresh_in_child)
