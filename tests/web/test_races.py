"""Two operators deciding the same suggestion at once (threads through the API, both
backends): exactly one decision per version is stored, the loser is told, nothing is lost."""

from __future__ import annotations

import threading
from typing import Any

from tests.web import helpers
from tracelake.promotion import review as sug
from tracelake.store import Store

AUTH = {"authorization": f"Bearer {helpers.TOKEN}"}


def test_concurrent_decisions_on_one_suggestion(loaded: Store) -> None:
    sid = sug.list_suggestions(loaded, status="promotable")[0]["id"]
    c = helpers.client(loaded)
    start = threading.Barrier(6)
    results: list[tuple[str, int, Any]] = []

    def decide(action: str, n: int) -> None:
        body = {"by": f"op{n}", "reason": f"reason {n}"}
        start.wait()
        r = c.post(f"/api/suggestions/{sid}/{action}", json=body, headers=AUTH)
        results.append((action, r.status_code, r.json()))

    threads = [
        threading.Thread(target=decide, args=("approve" if n % 2 else "reject", n))
        for n in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len(results) == 6
    assert {code for _, code, _ in results} <= {200, 409}, results
    final = sug.get(loaded, sid).document["status"]
    history = [h for h in sug.history(loaded, sid) if h["actor"] == "operator"]
    # versions are unique: each stored operator event moved the suggestion on from the last
    versions = [h["seq"] for h in history]
    assert len(versions) == len(set(versions))
    assert history and history[-1]["to_status"] == final
    assert final in ("promoted", "rejected")
    if final == "rejected":
        # never promoted after a rejection
        after = history[[h["to_status"] for h in history].index("rejected") :]
        assert all(h["to_status"] == "rejected" for h in after)
    for action, code, body in results:
        if code == 409:
            assert "error" in body
        else:
            assert body["status"] in ("promoted", "rejected"), (action, body)
