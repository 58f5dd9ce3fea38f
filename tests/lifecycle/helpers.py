"""Generated lifecycle data: Faker subjects in several locales, events across months."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from faker import Faker

from tracelake.store import Store
from tracelake.store.records import NewEvent

LOCALES = ["ko_KR", "en_US", "ja_JP", "de_DE", "fr_FR", "pt_BR"]


def subjects(fake: Faker, n: int) -> list[str]:
    """Member/user ids as production systems make them: usernames, emails, numeric ids."""
    makers: list[Callable[[], str]] = [
        lambda: fake.unique.user_name() + str(fake.random_int(10, 9999)),
        lambda: fake.unique.email(),
        lambda: "M" + str(fake.unique.random_int(10_000_000, 99_999_999)),
        lambda: str(fake.unique.uuid4()),
    ]
    return [makers[i % len(makers)]() for i in range(n)]


def envelopes(fake: Faker, who: list[str], runs: int, tag: str) -> list[dict[str, Any]]:
    """graph-tool-call events in SSE envelopes; each run belongs to one subject."""
    out: list[dict[str, Any]] = []
    for r in range(runs):
        subject = who[r % len(who)]
        run = f"{tag}-{r}"
        events = [
            {"type": "plan.started", "plan_id": f"p{r}", "goal": fake.sentence()},
            {
                "type": "step.started",
                "plan_id": f"p{r}",
                "step_id": "s1",
                "tool": "get_orders",
                "args": {"user_id": subject, "mbrId": subject, "limit": fake.random_int(1, 9)},
            },
            {
                "type": "step.completed",
                "plan_id": f"p{r}",
                "step_id": "s1",
                "tool": "get_orders",
                "output": {"orders": [{"id": fake.random_int(), "memo": fake.sentence()}]},
                "duration_ms": fake.random_int(1, 900),
            },
            {"type": "plan.completed", "plan_id": f"p{r}", "output": {"ok": True}},
        ]
        out += [
            {"type": "runner.event", "run_id": run, "seq": i, "event": e}
            for i, e in enumerate(events, 1)
        ]
    return out


def jsonl(items: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(e, ensure_ascii=False).encode() + b"\n" for e in items)


def timed_events(
    fake: Faker,
    start: datetime,
    count: int,
    step: timedelta,
    rng: random.Random,
    tag: str = "run",
) -> list[NewEvent]:
    """Events with recorded_at rising by *step*; about 1 in 40 recorded earlier than its
    neighbours (a late spool replay), so a time cut is not a position cut."""
    out = []
    for i in range(count):
        t = start + step * i
        if rng.random() < 0.025:
            t -= step * rng.randint(1, 400)
        out.append(
            NewEvent(
                run_id=f"{tag}-{i // 7}",
                seq=i % 7 + 1,
                type=rng.choice(["step.started", "step.completed", "plan.started"]),
                source="graph_tool_call",
                payload={"text": fake.paragraph(), "n": i, "city": fake.city()},
                recorded_at=t,
                redactions={"entities": {"PERSON": rng.randint(0, 3)}} if i % 3 else None,
            )
        )
    return out


def append_in_batches(store: Store, events: list[NewEvent], rng: random.Random) -> None:
    i = 0
    while i < len(events):
        n = rng.randint(1, 400)
        store.append(events[i : i + n])
        i += n


def positions(store: Store, where: str = "1 = 1", **params: Any) -> list[int]:
    with store.reading() as conn:
        rows = conn.execute(
            sa.text(f"SELECT position FROM events WHERE {where} ORDER BY position"), params
        )
        return [int(r[0]) for r in rows]
