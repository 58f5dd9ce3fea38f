"""Migration 0011: each reason's operator action is stored once (failure_actions) and
v_failure_taxonomy joins it back; the downgrade puts the column back, filled (both backends)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from tests.ingest.helpers import ingest_bytes
from tests.projections.helpers import demo_lines
from tracelake.projections import ProjectionEngine
from tracelake.runners.failure_reasons import REASONS
from tracelake.store import Store


def _rows(store: Store, sql: str) -> list[tuple[Any, ...]]:
    with store.reading() as conn:
        return [tuple(r) for r in conn.execute(sa.text(sql))]


def test_every_failure_gets_its_reasons_action_and_the_downgrade_keeps_it(store: Store) -> None:
    ingest_bytes(store, b"".join(demo_lines()))
    ProjectionEngine(store).catch_up()
    viewed = _rows(store, "SELECT position, reason, operator_action FROM v_failure_taxonomy")
    assert len({r[1] for r in viewed}) >= 3  # the demo fails in several ways
    assert all(action == REASONS[str(reason)][2] for _, reason, action in viewed)
    stored = _rows(store, "SELECT reason FROM failure_actions ORDER BY reason")
    assert [r[0] for r in stored] == sorted({r[1] for r in viewed})  # once per reason
    ProjectionEngine(store).rebuild()
    assert sorted(
        _rows(store, "SELECT position, reason, operator_action FROM v_failure_taxonomy")
    ) == sorted(viewed)
    store.downgrade("0010")
    column = "SELECT position, reason, operator_action FROM failure_taxonomy"
    assert sorted(_rows(store, column)) == sorted(viewed)
    assert sorted(
        _rows(store, "SELECT position, reason, operator_action FROM v_failure_taxonomy")
    ) == sorted(viewed)
    store.upgrade()
    assert sorted(
        _rows(store, "SELECT position, reason, operator_action FROM v_failure_taxonomy")
    ) == sorted(viewed)
