"""Peak RSS of ``tracelake ingest`` on a large mix of bad and good lines (bounded, not
proportional to the input). Run: ``python bench/ingest_memory.py 1000000 3000000``.

Each size gets a fresh SQLite database and a gzip input whose lines are, in turn, not JSON,
``{}`` (no type), a JSON array, and a valid bare event (runs of ten); the peak RSS of the
ingest process is read from the kernel (``RUSAGE_CHILDREN``) after it exits. Give one size per
invocation (the kernel reports the largest child so far). ``--bad-only`` leaves out the valid
events (the case where the old ingestor never flushed its quarantine rows). To measure another version of the
code, put its checkout first on ``PYTHONPATH``.
"""

from __future__ import annotations

import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def make_input(path: Path, lines: int, bad_only: bool = False) -> None:
    with gzip.open(path, "wb", compresslevel=1) as out:
        for start in range(0, lines, 10_000):
            chunk = []
            for i in range(start, min(start + 10_000, lines)):
                kind = i % 3 if bad_only else i % 4
                if kind == 0:
                    chunk.append(b"not json at all %d" % i)
                elif kind == 1:
                    chunk.append(b"{}")
                elif kind == 2:
                    chunk.append(b"[1, 2, 3]")
                else:  # bare runs of ten events (a run is held until the next start)
                    kind = "plan.started" if i % 40 == 3 else "step.started"
                    chunk.append(json.dumps({"type": kind, "step_id": f"s{i}"}).encode())
            out.write(b"\n".join(chunk) + b"\n")


def measure(lines: int, bad_only: bool) -> tuple[float, float, str]:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "mix.jsonl.gz"
        make_input(src, lines, bad_only)
        env = {**os.environ, "TRACELAKE_DATABASE_URL": f"sqlite:///{tmp}/bench.db"}
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "tracelake", "ingest", str(src), "--json"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        elapsed = time.perf_counter() - started
        peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        return peak_mib, elapsed, done.stdout.replace("\n", " ")


def main() -> None:
    bad_only = "--bad-only" in sys.argv
    for lines in [int(a) for a in sys.argv[1:] if a != "--bad-only"] or [100_000]:
        peak, elapsed, summary = measure(lines, bad_only)
        print(f"{lines} lines: peak RSS {peak:.0f} MiB, {elapsed:.0f} s; {summary}", flush=True)


if __name__ == "__main__":
    main()
