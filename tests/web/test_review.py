"""The review queue on both backends: evidence beside each suggestion, approve / reject /
skip, and decisions that are the very events the CLI records."""

from __future__ import annotations

import json
import re
from typing import Any

import sqlalchemy as sa

from tests.cli.test_cli import tl
from tests.web import helpers
from tracelake.promotion import review as sug
from tracelake.promotion.decisions import run_id_of
from tracelake.scrub import get_scrubber, load_pseudonym_key
from tracelake.store import Store
from tracelake.store.schema import events, learning_records


def _api(c: Any, method: str, path: str, **kw: Any) -> Any:
    headers = {"authorization": f"Bearer {helpers.TOKEN}", **kw.pop("headers", {})}
    return getattr(c, method)(path, headers=headers, **kw)


def _decisions(store: Store, sid: str) -> list[dict[str, Any]]:
    with store.reading() as conn:
        rows = conn.execute(
            sa.select(events.c.type, events.c.source, events.c.payload, events.c.recorded_at)
            .where(events.c.run_id == run_id_of(sid))
            .order_by(events.c.position)
        ).all()
    return [{"type": r.type, "source": r.source, **r.payload} for r in rows]


def test_queue_lists_by_status_and_collection_with_progress(loaded: Store) -> None:
    c = helpers.client(loaded)
    helpers.login(c)
    docs = sug.list_suggestions(loaded)
    page = c.get("/queue").text
    for d in docs:
        assert d["id"] in page
    claims = c.get("/queue", params={"collection": "claims-api", "status": "promotable"}).text
    want = [
        d["id"] for d in docs if d["collection_id"] == "claims-api" and d["status"] == "promotable"
    ]
    assert want and all(i in claims for i in want)
    assert not any(d["id"] in claims for d in docs if d["collection_id"] == "orders-api")
    in_collection = [d for d in docs if d["collection_id"] == "claims-api"]
    assert f"<strong>0</strong> of <strong>{len(in_collection)}</strong> decided" in claims


def test_evidence_matches_the_learning_records(loaded: Store) -> None:
    c = helpers.client(loaded)
    docs = sug.list_suggestions(loaded, collection="orders-api")
    bodies = [
        _api(c, "get", f"/api/suggestions/{d['id']}").json()
        for d in docs
        if d["type"] == "target_preference"
    ]
    body = max(bodies, key=lambda b: b["evidence"]["failures"])  # one with failed runs
    target, ev = body["suggestion"], body["evidence"]
    # independently: graph-tool-call's matching rule over every learning record
    with loaded.reading() as conn:
        rows = conn.execute(sa.select(learning_records)).all()
    runs = [
        r for r in rows
        if (r.collection_id or "") == "orders-api"
        and r.query_fingerprint == target["query_fingerprint"]
        and (r.selected_target == target["target"] or target["target"] in (r.plan_tools or []))
    ]  # fmt: skip
    assert ev["successes"] == sum(1 for r in runs if r.success)
    assert ev["failures"] == sum(1 for r in runs if not r.success)
    reasons = {r.failure_reason for r in runs if not r.success}
    assert ev["failures"] and {f["failure_reason"] for f in ev["recent_failures"]} <= reasons
    helpers.login(c)
    page = c.get(f"/suggestions/{target['id']}").text
    assert f'<strong class="bad">{ev["failures"]}</strong> failed' in page
    for f in ev["recent_failures"]:
        assert f["run_id"] in page and f["failure_reason"] in page

    repair = next(d for d in docs if d["type"] == "binding_repair")
    page = c.get(f"/suggestions/{repair['id']}").text
    assert "Binding repairs" in page
    assert repair["evidence"]["recovered_path"] in page and repair["evidence"]["field_name"] in page
    assert repair["query_family"] in page
    assert "<dt>plan</dt>" not in page  # only a kind with a tool sequence shows one

    path = next(d for d in docs if d["type"] == "plan_path")
    page = c.get(f"/suggestions/{path['id']}").text
    assert path["plan_tools"]
    assert f"<dt>plan</dt><dd>{' → '.join(path['plan_tools'])}</dd>" in page


def test_approve_reject_skip_through_the_pages_are_the_cli_events(
    loaded: Store, db_url: str
) -> None:
    c = helpers.client(loaded)
    name = "reviewer kim.minji@example.co.kr"
    csrf = helpers.login(c, name=name)
    queue = [d for d in sug.list_suggestions(loaded, status="promotable")]
    first, second, third = queue[0]["id"], queue[1]["id"], queue[2]["id"]
    filters = {"status": "promotable"}
    # skip: a link to the next item, nothing recorded
    page = c.get(f"/suggestions/{first}", params=filters).text
    skip = re.search(r'class="button skip" href="([^"]+)"', page)
    assert skip and "/suggestions/" in skip.group(1)
    before = len(_decisions(loaded, first))

    done = c.post(
        f"/suggestions/{first}/decide",
        data={"csrf": csrf, "action": "approve", "reason": "", **filters},
        headers={"origin": helpers.BASE},
        follow_redirects=False,
    )
    assert done.status_code == 303 and "/suggestions/" in done.headers["location"]
    after = _decisions(loaded, first)
    assert len(after) == before + 1
    event = after[-1]
    assert event["type"] == "suggestion.status_changed" and event["to_status"] == "promoted"
    assert event["actor"] == "operator" and event["from_status"] == "promotable"
    # who: the signed-in name through the same scrubber as the CLI's --by (the email goes)
    scrubber = get_scrubber(load_pseudonym_key(loaded.url))
    assert event["decided_by"] == scrubber.scrub_text(name, max_len=100)
    assert event["decided_by"].startswith("reviewer") and "example.co.kr" not in event["decided_by"]

    # a rejection needs a reason: nothing recorded without one
    refused = c.post(
        f"/suggestions/{second}/decide",
        data={"csrf": csrf, "action": "reject", "reason": "  ", **filters},
        headers={"origin": helpers.BASE},
    )
    assert "a rejection needs a reason" in refused.text
    assert _decisions(loaded, second)[-1]["to_status"] == "promotable"
    c.post(
        f"/suggestions/{second}/decide",
        data={"csrf": csrf, "action": "reject", "reason": "flaky; call 010-2233-4455", **filters},
        headers={"origin": helpers.BASE},
    )
    rejected = _decisions(loaded, second)[-1]
    assert rejected["to_status"] == "rejected" and "010-2233-4455" not in json.dumps(rejected)

    # the CLI sees both, and records its own decision in the same shape
    shown = tl("suggestions", "show", first, "--json", url=db_url)
    assert shown.returncode == 0, shown.stderr
    history = json.loads(shown.stdout)["history"]
    assert history[-1]["to_status"] == "promoted" and history[-1]["actor"] == "operator"
    assert tl("suggestions", "approve", third, "--by", "cli-user", url=db_url).returncode == 0
    from_cli = _decisions(loaded, third)[-1]
    assert set(from_cli) == set(event) and from_cli["type"] == event["type"]
    assert from_cli["source"] == event["source"] == "tracelake"

    # a rejected suggestion is never promoted: the page says why, nothing is recorded
    again = c.post(
        f"/suggestions/{second}/decide",
        data={"csrf": csrf, "action": "approve", **filters},
        headers={"origin": helpers.BASE},
    )
    assert "never promoted" in again.text
    assert len(_decisions(loaded, second)) == len(_decisions(loaded, second))
    assert _decisions(loaded, second)[-1]["to_status"] == "rejected"


def test_json_api(loaded: Store) -> None:
    c = helpers.client(loaded)
    listed = _api(c, "get", "/api/suggestions", params={"status": "promotable"}).json()
    assert listed and {d["status"] for d in listed} == {"promotable"}
    only = _api(c, "get", "/api/suggestions", params={"collection": "claims-api"}).json()
    assert only and {d["collection_id"] for d in only} == {"claims-api"}
    assert _api(c, "get", "/api/suggestions", params={"status": "bogus"}).status_code == 400
    sid = listed[0]["id"]
    post = {"headers": {"content-type": "application/json"}}
    assert _api(c, "post", f"/api/suggestions/{sid}/approve", json={}).status_code == 400
    assert (
        _api(c, "post", f"/api/suggestions/{sid}/approve", content=b"by=x", **{
            "headers": {"content-type": "application/x-www-form-urlencoded"}
        }).status_code
        == 415
    )  # fmt: skip
    ok = _api(c, "post", f"/api/suggestions/{sid}/approve", json={"by": "api-bot"}, **post)
    assert ok.status_code == 200 and ok.json()["status"] == "promoted"
    other = listed[1]["id"]
    assert _api(c, "post", f"/api/suggestions/{other}/reject", json={"by": "a"}).status_code == 400
    bad = _api(c, "post", f"/api/suggestions/{other}/reject", json={"by": "a", "reason": "no"})
    assert bad.json()["status"] == "rejected"
    assert _api(c, "post", f"/api/suggestions/{other}/approve", json={"by": "a"}).status_code == 409
    assert _api(c, "get", "/api/suggestions/nope:1").status_code == 404
    assert _api(c, "post", "/api/suggestions/nope:1/approve", json={"by": "a"}).status_code == 404

    run_id = next(iter(r["run_id"] for r in _api(c, "get", f"/api/suggestions/{sid}").json()[
        "evidence"]["recent_runs"]))  # fmt: skip
    run = _api(c, "get", f"/api/runs/{run_id}").json()
    assert run["run_id"] == run_id and run["timeline"]
    assert _api(c, "get", "/api/runs/no-such-run").status_code == 404
    board = _api(c, "get", "/api/dashboard").json()
    assert set(board) == {"failures", "latency", "funnel"}
    assert board["funnel"]["promoted"] == 1 and board["funnel"]["rejected"] == 1


def test_the_run_page_marks_the_events_that_mean_trouble(loaded: Store) -> None:
    """The timeline's trouble rows are the runner adapter's (graph-tool-call: failed, retried,
    aborted); the page does not name them itself."""
    with loaded.reading() as conn:
        failed = conn.execute(
            sa.select(learning_records.c.run_id).where(learning_records.c.success.is_(False))
        ).scalars()
        run_id = next(iter(failed))
    c = helpers.client(loaded)
    helpers.login(c)
    page = c.get(f"/runs/{run_id}").text
    rows = re.findall(r'<tr class="(bad|)"><td>\d+</td><td>\d+</td><td>([^<]*)</td>', page)
    assert rows and any(bad for bad, _ in rows)
    trouble = {"step.failed", "plan.aborted", "step.retrying"}
    assert all((bad == "bad") == (etype in trouble) for bad, etype in rows), rows
