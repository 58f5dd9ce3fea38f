"""Migration 0010: payload keys the indexed columns hold are stored once and read back in
place; a NewEvent whose keys differ from its columns keeps them; the downgrade puts the keys
back into the rows and the chain still verifies (both backends)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.ingest.helpers import agentlane_bytes, gtc_runs, ingest_bytes, jsonl
from tracelake.lifecycle.verify import verify
from tracelake.store import NewEvent, Store
from tracelake.store.column_keys import KEYS, mask_of, omitted, restore, without


def _scalar(store: Store, sql: str) -> int:
    with store.reading() as conn:
        return int(conn.execute(sa.text(sql)).scalar() or 0)


def _has_key(store: Store, key: str) -> str:
    if store.dialect == "postgresql":
        return f"payload ? '{key}'"
    return f"json_type(payload, '$.{key}') IS NOT NULL"


def _stored_rows(store: Store) -> list[tuple[Any, Any]]:
    with store.reading() as conn:
        rows = conn.execute(sa.text("SELECT payload, redactions FROM events ORDER BY position"))

        def decode(v: Any) -> Any:
            return v if store.dialect == "postgresql" or v is None else json.loads(v)

        return [(decode(p), decode(r)) for p, r in rows]


def _ingest_both(store: Store) -> list[dict[str, Any]]:
    events = [e for run in gtc_runs() for e in run]
    ingest_bytes(store, jsonl(events))
    ingest_bytes(store, agentlane_bytes(), origin="agentlane.jsonl")
    return events


def test_column_keys_are_stored_once_and_read_back_whole(store: Store) -> None:
    events = _ingest_both(store)
    stored = list(store.iter_all())
    gtc = [e for e in stored if e.source == "graph_tool_call"]
    assert len(gtc) == len(events)
    # every key is back, with the column's value, and the raw event's keys are all there
    for e, raw in zip(gtc, events, strict=True):
        assert e.payload["type"] == e.type == raw["type"]
        assert e.payload.get("plan_id") == e.plan_id
        assert set(raw) <= set(e.payload)
        assert e.redactions is None or set(e.redactions) == {"r"}
    # ... and none of them is in a stored graph-tool-call row
    for key in KEYS:
        left = f"SELECT count(*) FROM events WHERE source = 'graph_tool_call' AND {key} IS NOT NULL"
        assert _scalar(store, f"{left} AND {_has_key(store, key)}") == 0, key
    assert _scalar(store, "SELECT count(*) FROM events WHERE plan_id IS NOT NULL") > 0
    # a re-ingest recognises every event of either form (the hash is over the whole payload)
    again = ingest_bytes(store, jsonl(events))
    assert (again.appended, again.duplicates) == (0, len(events))
    assert ingest_bytes(store, agentlane_bytes(), origin="agentlane.jsonl").appended == 0
    assert [e.payload for e in store.iter_all()] == [e.payload for e in stored]


def test_a_new_event_keeps_the_keys_its_columns_do_not_hold(store: Store) -> None:
    now = datetime.now(UTC)
    payloads: list[dict[str, Any]] = [
        {"type": "x", "plan_id": "p", "step_id": "s", "tool": "t", "n": 1},  # all four go
        {"type": "x", "plan_id": "other", "step_id": 7, "tool": None, "n": 2},  # only type goes
        {"n": 3},  # nothing to leave out; the columns are not added on reading
        {"type": "unknown", "n": 4},  # 'unknown' is never left out
        {"plan_id": "p", "trace_metadata": {"collection_id": "c"}, "type": "x", "n": 5},
    ]
    new = [
        NewEvent(
            "ck",
            i,
            "unknown" if i == 4 else "x",
            "tracelake",
            p,
            now,
            plan_id="p",
            step_id="s",
            tool="t",
        )
        for i, p in enumerate(payloads, start=1)
    ]
    assert store.append(new).appended == len(new)
    got = store.run_events("ck")
    assert [e.payload for e in got] == payloads
    assert all(e.redactions is None for e in got)
    marks = [mask_of((r or {}).get("c")) for _, r in _stored_rows(store)]
    assert marks == [15, 1, 0, 0, 3]
    assert store.append(new).duplicates == len(new)


def test_downgrade_puts_the_keys_back_and_the_chain_verifies(store: Store) -> None:
    events = _ingest_both(store)
    now = datetime.now(UTC)
    store.append([NewEvent("ck", 1, "x", "tracelake", {"type": "x"}, now)])  # an empty rest
    before = [e.payload for e in store.iter_all()]
    assert any(r and "c" in r for _, r in _stored_rows(store))
    store.downgrade("0009")
    assert verify(store, full=True).ok
    rows = _stored_rows(store)
    assert not any(r and "c" in r for _, r in rows)
    assert [e.payload for e in store.iter_all()] == before  # read by 0009's rules: whole
    assert sum(1 for p, _ in rows if "type" in p) == len(rows)
    store.upgrade()
    assert verify(store, full=True).ok
    again = ingest_bytes(store, jsonl(events))
    assert (again.appended, again.duplicates) == (0, len(events))


_values = st.one_of(st.none(), st.integers(), st.text(max_size=4), st.sampled_from(["p", "x"]))
_payloads = st.dictionaries(st.sampled_from([*KEYS, "trace_metadata", "n"]), _values)
_columns = st.tuples(*(st.one_of(st.none(), st.sampled_from(["p", "x", "unknown"])),) * 4)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(_payloads, _columns)
def test_what_is_left_out_is_exactly_what_is_put_back(
    payload: dict[str, Any], columns: tuple[str | None, str | None, str | None, str | None]
) -> None:
    mask = omitted(payload, columns)
    stored = without(payload, mask)
    assert restore(stored, mask, columns) == payload
    assert all(payload[k] == columns[KEYS.index(k)] for k in set(payload) - set(stored))
