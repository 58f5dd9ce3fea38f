"""Realistic event streams at volume: both runner families, fresh personal data every run.

* graph-tool-call: the real ``PlanRunner`` through :mod:`tests.corpora.gtc_commerce`'s five
  scenarios, with each customer's name, phone, e-mail and address from Faker in several
  locales (Korean most of the time), so the free text (goals, memos, exception messages)
  carries new personal data in every run. Half of the runs are written as SSE envelopes
  (``runner.event`` with a run id and seq), half as bare ``asdict()`` lines.
* agentlane: the real samples (``shared/samples/agentlane/events.jsonl``), one root run at a
  time, with every planted value of ``secrets.txt`` replaced by a fresh one of the same kind
  (Faker e-mails, Korean names and addresses; digits, letters and hex re-drawn in place).

:func:`write_corpus` streams ``n`` lines to a file (never all in memory) and is deterministic
for a seed.
"""

from __future__ import annotations

import json
import random
import re
import uuid
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from faker import Faker

from tests.corpora.gtc_commerce import _person, iter_gtc_runs

LOCALES = ["ko_KR", "ko_KR", "ko_KR", "en_US", "ja_JP", "de_DE", "fr_FR", "zh_CN"]
_HANGUL = re.compile("[가-힣]")


class FakePeople:
    """A person factory for :func:`iter_gtc_runs` with Faker names, phones, e-mails, addresses."""

    def __init__(self, seed: int) -> None:
        self.faker = Faker(LOCALES)
        self.faker.seed_instance(seed)

    def __call__(self, rng: random.Random, i: int) -> dict[str, str]:
        p = _person(rng, i)  # ids, cards, RRNs, tokens in their known shapes
        f = self.faker[rng.choice(LOCALES)]
        kr = self.faker["ko_KR"]
        phone = kr.phone_number() if rng.random() < 0.7 else f.phone_number()
        digits = re.sub(r"\D", "", phone) or p["phone_digits"]
        p.update(
            name=f.name(),
            phone=phone,
            phone_digits=digits,
            phone_int=str(int(digits)),
            email=f.email(),
            address=f.address().replace("\n", " "),
        )
        return p


def gtc_runs(runs: int, seed: int) -> Iterator[list[bytes]]:
    """The lines of each run (half as envelopes with a run id and seq, half bare)."""
    people = FakePeople(seed)
    rng = random.Random(seed + 1)
    for _scenario, runner, plan, ctx, meta, _p in iter_gtc_runs(runs, seed, person=people):
        events = [
            asdict(e) for e in runner.run_stream(plan, input_context=ctx, trace_metadata=meta)
        ]
        if rng.random() < 0.5:
            run_id = f"req-{uuid.UUID(int=rng.getrandbits(128))}"
            yield [
                json.dumps(
                    {"type": "runner.event", "run_id": run_id, "seq": seq, "event": e},
                    ensure_ascii=False,
                ).encode()
                for seq, e in enumerate(events, 1)
            ]
        else:
            yield [json.dumps(e, ensure_ascii=False).encode() for e in events]


class AgentlaneRuns:
    """The samples' root runs, re-issued with fresh planted values each time."""

    def __init__(self, samples: Path, seed: int) -> None:
        self.rng = random.Random(seed)
        self.faker = Faker(LOCALES)
        self.faker.seed_instance(seed)
        text = (samples / "events.jsonl").read_text(encoding="utf-8")
        self.runs: list[list[str]] = []
        for line in text.splitlines():
            obj = json.loads(line)
            if not self.runs or (obj["type"] == "agent_start" and obj["payload"].get("is_root")):
                self.runs.append([])
            self.runs[-1].append(line)
        secrets = (samples / "secrets.txt").read_text(encoding="utf-8").splitlines()
        self.secrets = sorted({s for s in secrets if s.strip()}, key=len, reverse=True)
        self.pattern = re.compile("|".join(re.escape(s) for s in self.secrets))

    def _fresh(self, secret: str) -> str:
        rng, kr = self.rng, self.faker["ko_KR"]
        if "@" in secret:
            return str(self.faker[rng.choice(LOCALES)].email())
        if _HANGUL.search(secret):
            return str(kr.address() if " " in secret else kr.name())
        keep = 4 if secret[:4].isalpha() else 0  # sat_, AKIA, eyJh...: keep the shape's prefix
        out = [secret[:keep]]
        for c in secret[keep:]:
            if c.isdigit():
                out.append(str(rng.randrange(10)))
            elif c in "abcdef" and re.fullmatch("[0-9a-f]+", secret):
                out.append(rng.choice("0123456789abcdef"))
            elif c.isascii() and c.islower():
                out.append(chr(rng.randrange(97, 123)))
            elif c.isascii() and c.isupper():
                out.append(chr(rng.randrange(65, 91)))
            else:
                out.append(c)
        return "".join(out)

    def lines(self) -> Iterator[bytes]:
        run = self.rng.choice(self.runs)
        fresh: dict[str, str] = {}

        def sub(m: re.Match[str]) -> str:
            value = fresh.get(m.group(0))
            if value is None:
                value = fresh[m.group(0)] = self._fresh(m.group(0))
            return value

        for line in run:
            obj: Any = json.loads(self.pattern.sub(lambda m: json.dumps(sub(m))[1:-1], line))
            yield json.dumps(obj, ensure_ascii=False).encode()


def write_corpus(
    path: Path, n: int, samples: Path, seed: int = 1, agentlane_share: float = 0.3
) -> dict[str, int]:
    """Write at least *n* lines, whole runs of both families interleaved (about
    *agentlane_share* of the events from agentlane); returns counts by family and bytes."""
    agent = AgentlaneRuns(samples, seed)
    gtc = gtc_runs(runs=10**9, seed=seed)
    counts = {"graph_tool_call": 0, "agentlane": 0, "bytes": 0, "lines": 0}
    with path.open("wb") as out:
        while counts["lines"] < n:
            if counts["agentlane"] < agentlane_share * counts["lines"]:
                run, family = list(agent.lines()), "agentlane"
            else:
                run, family = next(gtc), "graph_tool_call"
            for line in run:
                out.write(line + b"\n")
                counts["bytes"] += len(line) + 1
            counts[family] += len(run)
            counts["lines"] += len(run)
    return counts
