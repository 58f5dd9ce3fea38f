"""Worker processes for ``ingest``: lines go out in chunks, results come back in order.

Parsing and scrubbing are CPU-bound Python, so threads would share one core; worker
processes use all of them. The main process reads the input in chunks of whole lines (one
bytes object each, :class:`~tracelake.ingest.lines.Chunk`: the worker splits it), hands them
to the pool, and takes the results back **in submission order** (a bounded window of chunks
in flight), so run identity, numbering and appends see exactly the order a serial ingest
sees: the order is kept per run because it is kept for the whole input. Memory stays bounded
by the window.

On Linux the workers are forked from this process once its scrubber's engine is built (the
first chunks of an input not known to be large are prepared here meanwhile), so they start
in milliseconds with warm caches instead of each importing everything and building the
engine again (~3 s of CPU apiece, ~8 s in all, 80 us a line of a 100,000-line ingest). A
forked child never touches a database connection
it inherited: the subject secrets' registry is emptied in the child (keeping the parent's
connections referenced, never closed) and the scrubber's module locks are renewed
(:mod:`tracelake.forksafe`); the store's engine is only ever used here. Elsewhere (macOS,
Windows) workers are spawned. Pools are kept for the life of the process.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import sys
import threading
import warnings
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from tracelake import collector
from tracelake.errors import TracelakeError
from tracelake.ingest.lines import Chunk
from tracelake.ingest.prepare import Preparer, Ready, Rejected

Config = tuple[bytes, int, int]  # pseudonym key, max line bytes, max depth
_PREPARERS: dict[tuple[str, Config], Preparer] = {}
_POOLS: dict[int, ProcessPoolExecutor] = {}  # at most one, by worker count


START_METHOD = "fork" if sys.platform.startswith("linux") else "spawn"


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


def _init(parent: int | None = None) -> None:
    """Die with *parent* (:func:`_die_with`), build the process-wide detection engine before
    the first task arrives, then take
    everything alive now (what the fork inherited: modules, the engine, its caches) out of
    the garbage collector's reach (CPython's ``gc.freeze`` documentation, for a process
    that forks without exec): full collections no longer traverse those long-lived objects,
    nor write to them and so copy the parent's pages into the child. Small in CPU (a 100k-line
    ingest: 0.19-0.20 s of collections per worker -> 0.06-0.10 s); only this worker process
    is affected. Young objects are collected less often too (:mod:`tracelake.collector`).
    """
    import signal

    from tracelake.scrub import Scrubber

    # Ctrl-C, and a supervisor's SIGTERM, reach the whole process group: the parent stops the
    # ingest and says what was stored. A worker must not die of them first: one that died in
    # the middle of sending a result left the pool's manager thread waiting for the rest of
    # it for good, and the parent with it (a fault attack: `timeout 2 tracelake ingest` hung
    # in 9 of 14 runs). Workers die with their parent (_die_with), or when their queue closes.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if parent is not None:
        _die_with(parent)
    Scrubber(b"engine warm-up only, no pseudonyms").warm_up()
    collector.settle()


_PR_SET_PDEATHSIG = 1


def _die_with(parent: int) -> None:
    """Linux: this worker is killed when the process that forked it dies. An ``ingest`` killed
    (SIGKILL, or SIGTERM, which runs no exit handler) left its workers running as orphans,
    and through the socket they inherited they held its database connection open, idle in
    its transaction with the append's advisory lock: the next ``ingest`` waited for that
    lock for good (found by a fault attack). Elsewhere (spawned workers hold no inherited
    connection) nothing is done."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # no prctl: the orphan case stays as it was
        return
    if os.getppid() != parent:  # the parent died before the call: nothing would kill us
        os._exit(1)


# A NamedTuple pickles through its Python-level __new__ (about 3 us each way for Ready's
# twenty fields): results travel as plain tuples and become Ready again through the C-level
# tuple.__new__.
Sent = list[tuple[object, ...] | Rejected]
_new_tuple = tuple.__new__


def _sent(results: list[Ready | Rejected]) -> Sent:
    return [tuple(r) if type(r) is Ready else r for r in results]


def _received(results: Sent) -> list[Ready | Rejected]:
    return [_new_tuple(Ready, r) if type(r) is tuple else r for r in results]  # type: ignore[misc]


def _work(origin: str, config: Config, chunk: Chunk) -> Sent:
    preparer = _PREPARERS.get((origin, config))
    if preparer is None:
        from tracelake.scrub import get_scrubber

        key, max_bytes, max_depth = config
        if len(_PREPARERS) > 64:
            _PREPARERS.clear()
        preparer = _PREPARERS[(origin, config)] = Preparer(
            get_scrubber(key), key, origin, max_bytes, max_depth
        )
    return _sent(preparer.prepare(chunk.lines(config[1])))


def pool(workers: int) -> ProcessPoolExecutor:
    """The started pool of *workers* processes (kept and reused until the process exits;
    one pool at a time: asking for another size replaces it)."""
    found = _POOLS.get(workers)
    if found is None:
        shutdown_pools()
        # The death signal follows the thread that forked the workers: only a pool made by
        # the main thread (the CLI's) asks for it, or a worker would die with a thread that
        # ends before the pool does.
        main = threading.current_thread() is threading.main_thread()
        found = _POOLS[workers] = ProcessPoolExecutor(
            workers,
            mp_context=_KillingContext(),
            initializer=_init,
            initargs=(os.getpid() if main and START_METHOD == "fork" else None,),
        )
        with warnings.catch_warnings():
            # Python 3.12+ warns about forking a process with threads (a subject-secret
            # watchdog may run here); what a child inherits is made safe, see above
            warnings.simplefilter("ignore", DeprecationWarning)
            _widen_pipes(found)
            found.submit(_init).result()  # forks every worker now (all at once, for fork)
    return found


_PIPE_BYTES = 1 << 20  # Linux's default pipe-max-size: a whole chunk, or its results, at once


def _widen_pipes(executor: ProcessPoolExecutor) -> None:
    """Linux: the pool's two pipes hold a whole chunk (~250 KB of lines) or its results.

    A pipe holds 64 KB by default, so a chunk went through in pieces: the queue's feeder
    thread here wrote a piece, then waited for the GIL (up to the 5 ms switch interval, while
    this process's main thread builds rows) to write the next, and the worker waited for it.
    Measured on a 100k-line ingest (2 cores): a worker spent 0.63 s between chunks per 200
    chunks, 0.13 s of it on CPU; with these pipes 0.26 s, and the machine's idle time fell
    from 16-18% to 12%. The pools' queues are CPython's own; where they are not found, or the
    kernel refuses the size (a user over its pipe quota), the pipes stay as they are."""
    try:
        import fcntl
    except ImportError:  # Windows
        return
    setpipe = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setpipe is None:  # not Linux
        return
    size = pipe_bytes()
    for name in ("_call_queue", "_result_queue"):
        writer = getattr(getattr(executor, name, None), "_writer", None)
        if writer is None:
            continue
        try:
            fcntl.fcntl(writer.fileno(), setpipe, size)
        except (OSError, ValueError):
            continue


def pipe_bytes() -> int:
    """The size asked for the pool's pipes: 1 MiB, or the system's limit for an unprivileged
    pipe when that is lower (``/proc/sys/fs/pipe-max-size``; above it the kernel refuses)."""
    try:
        with open("/proc/sys/fs/pipe-max-size", "rb") as limit:
            return min(_PIPE_BYTES, int(limit.read()))
    except (OSError, ValueError):
        return _PIPE_BYTES


_BASE_CONTEXT = multiprocessing.get_context(START_METHOD)


class _KillingProcess(_BASE_CONTEXT.Process):  # type: ignore[name-defined,misc]
    """A worker whose ``terminate()`` is ``kill()``.

    The workers ignore SIGTERM (see :func:`_init`), but the executor ends the workers of a
    broken pool (one died, killed or out of memory) with ``terminate()`` and then joins them:
    with SIGTERM ignored, that join waited for good (CI hung in the worker-fault tests).
    SIGKILL cannot be ignored, and a worker has nothing to save. Defined at module level: a
    spawned worker's process object is pickled by reference."""

    def terminate(self) -> None:
        self.kill()


class _KillingContext(type(_BASE_CONTEXT)):  # type: ignore[misc]
    Process = _KillingProcess


def started(workers: int) -> bool:
    """Whether a pool of *workers* processes is running (then no line waits for it)."""
    return workers in _POOLS


def shutdown_pools() -> None:
    while _POOLS:
        _, executor = _POOLS.popitem()
        executor.shutdown(wait=True, cancel_futures=True)


atexit.register(shutdown_pools)


def prepare_ordered(
    executor: ProcessPoolExecutor,
    origin: str,
    config: Config,
    chunks: Iterable[Chunk],
    window: int,
) -> Iterator[list[Ready | Rejected]]:
    """Results of every chunk, in input order, with at most *window* chunks in flight.

    A worker that dies (killed, out of memory) breaks the pool: the pool is discarded and
    :class:`~tracelake.errors.TracelakeError` says what to do. Everything appended before is
    stored, and ingest is idempotent, so running it again completes the input exactly once.
    """
    flight: deque[Future[Sent]] = deque()
    try:
        for chunk in chunks:
            flight.append(executor.submit(_work, origin, config, chunk))
            if len(flight) >= window:
                yield _received(flight.popleft().result())
        while flight:
            yield _received(flight.popleft().result())
    except BrokenProcessPool:
        for size, found in list(_POOLS.items()):
            if found is executor:
                del _POOLS[size]
        executor.shutdown(wait=False, cancel_futures=True)
        raise TracelakeError(
            "an ingest worker process died (killed or out of memory); the events appended "
            "before it are stored. Run the same ingest again: it appends only what is missing "
            "(set TRACELAKE_INGEST_WORKERS=1 to prepare lines in the main process)."
        ) from None
    finally:
        for future in flight:
            future.cancel()
