"""Recall and precision of the scrubber on data nobody tuned it to (``tests/corpora/pii.py``).

Fresh Faker values (eight locales; the seed is printed, pass it back to reproduce) planted in
graph-tool-call and agentlane events; every event is scrubbed and its JSON dump (UTF-8 and
\\u-escaped) searched for every value planted in its run. Prints recall per category and per
locale (a planted value found anywhere in its run's stored events is a leak), safe-value
retention (order/delivery/invoice numbers, SKUs, tool names, HTTP statuses, durations, ttl
numbers, URL paths, commerce words that must come back unchanged), and what the learner
keeps: graph-tool-call's ``normalize_query_family`` of the scrubbed goals, per goal template
(goals that differ only in personal data should make one family).

    .venv/bin/python bench/bench_scrub_recall.py [RUNS] [SEED]

Exits 1 when a value leaked or retention is under 99%.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graph_tool_call.learning import normalize_query_family

from tests.corpora.pii import build_pii_corpus, leaked
from tracelake.scrub import get_scrubber


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else random.SystemRandom().randrange(1, 2**31)
    t0 = time.perf_counter()
    corpus = build_pii_corpus(runs, seed)
    built = time.perf_counter() - t0
    scrubber = get_scrubber(b"recall-bench-key-0123456789abcdef")
    t0 = time.perf_counter()
    payloads = [scrubber.scrub_event(src, e["type"], e).payload for src, e in corpus.events]
    took = time.perf_counter() - t0
    dumps = [(json.dumps(p, ensure_ascii=False), json.dumps(p)) for p in payloads]
    run_dumps = [
        ("\n".join(dumps[i][0] for i in rng), "\n".join(dumps[i][1] for i in rng))
        for rng in corpus.runs
    ]

    by_cat: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    by_loc: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    examples: dict[str, str] = {}
    for item in corpus.planted:
        hit = leaked(item, run_dumps[item.run])
        for table, key in (
            (by_cat, item.category + (" (int)" if item.as_int else "")),
            (by_loc, item.locale),
        ):
            table[key][1] += 1
            table[key][0] += hit
        if hit:
            examples.setdefault(
                # masked; 2+2 visible characters only when at least 2 stay hidden (a 3-character
                # name shown as 2+2 reads like a different, 4-character one)
                item.category,
                item.value[:2] + "*" * (len(item.value) - 4) + item.value[-2:]
                if len(item.value) >= 6
                else item.value[:1] + "*" * (len(item.value) - 1),
            )
    total = len(corpus.planted)
    leaks = sum(v[0] for v in by_cat.values())

    kept: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for safe in corpus.safe:
        seen[safe.kind] += 1
        kept[safe.kind] += safe.value in dumps[safe.event][0]
    families: dict[str, set[str]] = defaultdict(set)
    goals: Counter[str] = Counter()
    for (tid, _), payload in zip(corpus.goals, [payloads[r[0]] for r in corpus.runs], strict=True):
        families[tid].add(normalize_query_family(payload["goal"]))
        goals[tid] += 1

    print(
        f"seed {seed}: {runs} runs, {len(corpus.events)} events, {total} planted values "
        f"(corpus built in {built:.1f}s; scrubbed in {took:.1f}s = {len(corpus.events) / took:.0f} events/s)"
    )
    print(f"\nrecall: {total - leaks}/{total} = {100 * (total - leaks) / total:.2f}%")
    print(f"{'category':<26}{'planted':>8}{'leaked':>8}{'recall':>9}")
    for cat in sorted(by_cat):
        hit, n = by_cat[cat]
        extra = f"  e.g. {examples[cat.split(' ')[0]]}" if hit else ""
        print(f"{cat:<26}{n:>8}{hit:>8}{100 * (n - hit) / n:>8.2f}%{extra}")
    print(f"\n{'locale':<26}{'planted':>8}{'leaked':>8}{'recall':>9}")
    for loc in sorted(by_loc):
        hit, n = by_loc[loc]
        print(f"{loc:<26}{n:>8}{hit:>8}{100 * (n - hit) / n:>8.2f}%")
    retained = sum(kept.values())
    planted_safe = sum(seen.values())
    print(
        f"\nsafe values retained: {retained}/{planted_safe} = {100 * retained / planted_safe:.2f}%"
    )
    for kind in sorted(seen):
        print(f"  {kind:<24}{kept[kind]:>6}/{seen[kind]:<6}")
    print(
        "\nquery families of scrubbed goals (graph-tool-call normalize_query_family): "
        "goals -> families per template (1 = goals differing only in personal data group)"
    )
    for tid in sorted(goals):
        fams = families[tid]
        print(f"  {tid:<22}{goals[tid]:>6} -> {len(fams):<4} e.g. {sorted(fams)[0]!r}")
    ok = leaks == 0 and retained >= 0.99 * planted_safe
    print(f"\n{'PASS' if ok else 'FAIL'} (seed {seed})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
