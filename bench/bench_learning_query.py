"""``learning_query`` latency, warm: the scrubber built, every goal new (no memo hit), and the
same goals again (memoised), beside graph-tool-call's own ``normalize_query_family`` of the
raw goal as the floor. Goals: Faker customers (ko_KR names and phones, e-mails) in a request.

    python bench/bench_learning_query.py [--goals 2000]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TRACELAKE_PSEUDONYM_KEY", "tracelake-bench-pseudonym-key-0123456789")

from faker import Faker
from graph_tool_call.learning import normalize_query_family

from tracelake.learning import learning_query

REQUESTS = ["의 최근 주문 상세 보여줘", " 배송 조회", "님 환불 요청 상태", " order status please"]


def timed(fn: Callable[[str], str], goals: list[str]) -> tuple[list[float], list[float]]:
    """Wall and CPU (this thread's) milliseconds per call: on a loaded machine the wall time's
    tail is the scheduler's, the CPU time's is the function's."""
    wall, cpu = [], []
    for g in goals:
        start, start_cpu = time.perf_counter(), time.thread_time()
        fn(g)
        cpu.append((time.thread_time() - start_cpu) * 1000)
        wall.append((time.perf_counter() - start) * 1000)
    return sorted(wall), sorted(cpu)


def pct(values: list[float], p: float) -> float:
    return values[min(len(values) - 1, int(p * len(values)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--goals", type=int, default=2000)
    args = ap.parse_args()
    fake = Faker(["ko_KR", "en_US"])
    Faker.seed(5)

    def goal(i: int) -> str:
        ko = fake["ko_KR"]
        return f"{ko.name()} 고객({ko.phone_number()}, {fake.email()}){REQUESTS[i % 4]} {i}"

    learning_query("warm-up: build the scrubber 010-1234-5678")
    goals = [goal(i) for i in range(args.goals)]
    floor = timed(normalize_query_family, goals)
    fresh = timed(learning_query, goals)
    again = timed(learning_query, goals)
    print(
        f"machine: {platform.machine()} cpus={os.cpu_count()} python "
        f"{platform.python_version()} (shared, loaded); {args.goals} distinct goals"
    )
    print(f"load average: {os.getloadavg()[0]:.1f}")
    for name, (wall, cpu) in (
        ("normalize_query_family(raw) (floor)", floor),
        ("learning_query, new goals", fresh),
        ("learning_query, same goals (memo)", again),
    ):
        print(
            f"{name:38} wall p50 {pct(wall, 0.5):7.3f} p99 {pct(wall, 0.99):7.3f} ms | "
            f"cpu p50 {pct(cpu, 0.5):7.3f} p99 {pct(cpu, 0.99):7.3f} ms"
        )


if __name__ == "__main__":
    main()
