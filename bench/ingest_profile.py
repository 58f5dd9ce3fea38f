"""Ingest CPU per line by stage, from cProfile with a CPU-time timer (one process, PostgreSQL).

    PYTHONPATH=<tree> python bench/ingest_profile.py FILE [LINES] [--top]

Ingests the first LINES (default 20,000) of FILE (a corpus of bench/bench_end_to_end.py) with
``TRACELAKE_INGEST_WORKERS=1`` into a scratch database and prints the cumulative CPU time of
each stage per line. Run it from another tree with PYTHONPATH to compare two versions (a
stage a version does not have is left out). cProfile roughly doubles the real cost. The
scrubber's engine is built before profiling starts. ``--top`` also prints the 25 functions
with the most own time.
"""

from __future__ import annotations

import cProfile
import io
import itertools
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(1, str(Path(__file__).resolve().parents[1]))

from bench._pg import scratch_database
from tracelake.config import Settings
from tracelake.ingest.ingestor import Ingestor
from tracelake.scrub import get_scrubber
from tracelake.scrub.pseudonym import bind_key
from tracelake.store import open_store

KEY = b"bench-end-to-end-pseudonym-key-0123456789"
STAGES = {
    "iter_chunks": ("lines.py", "iter_chunks"),
    "Chunk.lines": ("lines.py", "lines"),
    "parse_line": ("parse.py", "parse_line"),
    "classify": ("inbound.py", "classify"),
    "safe ids": ("prepare.py", "safe"),
    "scrub (incl. secrets)": ("admission.py", "scrub"),
    "  Scrubber.scrub_event": ("scrubber.py", "scrub_event"),
    "  detect (distinct strings)": ("detect.py", "detect"),
    "  per-subject round trips": ("subjects.py", "_load_or_create"),
    "settle secrets (per chunk)": ("subjects.py", "settle"),
    "canonical (run identity)": ("codec.py", "canonical"),
    "  to_jsonable (in parse_line)": ("normalize.py", "to_jsonable"),
    "indexed_columns": ("admission.py", "indexed_columns"),
    "payload encode (dumps_bytes)": ("codec.py", "dumps_bytes"),
    "split_encoded (context)": ("redactions.py", "split_encoded"),
    "hash_payload": ("records.py", "hash_payload"),
    "feed_parts (run identity)": ("runs.py", "feed_parts"),
    "main process: rows + append": ("ingestor.py", "_flush"),
    "  report refs": ("redactions.py", "refs"),
    "  context ids": ("redactions.py", "ids"),
    "  legacy adopt": ("runs.py", "adopt"),
    "  appender.append": ("appender.py", "append"),
    "    existing keys": ("appender.py", "existing_keys"),
    "    copy_text": ("copy_format.py", "copy_text"),
    "    chain link": ("chain.py", "link_appended"),
}


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--top"]
    path, n = args[0], int(args[1]) if len(args) > 1 else 20_000
    with open(path, "rb") as f:
        data = b"".join(itertools.islice(f, n))
    with scratch_database("tl_bench_profile") as url:
        store = open_store(url)
        key = bind_key(KEY, url)
        settings = Settings(database_url=url, ingest_workers=1)
        # the engine build (presidio, Kiwi's lexicon: seconds) is once per process, not per
        # line: done before profiling, as the workers do at start
        get_scrubber(key).warm_up()
        ingestor = Ingestor(store, get_scrubber(key), key, settings)
        prof = cProfile.Profile(time.process_time)
        cpu = time.process_time()
        prof.enable()
        report = ingestor.ingest(io.BufferedReader(io.BytesIO(data)), "profile.jsonl")
        prof.disable()
        cpu = time.process_time() - cpu
        store.dispose()
    lines = report.lines
    found: dict[str, float] = {}
    stats: dict[tuple[str, int, str], tuple[int, int, float, float, object]]
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    for (filename, _, func), (_, _, _, cumulative, _) in stats.items():
        for label, (file, name) in STAGES.items():
            if filename.endswith("/" + file) and func == name:
                found[label] = found.get(label, 0.0) + cumulative
    print(f"{lines} lines, CPU {cpu / lines * 1e6:.0f} us/line under cProfile")
    if "--top" in sys.argv:
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    for label in STAGES:
        if label in found:
            print(f"  {label:<30} {found[label] / lines * 1e6:8.1f} us/line")


if __name__ == "__main__":
    main()
