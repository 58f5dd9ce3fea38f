"""A producer process for the kill tests: records events, then waits to be killed.

python -m tests.sink.child URL SPOOL_DIR N close|flush
"""

from __future__ import annotations

import sys
import time

from tracelake.sink import TraceSink


def main() -> None:
    url, spool_dir, n, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    sink = TraceSink(url, spool_dir=spool_dir, flush_interval=0.01, retry_max=0.2)
    for i in range(n):
        sink.record(
            {"type": "step.completed", "stage": "runner", "step_id": f"s{i}", "i": i},
            run_id=f"child-run-{i % 3}",
        )
    if mode == "exit":  # no close(): the interpreter's exit must flush
        print("exiting", flush=True)
        return
    if mode == "close":
        sink.close(timeout=30)
        print("closed", sink.stats()["spooled"], flush=True)
    else:
        assert sink.flush(timeout=30)
        print("flushed", sink.stats()["spooled"], flush=True)
    time.sleep(120)  # the test kills us with SIGKILL


if __name__ == "__main__":
    main()
