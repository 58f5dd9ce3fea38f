"""SIGTERM (how docker, systemd and Kubernetes stop a service): flush, then behave as before.

Python's default SIGTERM kills the process without running ``atexit``, so the sink's queue
would be lost. The sink installs one handler (from the main thread, once per process) that
closes every live sink (the queue goes to the spool; the database gets what it takes within
``term_timeout``), then hands the signal on: to the handler that was installed before (chained,
never swallowed), or, if that was the default, by restoring the default and re-raising it, so
the process still dies of SIGTERM with the exit status its supervisor expects. A process that
ignored SIGTERM keeps ignoring it (after the flush).
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

log = logging.getLogger("tracelake.sink")

_installed = False
_previous: Any = signal.SIG_DFL
_closers: list[Callable[[], None]] = []


def install(close_all: Callable[[], None]) -> bool:
    """Install the SIGTERM handler once; False when it cannot be (not the main thread)."""
    global _installed, _previous
    if _installed:
        return True
    if threading.current_thread() is not threading.main_thread():
        log.info("tracelake sink: not in the main thread; SIGTERM is not intercepted")
        return False
    try:
        _previous = signal.getsignal(signal.SIGTERM)
        signal.signal(signal.SIGTERM, _on_sigterm)
    except (ValueError, OSError):  # embedded interpreters without signals
        return False
    _closers.append(close_all)
    _installed = True
    return True


# Set while a sink closes on this process's main thread (an exit hook, a multiprocessing
# worker's finalizer): SIGTERM arriving then (Pool.terminate() right after the workers' own
# exit began) must not cut that close short; the close hands the signal on when it is done.
closing_here = threading.local()
_deferred: list[tuple[int, FrameType | None]] = []


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    if getattr(closing_here, "depth", 0):
        _deferred.append((signum, frame))
        return
    for close in list(_closers):
        try:
            close()
        except Exception:
            log.exception("tracelake sink: flushing on SIGTERM failed")
    _hand_on(signum, frame)


def after_close() -> None:
    """Called when a close ends: a SIGTERM that arrived during it is handed on now."""
    if _deferred and not getattr(closing_here, "depth", 0):
        signum, frame = _deferred.pop()
        _deferred.clear()
        _on_sigterm(signum, frame)  # closes whatever else is open, then as before


# Signals the sink's threads never take. The kernel hands a process-directed signal (kill,
# Pool.terminate()) to any thread that does not block it, and Python runs the handler only
# on the main thread, once that thread runs bytecode again: taken by a sink thread, SIGTERM
# did not interrupt a main thread blocked without a timeout (a pool worker waiting for the
# task-queue lock its terminating parent holds for good), and the worker never exited.
# Blocked in the sink's threads, the signal goes to the main thread, whose wait it interrupts.
_MAIN_THREAD_ONLY = {
    getattr(signal, name)
    for name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")
    if hasattr(signal, name)
}


def start_thread(thread: threading.Thread) -> None:
    """Start one of the sink's threads with those signals blocked in it (a new thread gets
    the mask of the thread that starts it; so do the threads it starts in turn)."""
    if not hasattr(signal, "pthread_sigmask"):  # Windows: no per-thread signal masks
        thread.start()
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _MAIN_THREAD_ONLY)
    try:
        thread.start()
    finally:  # one that arrived meanwhile stayed pending: it is delivered now
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _hand_on(signum: int, frame: FrameType | None) -> None:
    previous = _previous
    if callable(previous):
        previous(signum, frame)
    elif previous == signal.SIG_IGN:
        return
    else:  # SIG_DFL (or unknown, installed from C): die of SIGTERM as before
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
