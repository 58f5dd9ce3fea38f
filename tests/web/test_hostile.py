"""Stored text is hostile until shown otherwise: run ids, tool and collection names, goals,
exception types and operator reasons full of markup, script, template syntax, control and bidi
characters must come out of every page as text, and every link built from them must lead back
to the same object."""

from __future__ import annotations

import json
import random
from html.parser import HTMLParser
from urllib.parse import quote, unquote, urlsplit

import pytest

from tests.ingest.helpers import ingest_bytes
from tests.web import helpers
from tracelake.projections import ProjectionEngine
from tracelake.promotion import review as sug
from tracelake.store import Store

HOSTILE = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "</title><svg onload=alert(1)>",
    "{{ 7*7 }}{% raw %}",
    "javascript:alert(1)",
    "a\x1b[31mred\x07\x08\x7f\u0085",
    "\u202eevil\u202c\u2066x\u2069",
    "&lt;already&gt; &amp;",
    "../../etc/passwd?x=1#frag",
]
ALPHABET = "<>&\"'`/\\=;:{}%#?\x00\x01\x1b\x7f\u202e\u2028 aZ9가"
# the elements the templates and charts write; anything else came from stored text
ALLOWED_TAGS = {
    "html", "head", "meta", "title", "link", "body", "header", "a", "nav", "div", "span",
    "strong", "form", "input", "button", "main", "section", "h1", "h2", "h3", "p", "small",
    "table", "thead", "tbody", "tr", "th", "td", "ul", "li", "dl", "dt", "dd", "label",
    "select", "option", "meter", "figure", "figcaption", "code", "svg", "rect", "text", "line",
}  # fmt: skip


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.handlers: list[str] = []
        self.links: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        for name, value in attrs:
            if name.startswith("on"):
                self.handlers.append(name)
            if name == "href" and value and value.startswith("/"):
                self.links.append(value)
            if name in ("href", "action") and value and value.lower().startswith("javascript"):
                self.handlers.append(value)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def check(html: str) -> Page:
    page = Page()
    page.feed(html)
    assert page.tags <= ALLOWED_TAGS, page.tags - ALLOWED_TAGS
    assert not page.handlers
    assert "<script" not in html.lower()
    raw = [c for c in html if (ord(c) < 32 and c not in "\n\t\r") or 0x7F <= ord(c) <= 0x9F]
    assert not raw, f"raw control characters in the page: {raw!r}"
    assert not any(c in html for c in "\u202e\u2066\u2069\u2028")
    return page


def hostile_run(run_id: str, text: str, seq0: int = 1) -> list[dict[str, object]]:
    meta = {"collection_id": text, "failure_reason": "http_5xx"}
    events: list[dict[str, object]] = [
        {"type": "plan.started", "plan_id": text, "goal": text, "step_count": 1},
        {"type": "step.started", "plan_id": text, "step_id": text, "tool": text, "index": 1},
        {"type": "step.completed", "plan_id": text, "step_id": text, "tool": text,
         "duration_ms": 12, "output_preview": {"x": text}},
        {"type": "step.started", "plan_id": text, "step_id": "s2", "tool": text, "index": 2},
        {"type": "step.failed", "plan_id": text, "step_id": "s2", "tool": text,
         "duration_ms": 40,
         "error": {"kind": "tool", "message": text, "exception_type": text, "http_status": 503}},
        {"type": "plan.aborted", "plan_id": text, "failed_step": "s2",
         "error": {"kind": "tool", "message": text, "exception_type": text}},
    ]  # fmt: skip
    return [
        {"type": "runner.event", "run_id": run_id, "seq": seq0 + i,
         "event": {**e, "trace_metadata": meta}}
        for i, e in enumerate(events)
    ]  # fmt: skip


@pytest.fixture
def seed() -> int:
    value = random.randrange(2**32)
    print(f"hostile text seed {value}")
    return value


def test_hostile_stored_text_is_shown_as_text_everywhere(store: Store, seed: int) -> None:
    rng = random.Random(seed)
    texts = [*HOSTILE, "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 40)))]
    lines = []
    for i, text in enumerate(texts):
        for env in hostile_run(f"{text}-{i}", text):
            lines.append(json.dumps(env, ensure_ascii=False).encode() + b"\n")
    report = ingest_bytes(store, b"".join(lines))
    assert report.appended > 0
    helpers.load(store, ("<b>coll</b>",), days=2, seed=seed, names={"binding_repaired", "timeout"})
    ProjectionEngine(store).catch_up()
    c = helpers.client(store)
    csrf = helpers.login(c, name="<i>ops</i>\x1b")
    docs = sug.list_suggestions(store, status="promotable")
    # an operator's hostile reason, stored through the scrubber, shown in the history
    sid = docs[0]["id"]
    c.post(
        f"/suggestions/{sid}/decide",
        data={"csrf": csrf, "action": "reject", "reason": HOSTILE[0] + HOSTILE[5]},
        headers={"origin": helpers.BASE},
    )
    seen: set[str] = set()
    todo = ["/", "/queue", f"/suggestions/{sid}"] + [f"/suggestions/{d['id']}" for d in docs]
    with store.reading() as conn:
        run_ids = [r[0] for r in conn.exec_driver_sql("SELECT run_id FROM runs")]
    todo += [f"/runs/{quote(r, safe='')}" for r in run_ids[:40]]
    while todo:
        path = todo.pop()
        if path in seen or len(seen) > 150:
            continue
        seen.add(path)
        r = c.get(path)
        assert r.status_code == 200, (path, r.status_code)
        page = check(r.text)
        for link in page.links:
            if link.startswith(("/runs/", "/suggestions/")) and link not in seen:
                todo.append(link)
    # every hostile run's page was reached through a link built from its id
    reached = {unquote(urlsplit(p).path)[len("/runs/") :] for p in seen if p.startswith("/runs/")}
    assert {r for r in run_ids if not r.startswith("<b>")} <= reached | set(run_ids[:40])
    hostile_runs = [r for r in run_ids if "script" in r]
    assert hostile_runs
    response = c.get(f"/runs/{quote(hostile_runs[0], safe='')}")
    assert response.status_code == 200 and "&lt;script&gt;" in response.text


def test_api_returns_hostile_text_as_json_strings(store: Store) -> None:
    lines = [
        json.dumps(e, ensure_ascii=False).encode() + b"\n"
        for e in hostile_run("<script>x</script>", HOSTILE[1])
    ]
    ingest_bytes(store, b"".join(lines))
    ProjectionEngine(store).catch_up()
    c = helpers.client(store)
    r = c.get(
        "/api/runs/%3Cscript%3Ex%3C%2Fscript%3E",
        headers={"authorization": f"Bearer {helpers.TOKEN}"},
    )
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    assert r.json()["run_id"] == "<script>x</script>"


def test_hostile_request_ids_are_not_found_never_errors(store: Store) -> None:
    c = helpers.client(store)
    helpers.login(c)
    auth = {"authorization": f"Bearer {helpers.TOKEN}"}
    for raw in ("%00", "a%00b", "%ED%A0%80", "x" * 5000, "%2e%2e%2f%2e%2e", "%0d%0aSet-Cookie:x=1"):
        for path in (f"/suggestions/{raw}", f"/runs/{raw}"):
            assert c.get(path).status_code == 404, path
            assert c.get(f"/api{path}", headers=auth).status_code == 404, path
        for path in (f"/queue?collection={raw}", f"/api/suggestions?collection={raw}"):
            r = c.get(path, headers=auth)
            assert r.status_code == 200 and "set-cookie" not in r.headers, path


def test_an_unreachable_database_is_a_503_not_a_traceback() -> None:
    from starlette.testclient import TestClient

    from tracelake.store import open_store
    from tracelake.web import WebConfig, create_app

    down = open_store("postgresql://postgres@127.0.0.1:9/none?connect_timeout=2")
    config = WebConfig(token=helpers.TOKEN, follow=False)
    c = TestClient(create_app(down, config, b"k" * 32), base_url=helpers.BASE)
    helpers.login(c)
    page = c.get("/queue")
    assert page.status_code == 503 and "unreachable" in page.text and "Traceback" not in page.text
    api = c.get("/api/suggestions", headers={"authorization": f"Bearer {helpers.TOKEN}"})
    assert api.status_code == 503 and "TRACELAKE_DATABASE_URL" in api.json()["error"]
    metrics = c.get("/metrics", headers={"authorization": f"Bearer {helpers.TOKEN}"})
    assert metrics.status_code == 503
    down.dispose()
