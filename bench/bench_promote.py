"""The promotion job over synthetic learning records: time and peak memory, 250k vs 1M.

    .venv/bin/python bench/bench_promote.py [--sizes 250000,1000000] [--chunk 100000]

Records are generated with polars straight into a Parquet file (not the database: inserting
1M rows would time the database, not the job), in the learning_records columns: 20
collections x 50 query families, 6 tools, ~20% failures, finish times over 30 days. The job
reads the file in chunks (``pipelines.io.scan_learning_parquet``) and folds them through the
same transforms ``tracelake promote`` uses (``pipelines.promote.derive``: suggestions + policy).

Each size runs in a fresh subprocess, so its peak RSS (``resource.getrusage`` ru_maxrss) is its
own. Baseline, same run: a plain ``pl.read_parquet`` of the whole file (what an eager job would
hold). Memory bounded means the job's peak grows much less than the data between sizes.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FAMILIES = 50  # per collection; with 20 collections and 6 tools: 6,000 windows of 50
TOOLS = [
    "searchOrders",
    "getOrderDetail",
    "getShipment",
    "getCustomer",
    "listClaims",
    "getLegacyOrder",
]


def generate(n: int, path: Path) -> None:
    import polars as pl

    from pipelines.derive import stable_hash

    families = [f"family {i} 조회" for i in range(FAMILIES)]
    fps = pl.DataFrame({"f": range(FAMILIES), "query_family": families}).with_columns(
        query_fingerprint=pl.Series([stable_hash(f) for f in families])
    )
    i = pl.int_range(0, n, eager=True)
    frame = pl.select(
        run_id=pl.format("run-{}", i),
        collection_id=pl.format("coll-{}", i % 20),
        f=(i * 7919) % FAMILIES,
        t=(i * 31) % len(TOOLS),
        success=(i * 13) % 10 >= 2,
        finished_at=pl.lit("2026-11-01T00:00:00").str.to_datetime(time_zone="UTC")
        + pl.duration(seconds=(i * 2.6).cast(pl.Int64)),
    )
    frame = (
        frame.join(fps, on="f", how="left")
        .with_columns(
            selected_target=pl.when(pl.col("success")).then(
                pl.col("t").replace_strict(list(range(len(TOOLS))), TOOLS)
            ),
            plan_tools=pl.concat_list(
                pl.lit("searchOrders"), pl.col("t").replace_strict(list(range(len(TOOLS))), TOOLS)
            ),
        )
        .drop("f", "t")
    )
    frame.write_parquet(path)


def child(path: str, chunk: int, mode: str) -> None:
    import polars as pl

    from pipelines import io
    from pipelines.promote import derive
    from pipelines.promotion_policy import Policy

    start = time.perf_counter()
    if mode == "baseline":
        rows = pl.read_parquet(path).height
        out = {"rows": rows}
    else:
        derived = derive(io.scan_learning_parquet(path, chunk), {}, Policy())
        out = {
            "suggestions": derived.height,
            "promotable": int((derived["policy_status"] == "promotable").sum()),
        }
    out["seconds"] = round(time.perf_counter() - start, 2)
    out["max_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(out))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="250000,1000000")
    parser.add_argument("--chunk", type=int, default=100_000)
    parser.add_argument("--child", nargs=2)
    parser.add_argument("--generate", nargs=2)
    args = parser.parse_args()
    if args.generate:
        generate(int(args.generate[0]), Path(args.generate[1]))
        return
    if args.child:
        child(args.child[0], args.chunk, args.child[1])
        return
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            path = Path(tmp) / f"records-{n}.parquet"
            # generated in a subprocess too: Linux carries a parent's peak RSS into its children
            subprocess.run([sys.executable, __file__, "--generate", str(n), str(path)], check=True)
            size_mb = path.stat().st_size / 1e6
            results = {}
            for mode in ("baseline", "job"):
                proc = subprocess.run(
                    [sys.executable, __file__, "--chunk", str(args.chunk), "--child", str(path), mode],
                    check=True, capture_output=True, text=True,
                )  # fmt: skip
                results[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
            job, base = results["job"], results["baseline"]
            print(
                f"{n:>9,} records ({size_mb:.1f} MB parquet): job {job['seconds']} s, "
                f"peak RSS {job['max_rss_mb']} MB, {job['suggestions']} suggestions "
                f"({job['promotable']} promotable) | baseline read_parquet {base['seconds']} s, "
                f"peak RSS {base['max_rss_mb']} MB"
            )


if __name__ == "__main__":
    main()
