"""The sink's cost to a production runner.

1. graph-tool-call's real PlanRunner over the demo plans with instant tools, without and with
   ``sink.tap`` (PostgreSQL), in one process run: runner-loop time and the ratio, plus the time
   until everything is durable (close()).
2. ``record()`` latency percentiles with the database up and with it down (unreachable port:
   every batch goes to the spool).
3. A hung database (a private PostgreSQL whose processes are stopped with SIGSTOP): the worst
   ``record()`` latency while it hangs, and the events a producer loses when it is SIGKILLed
   during the hang (compared with what its ``record()`` accepted).

    python bench/bench_sink.py [--rounds 150] [--records 100000] [--hang 6] [--rate 2000]
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import tempfile
import threading
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


def hang_scenario(seconds: float, rate: float) -> None:
    """record() while the server is stopped (SIGSTOP), then a producer SIGKILLed in a hang."""
    import re
    import signal
    import subprocess

    from tests.sink.private_pg import PrivatePostgres
    from tracelake.store import open_store

    server = PrivatePostgres()
    try:
        server.start()
        server.migrate()
        with tempfile.TemporaryDirectory() as tmp:
            sink = TraceSink(server.url, spool_dir=f"{tmp}/hang", db_timeout=2.0, retry_max=1.0)
            event = {"type": "step.completed", "stage": "runner", "step_id": "s1"}
            for i in range(500):
                sink.record(event, run_id=f"hang-{i // 100}")
            sink.flush(30)
            server.freeze()
            samples: list[int] = []
            gap = 1.0 / rate
            start = time.monotonic()
            i = 0
            while time.monotonic() - start < seconds:
                t = time.perf_counter_ns()
                sink.record(event, run_id=f"hang-{i // 100}")
                samples.append(time.perf_counter_ns() - t)
                i += 1
                delay = start + i * gap - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            during = sink.stats()
            server.thaw()
            back = time.monotonic()
            while sink.health != "healthy" and time.monotonic() - back < 60:
                time.sleep(0.05)
            recovered = time.monotonic() - back
            sink.close(timeout=60)
            print(f"hung database ({seconds:.0f} s SIGSTOP, {rate:,.0f} events/s, db_timeout 2 s):")
            print(f"  record() during the hang: {percentiles(samples)}")
            print(
                f"  during: health {during['health']}, queue {during['queued']}, spool "
                f"{during['spool_bytes']:,} bytes, replay lag {during['replay_lag_events']} events; "
                f"healthy {recovered:.1f} s after SIGCONT; dropped {sink.stats()['dropped']}"
            )
            db = f"{tmp}/kill"
            env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
            child = subprocess.Popen(
                [sys.executable, "-m", "tests.sink.child_stream", server.url, db, str(rate)],
                cwd=Path(__file__).resolve().parents[1],
                env=env,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert child.stdout is not None
            child.stdout.readline()
            time.sleep(1.0)
            server.freeze()
            killer = threading.Timer(seconds / 2, child.send_signal, (signal.SIGKILL,))
            killer.start()
            accepted = 0
            for line in child.stdout:
                found = re.match(r"accepted (\d+)", line)
                if found:
                    accepted = int(found.group(1))
            child.wait()
            server.thaw()
            replayer = TraceSink(server.url, spool_dir=db)
            replayer.close(timeout=120)
            store = open_store(server.url)
            stored = sum(1 for e in store.iter_all() if e.run_id.startswith("r"))
            store.dispose()
            print(
                f"  SIGKILL {seconds / 2:.0f} s into a hang at {rate:,.0f} events/s: accepted "
                f"{accepted}, stored after replay {stored}, lost {accepted - stored} "
                f"(one 50 ms flush interval = {rate * 0.05:.0f} events)"
            )
    finally:
        server.destroy()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=150)
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--hang", type=float, default=6.0, help="seconds the server is stopped")
    ap.add_argument("--rate", type=float, default=2000.0, help="events/s during the hang")
    ap.add_argument("--only-hang", action="store_true")
    args = ap.parse_args()
    if args.only_hang:
        hang_scenario(args.hang, args.rate)
        return
    print(f"machine: {platform.machine()} cpus={os.cpu_count()} python {platform.python_version()}")
    with scratch_database("tl_bench_sink") as url, tempfile.TemporaryDirectory() as tmp:
        runner_loop(2, None)  # warm up imports and caches
        warm = TraceSink(url, spool_dir=f"{tmp}/warm", scrub_process=False)
        runner_loop(1, warm)
        warm.close()
        # Alternate the plain runner and both sink modes, best of 5 each, so drifting load on
        # the machine hits all three alike.
        bases: list[float] = []
        trials: dict[bool, list[tuple[float, float, dict[str, object]]]] = {True: [], False: []}
        n = 0
        for trial in range(5):
            bases.append(runner_loop(args.rounds, None)[0])
            for process in (True, False):
                sink = TraceSink(
                    url, spool_dir=f"{tmp}/spool{trial}{process}", scrub_process=process
                )
                sink.wait_until_ready()  # a service starts its sink once; measure it running
                loop, n = runner_loop(args.rounds, sink)
                t = time.perf_counter()
                sink.close(timeout=600)
                trials[process].append((loop, loop + time.perf_counter() - t, sink.stats()))
        base = min(bases)
        print(
            f"PlanRunner, {args.rounds} rounds x {len(scenarios())} plans = {n} events, instant tools"
        )
        print(f"  without sink            : {base * 1000:8.1f} ms  ({n / base:,.0f} events/s)")
        for process, label in ((True, "scrubber process"), (False, "writer thread scrubs")):
            with_sink = min(t[0] for t in trials[process])
            durable = min(t[1] for t in trials[process])
            stats = trials[process][-1][2]
            print(f"  sink, {label}:")
            print(
                f"    runner loop           : {with_sink * 1000:8.1f} ms  ratio {base / with_sink:.2f}x of the plain runner's speed"
            )
            print(
                f"    until durable         : {durable * 1000:8.1f} ms  ratio {base / durable:.2f}x"
            )
            print(
                f"    stats (last trial)    : written {stats['written']} spooled {stats['spooled']} dropped {stats['dropped']}"
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
    hang_scenario(args.hang, args.rate)


if __name__ == "__main__":
    main()
