"""Peak RSS of the promotion job, printed every 5 chunks of one run (is memory bounded?).

python bench/bench_promote.py --generate 4000000 /tmp/lr.parquet
python bench/promote_memory_profile.py /tmp/lr.parquet
"""

from __future__ import annotations

import resource
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import polars as pl

from pipelines import io
from pipelines.promote import derive
from pipelines.promotion_policy import Policy


def peak_mb() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def chunks(path: str) -> Iterator[pl.DataFrame]:
    for i, chunk in enumerate(io.scan_learning_parquet(path, 100_000)):
        if i % 5 == 0:
            print("chunk", i, "maxrss", peak_mb(), flush=True)
        yield chunk


if __name__ == "__main__":
    derived = derive(chunks(sys.argv[1]), {}, Policy())
    print("done", derived.height, peak_mb())
