"""The promotion workflow as an operator runs it: demo -> promote -> decide -> export."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
import sqlalchemy as sa

from tests.cli.test_cli import tl
from tracelake.store.connection import create_engine


@pytest.mark.slow
def test_promote_decide_and_export(db_url: str, tmp_path: Path) -> None:
    assert tl("demo", "--repeat", "3", url=db_url, cwd=tmp_path).returncode == 0
    dry = tl("promote", "--dry-run", url=db_url)
    assert dry.returncode == 0, dry.stderr
    assert tl("suggestions", "list", "--json", url=db_url).stdout.strip() == "[]"  # dry: nothing
    first = tl("promote", url=db_url)
    assert first.returncode == 0 and "appended" in first.stdout
    second = tl("promote", url=db_url)
    assert "nothing to change" in second.stdout  # idempotent

    listed = json.loads(tl("suggestions", "list", "--json", url=db_url).stdout)
    keys = {
        "id",
        "type",
        "collection_id",
        "query_family",
        "query_fingerprint",
        "target",
        "status",
        "observations",
        "prior_failure_count",
        "evidence",
    }
    assert listed and all(keys <= set(s) for s in listed)
    promotable = [s for s in listed if s["status"] == "promotable"]
    assert len(promotable) >= 2
    target = next(s for s in promotable if s["type"] == "target_preference")
    other = next(s for s in promotable if s["type"] == "binding_repair")

    assert (
        tl("suggestions", "approve", target["id"], "--by", "ops-lead", url=db_url).returncode == 0
    )
    rejected = tl(
        "suggestions", "reject", other["id"], "--reason", "call 010-2233-4455 first", url=db_url
    )
    assert rejected.returncode == 0, rejected.stderr
    shown = tl("suggestions", "show", target["id"], url=db_url).stdout
    assert "promoted" in shown and "ops-lead" in shown
    assert "010-2233-4455" not in tl("suggestions", "show", other["id"], url=db_url).stdout
    assert tl("promote", url=db_url).returncode == 0  # the policy never undoes a decision
    after = {
        s["id"]: s["status"]
        for s in json.loads(tl("suggestions", "list", "--json", url=db_url).stdout)
    }
    assert (after[target["id"]], after[other["id"]]) == ("promoted", "rejected")

    # the analytics views report the event-sourced status wherever a suggestion exists
    engine = create_engine(db_url)
    with engine.connect() as conn:
        records = conn.execute(
            sa.text(
                "SELECT DISTINCT promotion_status FROM v_learning_records WHERE suggestion_id = :i"
            ),
            {"i": target["id"]},
        ).all()
        repairs = conn.execute(
            sa.text(
                "SELECT DISTINCT promotion_status FROM v_binding_repair_evidence WHERE suggestion_id = :i"
            ),
            {"i": other["id"]},
        ).all()
    engine.dispose()
    assert [tuple(r) for r in records] == [("promoted",)]
    assert [tuple(r) for r in repairs] == [("rejected",)]

    learning = json.loads(tl("export", "learning", "--collection", "orders-api", url=db_url).stdout)
    block = learning["learning"]
    assert {"suggestions", "promotion_policy", "summary"} <= set(block)
    assert target["id"] in {s["id"] for s in block["suggestions"]}

    lake = tmp_path / "lake"
    assert tl("export", "parquet", str(lake), url=db_url).returncode == 0
    files = sorted(lake.rglob("*.parquet"))
    assert files and any("collection=" in str(f) and "date=" in str(f) for f in files)
    events = pl.scan_parquet(
        str(lake / "events" / "**" / "*.parquet"), hive_partitioning=True
    ).collect()
    assert events.height > 0 and "collection" in events.columns
    assert tl("export", "parquet", str(lake), url=db_url).returncode == 0
    assert sorted(lake.rglob("*.parquet")) == files  # nothing new: nothing written
