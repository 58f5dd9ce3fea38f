"""The sink's cost to a production runner.

1. graph-tool-call's real PlanRunner over the demo plans with instant tools, without and with
   ``sink.tap`` (PostgreSQL), in one process run: runner-loop time and the ratio, plus the time
   until everything is durable (close()).
2. ``record()`` latency percentiles with the database up and with it down (unreachable port:
   every batch goes to the spool).

    python bench/bench_sink.py [--rounds 150] [--records 100000]
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TRACELAKE_PSEUDONYM_KEY", "bench-pseudonym-key-0123456789abcdef")

from bench._pg import scratch_database
from tracelake.demo import run_scenario, scenarios
from tracelake.sink import TraceSink


def runner_loop(rounds: int, sink: TraceSink | None) -> tuple[float, int]:
    n = 0
    start = time.perf_counter()
    for r in range(rounds):
        for s in scenarios():
            events = run_scenario(s)
            if sink is not None:
                events = sink.tap(events, run_id=f"bench-{r}-{s.name}")
            for _event in events:
                n += 1
    return time.perf_counter() - start, n


def percentiles(samples: list[int]) -> str:
    samples.sort()
    pick = lambda q: samples[min(len(samples) - 1, int(len(samples) * q))] / 1000  # noqa: E731
    return f"p50 {pick(0.5):.2f} us  p99 {pick(0.99):.2f} us  p99.9 {pick(0.999):.2f} us  max {samples[-1] / 1000:.0f} us"


def record_latency(
    url: str, n: int, spool: str, gc_freeze: bool = False
) -> tuple[str, dict[str, object]]:
    sink = TraceSink(url, spool_dir=spool, gc_freeze=gc_freeze)
    samples = []
    event = {
        "type": "step.completed",
        "stage": "runner",
        "step_id": "s1",
        "tool": "getOrder",
        "duration_ms": 3,
        "output_preview": {"orderNo": "ORD-1"},
    }
    for i in range(n):
        t = time.perf_counter_ns()
        sink.record(event, run_id=f"lat-{i // 100}")
        samples.append(time.perf_counter_ns() - t)
        if i % 1000 == 999:
            time.sleep(0.002)  # a runner does other work between events
    sink.close(timeout=120)
    return percentiles(samples), sink.stats()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=150)
    ap.add_argument("--records", type=int, default=100_000)
    args = ap.parse_args()
    print(f"machine: {platform.machine()} cpus={os.cpu_count()} python {platform.python_version()}")
    with scratch_database("tl_bench_sink") as url, tempfile.TemporaryDirectory() as tmp:
        runner_loop(2, None)  # warm up imports and caches
        warm = TraceSink(url, spool_dir=f"{tmp}/warm")
        runner_loop(1, warm)
        warm.close()
        base = min(runner_loop(args.rounds, None)[0] for _ in range(3))
        trials = []
        for trial in range(3):  # best of 3, each with a fresh sink
            sink = TraceSink(url, spool_dir=f"{tmp}/spool{trial}")
            loop, n = runner_loop(args.rounds, sink)
            t = time.perf_counter()
            sink.close(timeout=600)
            trials.append((loop, loop + time.perf_counter() - t, sink.stats()))
        with_sink = min(t[0] for t in trials)
        durable = min(t[1] for t in trials)
        stats = trials[-1][2]
        print(
            f"PlanRunner, {args.rounds} rounds x {len(scenarios())} plans = {n} events, instant tools"
        )
        print(f"  without sink            : {base * 1000:8.1f} ms  ({n / base:,.0f} events/s)")
        print(
            f"  with sink (runner loop) : {with_sink * 1000:8.1f} ms  ratio {base / with_sink:.2f}x of the plain runner's speed"
        )
        print(f"  with sink, until durable: {durable * 1000:8.1f} ms  ratio {base / durable:.2f}x")
        print(
            f"  sink stats (last trial): written {stats['written']} spooled {stats['spooled']} dropped {stats['dropped']}"
        )
        print(
            f"  background work per event: {(durable - base) / n * 1e6:.0f} us (snapshot, scrub, spool, append)"
        )
        up, up_stats = record_latency(url, args.records, f"{tmp}/up")
        print(
            f"record() database up  : {up}   (written {up_stats['written']}, dropped {up_stats['dropped']})"
        )
        frozen, frozen_stats = record_latency(url, args.records, f"{tmp}/frozen", gc_freeze=True)
        gc.unfreeze()  # the next measurement runs without it
        print(
            f"record() up, gc_freeze: {frozen}   (written {frozen_stats['written']}, dropped {frozen_stats['dropped']})"
        )
        down_url = "postgresql://postgres@127.0.0.1:9/unreachable"
        down, down_stats = record_latency(down_url, args.records, f"{tmp}/down")
        print(
            f"record() database down: {down}   (spooled {down_stats['spooled']}, dropped {down_stats['dropped']})"
        )


if __name__ == "__main__":
    main()
