"""Where ingest's CPU goes, stage by stage, on realistic lines (one process, no database).

    python bench/ingest_stages.py FILE [--lines 10000]

FILE: a corpus written by bench/bench_end_to_end.py (e.g. /tmp/tracelake-bench/events-100000-
seed1.jsonl). Prints CPU microseconds per line for each stage of a worker's pass (parse,
classify, scrub cold and warm, encode) and for the stdlib ``json.loads`` of the same lines as
a yardstick. The scrubber's caches are cleared before the cold pass.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tracelake import codec
from tracelake.admission import scrub
from tracelake.ingest.lines import iter_lines
from tracelake.ingest.parse import parse_line
from tracelake.runners import classify
from tracelake.scrub import get_scrubber
from tracelake.scrub.scrubber import clear_caches

KEY = b"bench-ingest-stages-pseudonym-key-0123456789"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--lines", type=int, default=10_000)
    args = parser.parse_args()
    data = Path(args.file).read_bytes()
    lines = list(iter_lines(io.BytesIO(data), 1 << 23))[: args.lines]
    scrubber = get_scrubber(KEY)
    scrubber.scrub_text("build the engine: kim.minjun@example.com")
    clear_caches()
    rows: list[tuple[str, float]] = []

    def stage(name: str, fn: Callable[[Any], Any], items: list[Any]) -> list[Any]:
        t0 = time.process_time()
        out = [fn(x) for x in items]
        rows.append((name, (time.process_time() - t0) / len(items) * 1e6))
        return out

    stage("yardstick: stdlib json.loads", lambda line: json.loads(line.data), lines)
    objs = stage("parse (orjson + checks)", lambda line: parse_line(line, 1 << 23, 64), lines)
    inbound = stage("classify (contracts)", classify, objs)
    scrubbed = stage("scrub, cold caches", lambda i: scrub(scrubber, i), inbound)
    stage("scrub, warm caches (same lines again)", lambda i: scrub(scrubber, i), inbound)
    stage("canonical JSON (bare run identity)", lambda i: codec.canonical(i.event), inbound)
    stage("encode payload", lambda s: codec.dumps_bytes(s.payload), scrubbed)
    stage("encode report", lambda s: codec.dumps_bytes(s.report), scrubbed)
    print(f"{len(lines)} lines, {sum(len(x.data) for x in lines) / len(lines):.0f} bytes/line")
    for name, us in rows:
        print(f"  {name:<40} {us:8.1f} us/line (CPU)")


if __name__ == "__main__":
    main()
