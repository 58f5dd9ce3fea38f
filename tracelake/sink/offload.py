"""The sink's scrubber process, as the writer thread sees it.

The writer submits batches of queued items and collects the prepared spool records **in
submission order**. A batch is pickled when it is submitted, and from then on only its bytes
are kept here, never the runner's objects: a burst that waits for the process holds no object
the runner made, so it costs the runner's garbage collector nothing (a queue of live events made
every full collection of a busy runner walk them: ~100 ms each, more than the sink's whole
cost). A bounded window of batches is in the process at a time; the others wait here as bytes.
When the process dies, hangs (no answer within ``HUNG_AFTER``) or cannot take a batch, those
batches are unpickled and prepared on the writer thread instead, in their place in the order:
nothing is lost and nothing is reordered.

What goes into a batch's pickle is :mod:`tracelake.sink.pickling`'s.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import pickle
import select
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from tracelake.sink.frames import frame, read_frame
from tracelake.sink.pickling import pickle_batch
from tracelake.sink.preparer import Item, Prepared
from tracelake.sink.signals import start_thread
from tracelake.sink.spool import Encoded

log = logging.getLogger("tracelake.sink")

WINDOW = 4  # batches in the process at a time (the others wait here, pickled)
HUNG_AFTER = 10.0  # seconds without the answer to the oldest batch: the process is hung
START_TIMEOUT = 120.0  # seconds to import and warm up the scrubber


@dataclass(slots=True)
class _Batch:
    """A submitted batch as kept here: its pickle (the items themselves only when even their
    snapshots did not pickle), and what is needed to account for it if it cannot be loaded."""

    payload: bytes | None
    items: list[Item] | None
    size: int
    oldest: float
    sent_at: float | None = None
    answer: Prepared | None = None
    answered: bool = False


@dataclass(slots=True)
class Taken:
    """A batch the process did not prepare: ``items`` to prepare on the writer thread, or
    ``None`` when its pickle does not load here either (``why``)."""

    items: list[Item] | None
    size: int
    oldest: float
    why: str = ""


class ScrubProcess:
    def __init__(self, key: bytes, max_depth: int, wake: threading.Event, limit: int) -> None:
        self.max_depth, self._wake, self._limit = max_depth, wake, limit
        root = str(Path(__file__).resolve().parents[2])  # where this tracelake is imported from
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self._proc = subprocess.Popen(
            # -P: the runner's working directory must not come first on the path (a checkout
            # of another tracelake there would be the one imported)
            [sys.executable, "-P", "-m", "tracelake.sink.scrub_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            close_fds=True,
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._stdin, self._stdout = self._proc.stdin, self._proc.stdout
        os.set_blocking(self._stdin.fileno(), False)
        self._lock = threading.Lock()
        self._tickets = itertools.count(1)
        self._order: deque[int] = deque()  # submitted, not yet collected, in order
        self._batches: dict[int, _Batch] = {}
        self._unsent: deque[int] = deque()  # submitted, not yet written to the process
        self._unsent_events = 0
        self._out: memoryview | None = None  # the part of a frame the pipe did not take yet
        self._in_process = 0  # batches written (or being written) and not answered
        self.ready = False
        self.answered = 0  # batches the process prepared
        self.dead: str | None = None  # why, once it is
        self._started = time.monotonic()
        init = (bytes(key), getattr(key, "url", None), max_depth, list(sys.path))
        self._send_all(frame(init), time.monotonic() + 5.0)
        start_thread(threading.Thread(target=self._read, name="tracelake-sink-scrub", daemon=True))

    # -- state -------------------------------------------------------------------------
    @property
    def usable(self) -> bool:
        return self.ready and self.dead is None

    @property
    def outstanding(self) -> bool:
        return bool(self._order)

    @property
    def has_room(self) -> bool:
        """Fewer than ``limit`` events wait here for the process."""
        return self._unsent_events < self._limit

    @property
    def pid(self) -> int:
        return self._proc.pid

    # -- the writer's side -------------------------------------------------------------
    def submit(self, items: list[Item]) -> None:
        """Pickle a batch now (the runner's objects are not kept); :meth:`pump` sends it when
        the window has room (the caller checked ``usable`` and ``has_room``)."""
        payload = pickle_batch(items, self.max_depth)
        batch = _Batch(payload, None if payload is not None else items, len(items), items[0][2])
        ticket = next(self._tickets)
        with self._lock:
            self._order.append(ticket)
            self._batches[ticket] = batch
            if payload is None:
                batch.answered = True
            else:
                self._unsent.append(ticket)
                self._unsent_events += batch.size

    def pump(self) -> None:
        """Write what the pipe takes without waiting: the rest of a frame, then whole batches
        while fewer than ``WINDOW`` are in the process."""
        if self.dead is not None or not self.ready:
            return
        try:
            while True:
                if self._out is None:
                    with self._lock:
                        if not self._unsent or self._in_process >= WINDOW:
                            return
                        ticket = self._unsent.popleft()
                        batch = self._batches[ticket]
                        self._unsent_events -= batch.size
                        batch.sent_at = time.monotonic()
                        self._in_process += 1
                    assert batch.payload is not None
                    self._out = memoryview(frame((ticket, batch.payload)))
                written = os.write(self._stdin.fileno(), self._out)
                self._out = self._out[written:] if written < len(self._out) else None
        except BlockingIOError:
            return  # the pipe is full: the next pump goes on (a hang is found by check())
        except OSError as exc:
            self._die(f"it stopped reading ({type(exc).__name__})")

    def collect(self) -> list[Prepared | Taken]:
        """Answered batches in submission order, each prepared, or taken back (unpickled) to
        prepare on the writer thread; once the process is dead, every batch still here."""
        done: list[_Batch] = []
        with self._lock:
            while self._order:
                batch = self._batches[self._order[0]]
                if not batch.answered and self.dead is None:
                    break
                del self._batches[self._order.popleft()]
                done.append(batch)
            if self.dead is not None:  # every batch was taken back
                self._unsent.clear()
                self._unsent_events = 0
        return [b.answer if b.answer is not None else _take_back(b) for b in done]

    def check(self) -> None:
        """Called by the writer: a process that does not start or does not answer is killed."""
        if self.dead is not None:
            return
        now = time.monotonic()
        if not self.ready and now - self._started > START_TIMEOUT:
            self._die(f"it did not start within {START_TIMEOUT:.0f}s")
            return
        with self._lock:
            oldest = self._batches[self._order[0]] if self._order else None
        if (
            oldest is not None
            and not oldest.answered
            and oldest.sent_at is not None
            and now - oldest.sent_at > HUNG_AFTER
        ):
            self._die(f"it did not answer within {HUNG_AFTER:.0f}s")

    def close(self, timeout: float) -> None:
        with contextlib.suppress(OSError):
            self._stdin.close()  # the process exits at the end of its input
        try:
            self._proc.wait(max(0.0, timeout))
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        with contextlib.suppress(OSError):
            self._stdout.close()

    def detach(self) -> None:
        """In a forked child: this is the parent's process. Point the inherited pipe ends at
        /dev/null (not close: the file objects would close the numbers again, and the stdout
        reader's lock may be held by the parent's reader thread), so the process sees its
        input end when the parent exits, and this side never reads the parent's answers."""
        self.dead = "it belongs to the parent process"
        null = os.open(os.devnull, os.O_RDWR)
        try:
            for fd in (self._stdin.fileno(), self._stdout.fileno()):
                with contextlib.suppress(OSError):
                    os.dup2(null, fd)
        finally:
            os.close(null)

    # -- internals ---------------------------------------------------------------------
    def _send_all(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        fd = self._stdin.fileno()
        while view:
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError from None
                select.select([], [fd], [], min(left, 0.1))

    def _read(self) -> None:
        try:
            while True:
                message = read_frame(self._stdout)
                if message is None:
                    break
                if message[0] == "ready":
                    self.ready = True
                    self._wake.set()
                    continue
                ticket, answer, _error = message
                prepared: Prepared | None = None
                if answer is not None:
                    events, n_events, bad, n_bad, oldest = answer
                    prepared = (
                        Encoded("events", events, n_events),
                        Encoded("quarantine", bad, n_bad),
                        oldest,
                    )
                with self._lock:
                    batch = self._batches.get(ticket)
                    if batch is not None:
                        batch.answer, batch.answered = prepared, True
                        self._in_process -= 1
                        self.answered += prepared is not None
                self._wake.set()
        except Exception:  # noqa: BLE001 - a broken pipe or frame: the process is unusable
            pass
        self._die(f"it exited (code {self._proc.poll()})")

    def _die(self, why: str) -> None:
        if self.dead is not None:
            return
        self.dead = why
        with contextlib.suppress(OSError):
            self._proc.kill()
        self._wake.set()


def _take_back(batch: _Batch) -> Taken:
    if batch.payload is None:
        return Taken(batch.items, batch.size, batch.oldest)
    try:
        items: list[Item] = pickle.loads(batch.payload)
    except Exception as exc:  # noqa: BLE001 - it pickled here but does not load
        return Taken(None, batch.size, batch.oldest, f"{type(exc).__name__} loading its pickle")
    return Taken(items, batch.size, batch.oldest)


def start_scrub_process(
    asked: bool | None, key: bytes, max_depth: int, wake: threading.Event, limit: int
) -> ScrubProcess | None:
    """The sink's scrubber process when it is wanted: ``asked``, or by default only with
    ``TRACELAKE_SINK_SCRUB_PROCESS=1`` (opt-in: on the 2-CPU test machine it made events
    durable ~35% sooner but did not speed the runner's own loop; BENCHMARKS.md)."""
    if asked is None:
        asked = os.environ.get("TRACELAKE_SINK_SCRUB_PROCESS", "").strip() in ("1", "true", "yes")
    if not asked:
        return None
    try:
        return ScrubProcess(key, max_depth, wake, limit)
    except Exception as exc:  # noqa: BLE001 - e.g. no usable interpreter: scrub here
        log.warning(
            "tracelake sink: could not start the scrubber process (%s); the writer thread scrubs",
            type(exc).__name__,
        )
        return None


def state(process: ScrubProcess | None) -> str:
    """ "running", "starting", or "off" (not wanted, gone, or the sink closed)."""
    if process is None or process.dead is not None:
        return "off"
    return "running" if process.ready else "starting"
