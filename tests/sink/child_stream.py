"""A producer that records events at a steady rate until it is killed (SIGTERM/SIGKILL tests).

python -m tests.sink.child_stream URL SPOOL_DIR RATE [own-handler] [subjects]

Prints ``accepted <n>`` after every 10th record() call (flushed), so the parent knows how many
events record() accepted before the kill. With ``own-handler`` the program installs its own
SIGTERM handler first (the sink must chain to it); it prints ``own handler`` and exits 3. With
``subjects`` every 20th event brings a new customer id (a pseudonym secret looked up in the
database).
"""

from __future__ import annotations

import signal
import sys
import time
from types import FrameType

from tracelake.sink import TraceSink


def _own(signum: int, frame: FrameType | None) -> None:
    print("own handler", flush=True)
    sys.exit(3)


def main() -> None:
    url, spool_dir, rate = sys.argv[1], sys.argv[2], float(sys.argv[3])
    if "own-handler" in sys.argv[4:]:
        signal.signal(signal.SIGTERM, _own)
    sink = TraceSink(
        url, spool_dir=spool_dir, flush_interval=0.05, retry_max=0.5, db_timeout=2, max_queue=20_000
    )
    subjects = "subjects" in sys.argv[4:]
    print("ready", flush=True)
    gap = 1.0 / rate if rate > 0 else 0.0
    start = time.monotonic()
    i = 0
    while True:
        event: dict[str, object] = {"type": "step.completed", "stage": "runner", "i": i}
        if subjects:  # a new customer id now and then: a subject-secret lookup each
            event["user_id"] = f"cust-{i // 20}"
        sink.record(event, run_id=f"r{i % 4}")
        i += 1
        if i % 10 == 0:
            print(f"accepted {i}", flush=True)
        if gap:
            delay = start + i * gap - time.monotonic()
            if delay > 0:
                time.sleep(delay)


if __name__ == "__main__":
    main()
