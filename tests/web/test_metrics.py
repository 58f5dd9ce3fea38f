"""/metrics read by an independent parser (prometheus_client), against the database, and the
dashboard's aggregates against the rows they summarise (both backends)."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import sqlalchemy as sa
from prometheus_client.parser import text_string_to_metric_families

from tests.ingest.helpers import ingest_bytes
from tests.web import helpers
from tracelake.projections import ProjectionEngine
from tracelake.store import Store
from tracelake.store.schema import events, failure_taxonomy, suggestions, tool_calls
from tracelake.web.metrics import _label

AUTH = {"authorization": f"Bearer {helpers.TOKEN}"}


def scrape(store: Store) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    r = helpers.client(store).get("/metrics", headers=AUTH)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    out = {}
    for family in text_string_to_metric_families(r.text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_metrics_agree_with_the_database(loaded: Store) -> None:
    ingest_bytes(loaded, b'{"type": 1}\nnot json\n')  # two quarantined lines
    m = scrape(loaded)
    with loaded.reading() as conn:
        stored = conn.execute(sa.select(sa.func.count()).select_from(events)).scalar()
        by_status = dict(
            conn.execute(
                sa.select(suggestions.c.status, sa.func.count()).group_by(suggestions.c.status)
            )
            .tuples()
            .all()
        )
    assert m[("tracelake_events_stored", ())] == stored
    assert m[("tracelake_quarantined", ())] == 2
    for status in ("suggested", "promotable", "promoted", "rejected"):
        assert m[("tracelake_suggestions", (("status", status),))] == by_status.get(status, 0)
    names = [p.name for p in ProjectionEngine(loaded).projections]
    for name in names:
        assert m[("tracelake_projection_lag_events", (("projection", name),))] == 0

    # new events not yet projected: every projection lags by exactly that many
    before = stored
    lines = helpers.envelopes("orders-api", "late", __import__("random").Random(1), {"timeout"})
    ingest_bytes(loaded, lines)
    with loaded.reading() as conn:
        added = conn.execute(sa.select(sa.func.count()).select_from(events)).scalar_one() - before
    assert added > 0
    m = scrape(loaded)
    for name in names:
        assert m[("tracelake_projection_lag_events", (("projection", name),))] == added
    ProjectionEngine(loaded).catch_up(["runs"])
    m = scrape(loaded)
    assert m[("tracelake_projection_lag_events", (("projection", "runs"),))] == 0
    assert m[("tracelake_projection_lag_events", (("projection", "suggestions"),))] == added


def test_label_escaping_survives_a_real_parser() -> None:
    value = 'a"b\\c\nd}{,=x'
    text = f'# TYPE t gauge\nt{{reason="{_label(value)}"}} 1\n'
    sample = next(iter(text_string_to_metric_families(text))).samples[0]
    assert sample.labels["reason"] == value


def _nearest_rank(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(math.ceil(q * len(ordered)) - 1, 0)]


def test_dashboard_aggregates_match_the_rows(loaded: Store) -> None:
    board: dict[str, Any] = helpers.client(loaded).get("/api/dashboard", headers=AUTH).json()
    with loaded.reading() as conn:
        calls = conn.execute(sa.select(tool_calls.c.tool, tool_calls.c.duration_ms)).all()
        failures = conn.execute(
            sa.select(
                failure_taxonomy.c.collection_id,
                failure_taxonomy.c.reason,
                failure_taxonomy.c.recorded_at,
            )
        ).all()
    by_tool: dict[str, list[float]] = {}
    for tool, ms in calls:
        if ms is not None:
            by_tool.setdefault(tool, []).append(ms)
    latency = {r["tool"]: r for r in board["latency"]}
    assert set(by_tool) <= set(latency)
    for tool, values in by_tool.items():
        for q, key in ((0.5, "p50_ms"), (0.95, "p95_ms"), (0.99, "p99_ms")):
            assert latency[tool][key] == _nearest_rank(values, q), (tool, key)

    f = board["failures"]
    assert f["unit"] in ("day", "hour")  # the corpus spans two days
    fmt = "%Y-%m-%d" if f["unit"] == "day" else "%Y-%m-%d %H:00"
    want = Counter(
        (c or "", reason, (at if at.tzinfo else at.replace(tzinfo=__import__("datetime").UTC))
         .astimezone(__import__("datetime").UTC).strftime(fmt))
        for c, reason, at in failures
    )  # fmt: skip
    got: Counter[tuple[str, str, str]] = Counter()
    for collection, series in f["collections"].items():
        for reason, counts in series.items():
            for bucket, n in zip(f["buckets"], counts, strict=True):
                if n:
                    got[(collection, reason, bucket)] += n
    assert got == want
