"""The sink's snapshot of a runner's event objects: ``to_jsonable`` against the standard
library's ``dataclasses.asdict`` (the baseline: a deep copy of the same dataclass events,
without tracelake's checks for depth, NUL, surrogates, huge ints and ``to_dict()``).

Events: the real graph-tool-call PlanRunner over the demo plans (instant tools).

    python bench/bench_snapshot.py [--rounds 30]
"""

from __future__ import annotations

import argparse
import dataclasses
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tracelake.demo import run_scenario, scenarios
from tracelake.runners import to_jsonable


def best_us(fn: Callable[[Any], Any], objs: list[Any], trials: int = 5) -> float:
    best = float("inf")
    for _ in range(trials):
        start = time.thread_time()
        for o in objs:
            fn(o)
        best = min(best, (time.thread_time() - start) / len(objs) * 1e6)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args()
    objs = [e for _ in range(args.rounds) for s in scenarios() for e in run_scenario(s)]
    print(f"machine: {platform.machine()} python {platform.python_version()}; {len(objs)} events")
    base = best_us(dataclasses.asdict, objs)
    ours = best_us(lambda o: to_jsonable(o, 32), objs)
    print(f"dataclasses.asdict : {base:6.1f} us/event (CPU, best of 5)")
    print(
        f"to_jsonable        : {ours:6.1f} us/event  ratio {base / ours:.2f}x the baseline's speed"
    )


if __name__ == "__main__":
    main()
