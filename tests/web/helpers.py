"""A corpus for the web tests: the demo scenarios through graph-tool-call's real PlanRunner,
spread over collections and days, with tool latencies drawn at random (the demo tools answer
instantly), then projected and promoted as an operator would (`project`, `promote`)."""

from __future__ import annotations

import contextlib
import json
import random
import re
from collections.abc import Iterator
from dataclasses import asdict, replace
from datetime import timedelta
from typing import Any

from starlette.testclient import TestClient

from pipelines import promote as job
from pipelines.promotion_policy import Policy
from tests.ingest.helpers import ingest_bytes
from tracelake.demo import run_scenario, scenarios
from tracelake.projections import ProjectionEngine
from tracelake.scrub import load_pseudonym_key
from tracelake.store import Store
from tracelake.web import WebConfig, create_app

TOKEN = "test-token-0123456789abcdef"
BASE = "https://127.0.0.1"  # https: the client sends Secure cookies back
LATENCY_MU = {"searchOrders": 4.0, "getOrderDetail": 5.0, "getShipment": 3.5}


@contextlib.contextmanager
def recorded_earlier(store: Store, offset: timedelta) -> Iterator[None]:
    """Stage history: events appended meanwhile are stamped ``offset`` earlier."""
    original = store.append

    def shifted(batch: Any) -> Any:
        return original([replace(e, recorded_at=e.recorded_at - offset) for e in batch])

    store.append = shifted  # type: ignore[method-assign]
    try:
        yield
    finally:
        del store.append


def envelopes(
    collection: str, tag: str, rng: random.Random, names: set[str] | None = None
) -> bytes:
    lines = []
    for s in scenarios():
        if names is not None and s.name not in names:
            continue
        run_id = f"{collection}-{tag}-{s.name}"
        meta = {"collection_id": collection}
        for seq, e in enumerate(run_scenario(s, trace_metadata=meta), 1):
            event = asdict(e)
            if event.get("duration_ms") is not None and event.get("tool"):
                mu = LATENCY_MU.get(str(event["tool"]), 3.0)
                event["duration_ms"] = max(int(rng.lognormvariate(mu, 0.7)), 1)  # int: the contract
            env = {"type": "runner.event", "run_id": run_id, "seq": seq, "event": event}
            lines.append(json.dumps(env, ensure_ascii=False).encode() + b"\n")
    return b"".join(lines)


def load(
    store: Store,
    collections: tuple[str, ...] = ("orders-api",),
    days: int = 2,
    seed: int | None = None,
    names: set[str] | None = None,
) -> int:
    """Ingest, project, promote. Returns the seed (print it when a test fails)."""
    seed = random.randrange(2**32) if seed is None else seed
    rng = random.Random(seed)
    for day in range(days):
        offset = timedelta(days=days - 1 - day, minutes=rng.randrange(600))
        for collection in collections:
            with recorded_earlier(store, offset):
                report = ingest_bytes(store, envelopes(collection, f"d{day}", rng, names))
            assert not report.quarantined_total, dict(report.quarantined)
    ProjectionEngine(store).catch_up()
    job.run(store, Policy())
    ProjectionEngine(store).catch_up()
    return seed


def client(
    store: Store, token: str | None = TOKEN, read_only: bool = False, follow: bool = False
) -> TestClient:
    config = WebConfig(token=token, read_only=read_only, follow=follow)
    return TestClient(create_app(store, config, load_pseudonym_key(store.url)), base_url=BASE)


CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def csrf_of(html: str) -> str:
    found = CSRF.search(html)
    assert found, "no CSRF field in the page"
    return found.group(1)


def login(c: TestClient, name: str = "ops-lead", token: str | None = TOKEN) -> str:
    """Sign in through the form; returns the session's CSRF token (from the next page)."""
    page = c.get("/login")
    form = {"csrf": csrf_of(page.text), "name": name, "next": "/queue"}
    if token is not None:
        form["token"] = token
    origin = str(c.base_url).rstrip("/")
    done = c.post("/login", data=form, headers={"origin": origin}, follow_redirects=False)
    assert done.status_code == 303, done.text
    return csrf_of(c.get("/queue").text)
