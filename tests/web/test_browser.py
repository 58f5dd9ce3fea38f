"""The review page in a real browser: Debian's Chromium driven by Playwright, against
``tracelake serve`` in its own process (both backends). Log in, review suggestions from the
queue, see the decisions through the CLI, open a run page; live projections move the dashboard
without anyone running ``tracelake project``.

Skipped without /usr/bin/chromium, unless TRACELAKE_REQUIRE_BROWSER=1 (CI sets it; see
.ci/browser.sh). TRACELAKE_SCREENSHOTS=DIR saves the README's screenshots there.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_cli import tl
from tests.conftest import REPO
from tests.ingest.helpers import ingest_bytes
from tests.web import helpers
from tracelake.store import Store

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
SHOTS = os.environ.get("TRACELAKE_SCREENSHOTS")

pytestmark = pytest.mark.browser


def _require_browser() -> None:
    if CHROMIUM.exists():
        return
    reason = f"no Chromium at {CHROMIUM}; run .ci/browser.sh (apt-get install chromium)"
    if os.environ.get("TRACELAKE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"TRACELAKE_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(f"SKIPPING BROWSER TESTS: {reason}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def server(loaded: Store, db_url: str, tmp_path: Path) -> Iterator[str]:
    _require_browser()
    port = _free_port()
    env = {
        **os.environ,
        "TRACELAKE_DATABASE_URL": db_url,
        "TRACELAKE_UI_TOKEN": helpers.TOKEN,
        "PYTHONPATH": str(REPO),
    }
    log = (tmp_path / "serve.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tracelake", "serve", "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp_path,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError((tmp_path / "serve.log").read_text()) from None
                time.sleep(0.2)
        yield base
        proc.terminate()  # SIGTERM: uvicorn drains, the lifespan stops the follower, and
        # uvicorn then re-raises the signal it captured (exit status -15, not a crash)
        assert proc.wait(timeout=60) in (0, -signal.SIGTERM), (tmp_path / "serve.log").read_text()
        assert "Traceback" not in (tmp_path / "serve.log").read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        log.close()


@pytest.fixture
def page(server: str) -> Iterator[Any]:
    from playwright.sync_api import Dialog, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        pg = context.new_page()
        dialogs: list[str] = []

        def dismiss(d: Dialog) -> None:
            dialogs.append(d.message)
            d.dismiss()

        pg.on("dialog", dismiss)
        pg.set_default_timeout(30_000)
        yield pg
        context.close()
        browser.close()
        assert not dialogs, f"a script ran in the page: {dialogs}"


def _shot(pg: Any, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        pg.screenshot(path=str(Path(SHOTS) / name), full_page=True)


def _show(db_url: str, sid: str) -> dict[str, Any]:
    done = tl("suggestions", "show", sid, "--json", url=db_url)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


@pytest.mark.slow
def test_review_in_a_browser(page: Any, server: str, loaded: Store, db_url: str) -> None:
    pg = page
    pg.goto(f"{server}/queue")
    assert "/login" in pg.url  # pages need a session
    pg.fill("input[name=name]", "ops-lead")
    pg.fill("input[name=token]", "wrong-token-000000000")
    pg.click("button[type=submit]")
    assert pg.locator(".error").inner_text() == "wrong token"
    pg.fill("input[name=name]", "ops-lead")
    pg.fill("input[name=token]", helpers.TOKEN)
    pg.click("button[type=submit]")
    pg.wait_for_url(f"{server}/queue")
    cookie = next(c for c in pg.context.cookies() if c["name"] == "tl_session")
    assert cookie["httpOnly"] and cookie["secure"] and cookie["sameSite"] == "Strict"

    pg.click("nav.tabs >> text=/^promotable/")
    pg.wait_for_url("**/queue?status=promotable")
    pg.select_option("select[name=collection]", "orders-api")
    pg.click('button:has-text("Filter")')
    pg.wait_for_url("**/queue?status=promotable&collection=orders-api")
    collections = pg.locator("table.queue tbody tr td:nth-child(2)").all_inner_texts()
    assert collections and set(collections) == {"orders-api"}
    _shot(pg, "queue.png")
    first = pg.locator("table.queue tbody tr a").first
    first_id = first.inner_text()
    first.click()
    pg.wait_for_url("**/suggestions/**")
    assert pg.locator("h1 small").inner_text() == first_id
    assert pg.get_by_text("Runs behind it").is_visible()
    _shot(pg, "suggestion.png")

    # reject needs a reason: the browser refuses the empty form, nothing is recorded
    pg.locator("button.reject").click()
    assert pg.locator("h1 small").inner_text() == first_id
    assert _show(db_url, first_id)["suggestion"]["status"] == "promotable"
    pg.fill(
        "form:has(button.reject) input[name=reason]", "<script>alert(1)</script> flaky upstream"
    )
    pg.locator("button.reject").click()
    pg.wait_for_function(f"document.querySelector('h1 small').innerText !== {json.dumps(first_id)}")
    second_id = pg.locator("h1 small").inner_text()
    shown = _show(db_url, first_id)  # the decision, seen from the CLI
    assert shown["suggestion"]["status"] == "rejected"
    last = shown["history"][-1]
    assert last["decided_by"] == "ops-lead" and "flaky upstream" in last["reason"]

    # skip moves on without recording anything
    before = len(_show(db_url, second_id)["history"])
    pg.locator("a.skip").click()
    pg.wait_for_function(
        f"document.querySelector('h1 small').innerText !== {json.dumps(second_id)}"
    )
    third_id = pg.locator("h1 small").inner_text()
    assert len(_show(db_url, second_id)["history"]) == before
    pg.locator("button.approve").click()
    pg.wait_for_function(f"document.querySelector('h1 small').innerText !== {json.dumps(third_id)}")
    approved = _show(db_url, third_id)
    assert approved["suggestion"]["status"] == "promoted"
    assert approved["history"][-1]["decided_by"] == "ops-lead"

    # the rejected one shows its history, the hostile reason as text
    pg.goto(f"{server}/suggestions/{first_id}")
    assert "<script>alert(1)</script>" in pg.locator("table").last.inner_text()
    # a run page, from the evidence
    pg.locator("ul.runs a").first.click()
    pg.wait_for_url("**/runs/**")
    assert pg.get_by_role("heading", name="Timeline").is_visible()
    assert pg.locator("table.timeline tbody tr").count() > 2
    # a failed run: where, why, what the operator should do (the `explain` view)
    pg.goto(f"{server}/runs/orders-api-d1-server_500_exhausted")
    assert pg.get_by_role("heading", name="Failure").is_visible()
    assert "http_5xx" in pg.locator("dl.facts").last.inner_text()
    assert pg.locator("tr.bad").count() >= 1  # the failed and retried steps stand out
    _shot(pg, "run.png")


def test_dashboard_moves_with_live_projections(
    page: Any, server: str, loaded: Store, db_url: str
) -> None:
    pg = page
    pg.goto(f"{server}/login")
    pg.fill("input[name=name]", "ops-lead")
    pg.fill("input[name=token]", helpers.TOKEN)
    pg.click("button[type=submit]")
    pg.wait_for_url(f"{server}/")
    assert pg.locator("svg").count() >= 3  # failures per collection, latency, funnel
    _shot(pg, "dashboard.png")
    report = ingest_bytes(loaded, helpers.envelopes("late-api", "live", random.Random(7)))
    assert report.appended
    deadline = time.monotonic() + 90
    while "late-api" not in pg.content():  # a new collection's chart, with no `project` run
        assert time.monotonic() < deadline, "the dashboard never showed the new events"
        time.sleep(0.5)
        pg.reload()
    assert pg.locator(".stat .n").first.inner_text() == str(loaded.stats()["events"])
