"""tracelake's scrubber vs graph-tool-call's ``scrub_trace_payload``, side by side, one process.

Corpus: real PlanRunner events from ``tests/corpora/gtc_commerce.py`` (RUNS customers x five
scenarios: success+coercion, abort, retry, binding recovery, recover-skip) plus the 832 real
agentlane events of ``../shared/samples/agentlane`` when present.

Prints events/s for both (best of REPEAT interleaved passes, every pass time printed too;
tracelake's memos are all cleared before each of its passes, ``gc.collect()`` runs before
every pass of either side, and the presidio engine is built before timing, as it is once per
process), the ratio, and leak counts for both: planted values found in the JSON dump (raw or
\\u-escaped). Both sides run in this one process and thread.

    .venv/bin/python bench/bench_scrub.py [RUNS] [REPEAT]
"""

from __future__ import annotations

import gc
import json
import os
import platform
import re
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graph_tool_call.learning import scrub_trace_payload  # noqa: E402

from tests.corpora.gtc_commerce import all_planted, build_gtc_corpus  # noqa: E402
from tracelake.scrub import analyzer, detect, get_scrubber  # noqa: E402
from tracelake.scrub.scrubber import clear_caches  # noqa: E402

AGENTLANE = ROOT.parent / "shared" / "samples" / "agentlane"


def load_corpus(runs: int) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    events, planted = build_gtc_corpus(runs=runs, seed=2026)
    corpus = [("graph_tool_call", e) for e in events]
    secrets = all_planted(planted)
    if (AGENTLANE / "events.jsonl").exists():
        for line in (AGENTLANE / "events.jsonl").read_text(encoding="utf-8").splitlines():
            corpus.append(("agentlane", json.loads(line)))
        secrets += [s for s in (AGENTLANE / "secrets.txt").read_text("utf-8").splitlines() if s]
    else:
        print(f"NOTE: {AGENTLANE} not found; graph-tool-call events only")
    return corpus, secrets


def _trie_regex(words: list[str]) -> str:
    """One regex for many literals, as a trie (a plain alternation of 3000 is very slow)."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def render(node: dict[str, Any]) -> str:
        alts = [re.escape(ch) + render(child) for ch, child in node.items() if ch]
        end = "" in node
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if end else body

    return render(trie)


def leaks(outputs: list[Any], secrets: list[str]) -> tuple[int, int]:
    """(distinct planted values leaked, events leaking at least one)."""
    forms = {s: s for s in secrets} | {json.dumps(s)[1:-1]: s for s in secrets}
    pattern = re.compile(_trie_regex(list(forms)))
    found: set[str] = set()
    events = 0
    for out in outputs:
        hits = set()
        for dump in (json.dumps(out, ensure_ascii=False), json.dumps(out)):
            hits |= {forms[m.group(0)] for m in pattern.finditer(dump)}
        found |= hits
        events += bool(hits)
    return len(found), events


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    corpus, secrets = load_corpus(runs)
    scrubber = get_scrubber(b"bench-pseudonym-key-0123456789")
    t0 = time.perf_counter()
    analyzer.get_recognizers()
    scrubber.warm_up()  # the Korean lexicon and the hint automaton too (scrub.hints)
    build_s = time.perf_counter() - t0

    def run_baseline() -> list[Any]:
        return [scrub_trace_payload(event) for _, event in corpus]

    def run_tracelake() -> list[Any]:
        clear_caches()  # detection, key classes and trace_metadata memos: a cold scrubber
        return [scrubber.scrub_event(src, e["type"], e).payload for src, e in corpus]

    passes: dict[str, list[float]] = {"baseline": [], "tracelake": []}
    cpu: dict[str, list[float]] = {"baseline": [], "tracelake": []}
    outputs: dict[str, list[Any]] = {}
    for _ in range(repeat):  # interleaved, so machine noise hits both alike
        for name, fn in (("baseline", run_baseline), ("tracelake", run_tracelake)):
            outputs.pop(name, None)
            gc.collect()  # both sides start from the same heap state
            start, start_cpu = time.perf_counter(), time.process_time()
            outputs[name] = fn()
            cpu[name].append(time.process_time() - start_cpu)
            passes[name].append(time.perf_counter() - start)
    best = {name: min(times) for name, times in passes.items()}
    best_cpu = {name: min(times) for name, times in cpu.items()}

    n = len(corpus)
    rate = {name: n / seconds for name, seconds in best.items()}
    print(
        f"machine: {platform.machine()} {platform.processor() or ''} cpus={os.cpu_count()} "
        f"python={platform.python_version()}"
    )
    print(
        f"corpus: {n} events ({sum(s == 'graph_tool_call' for s, _ in corpus)} graph-tool-call,"
        f" {sum(s == 'agentlane' for s, _ in corpus)} agentlane), {len(secrets)} planted values"
    )
    print(
        "engine build (presidio, Korean lexicon, hint automaton; once per process, not timed "
        f"below): {build_s:.2f}s"
    )
    print(
        "each pass: one process, one thread; baseline = scrub_trace_payload(event) per event; "
        "tracelake = Scrubber.scrub_event per event after clear_caches() (cold detection, "
        "key-class, cut-preview and trace_metadata memos); gc.collect() before every pass"
    )
    for name in ("baseline", "tracelake"):
        distinct, events = leaks(outputs[name], secrets)
        print(
            f"{name:>9}: {rate[name]:9.0f} events/s  ({best[name]:.3f}s best of {repeat})  "
            f"leaks: {distinct} distinct planted values in {events} events"
        )
        print(f"{'':>11}passes (s): {' '.join(f'{t:.3f}' for t in passes[name])}")
        print(
            f"{'':>11}CPU time of this process per pass (s): {' '.join(f'{t:.3f}' for t in cpu[name])}"
        )
    print(f"ratio tracelake/baseline: {rate['tracelake'] / rate['baseline']:.2f}x")
    # On a shared machine the wall clock also counts time other processes held the CPU; the
    # process's own CPU time does not (both sides run in this one thread).
    print(
        f"ratio tracelake/baseline by CPU time (best pass): "
        f"{best_cpu['baseline'] / best_cpu['tracelake']:.2f}x"
    )
    print(f"detection cache after last pass: {detect.cache_info()}")


if __name__ == "__main__":
    main()
