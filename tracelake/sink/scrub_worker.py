"""The sink's scrubber process (``python -m tracelake.sink.scrub_worker``, started by the sink).

Snapshotting and scrubbing cost the writer ~100 us of CPU per event; on the runner's process
that time is taken from the runner (one GIL). Here it runs on another core. The process reads
batches of the runner's pickled event objects from stdin, prepares them exactly as the writer
thread would (:class:`tracelake.sink.preparer.Preparer`) and answers with encoded spool records
on its stdout, in order. Raw event data only ever crosses the pipe: this process writes no
file and opens no database connection except the per-subject secret lookups a bound pseudonym
key makes, exactly like the writer thread.

It ignores SIGINT and SIGTERM (a terminal's Ctrl-C or a stop of the whole process group must
not take it down before the sink has flushed through it) and exits when its stdin closes:
when the sink closes, or when the runner's process is gone, however it ended.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
from typing import IO

from tracelake.sink.frames import read_frame, write_frame


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    from tracelake.sink import live

    live.IN_SCRUBBER = True  # a runner's module imported to load an event makes no sink here
    out: IO[bytes] = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # anything a library prints goes to stderr, never into the answers
    inp = sys.stdin.buffer
    init = read_frame(inp)
    if init is None:
        return 0
    raw_key, url, max_depth, paths = init
    sys.path.extend(p for p in paths if p not in sys.path)  # where the runner's classes live

    import tracelake.store  # noqa: F401 - installs the per-subject secret lookup
    from tracelake.scrub import get_scrubber
    from tracelake.scrub.pseudonym import bind_key
    from tracelake.sink.preparer import Preparer
    from tracelake.sink.spool import encode

    key = bind_key(raw_key, url) if url else raw_key
    scrubber = get_scrubber(key)
    scrubber.warm_up()
    preparer = Preparer(scrubber, key, max_depth)
    write_frame(out, ("ready", os.getpid()))
    while True:
        frame = read_frame(inp)
        if frame is None:
            return 0
        ticket, payload = frame
        try:
            items = pickle.loads(payload)
        except Exception as exc:  # noqa: BLE001 - the sink prepares this batch itself
            write_frame(out, (ticket, None, type(exc).__name__))
            continue
        events, bad, oldest = preparer.prepare(items)
        answer = (
            encode("events", events) if events else b"",
            len(events),
            encode("quarantine", bad) if bad else b"",
            len(bad),
            oldest,
        )
        write_frame(out, (ticket, answer, None))


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (BrokenPipeError, KeyboardInterrupt):  # the sink's process is gone: nothing to do
        sys.exit(0)
