"""Access: the token, the login form's session cookie, CSRF on every form, read-only mode, the
loopback rule, and the headers every response carries."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.web import helpers
from tracelake.errors import ConfigError
from tracelake.promotion import review as sug
from tracelake.store import Store
from tracelake.web import WebConfig
from tracelake.web.security import safe_next
from tracelake.web.server_config import is_loopback


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "10.0.0.1", "example.com"])
def test_refuses_a_reachable_address_without_a_token(host: str) -> None:
    with pytest.raises(ConfigError, match="TRACELAKE_UI_TOKEN"):
        WebConfig(host=host).check()
    WebConfig(host=host, token=helpers.TOKEN).check()  # with a token it starts


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost"])
def test_loopback_needs_no_token(host: str) -> None:
    assert is_loopback(host)
    WebConfig(host=host).check()


def test_short_token_refused() -> None:
    with pytest.raises(ConfigError, match="at least"):
        WebConfig(token="short").check()


def test_serve_cli_refuses_and_says_what_to_do(tmp_path: object) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TRACELAKE_UI_TOKEN"}
    env.update(PYTHONPATH=str(REPO), TRACELAKE_DATABASE_URL=f"sqlite:///{tmp_path}/t.db")
    done = subprocess.run(
        [sys.executable, "-m", "tracelake", "serve", "--host", "0.0.0.0", "--port", "18089"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert "refusing to serve on 0.0.0.0" in done.stderr and "TRACELAKE_UI_TOKEN" in done.stderr


def test_pages_need_a_session_and_the_api_a_token(loaded: Store) -> None:
    c = helpers.client(loaded)
    for path in ("/", "/queue", "/runs/x", f"/suggestions/{sug.list_suggestions(loaded)[0]['id']}"):
        r = c.get(path, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"].startswith("/login?next=")
    for path in ("/api/suggestions", "/api/runs/x", "/api/dashboard", "/metrics"):
        assert c.get(path).status_code == 401
        wrong = c.get(path, headers={"authorization": "Bearer " + "x" * 26})
        assert wrong.status_code == 401 and wrong.headers["www-authenticate"].startswith("Bearer")
        ok = c.get(path, headers={"authorization": f"Bearer {helpers.TOKEN}"})
        assert ok.status_code in (200, 404)
    assert c.get("/healthz").status_code == 200


def test_login_sets_a_strict_session_cookie_and_checks_the_token(loaded: Store) -> None:
    c = helpers.client(loaded)
    page = c.get("/login")
    form = {"csrf": helpers.csrf_of(page.text), "name": "ops", "next": "/queue"}
    wrong = c.post("/login", data={**form, "token": "nope"}, headers={"origin": helpers.BASE})
    assert wrong.status_code == 401 and "wrong token" in wrong.text
    assert "tl_session" not in c.cookies
    ok = c.post(
        "/login",
        data={**form, "token": helpers.TOKEN},
        headers={"origin": helpers.BASE},
        follow_redirects=False,
    )
    assert ok.status_code == 303 and ok.headers["location"] == "/queue"
    cookie = next(v for k, v in ok.headers.multi_items() if k == "set-cookie" and "tl_session" in v)
    low = cookie.lower()
    assert "httponly" in low and "secure" in low and "samesite=strict" in low
    assert c.get("/queue").status_code == 200


def test_login_form_csrf_origin_and_open_redirect(loaded: Store) -> None:
    c = helpers.client(loaded)
    page = c.get("/login?next=//evil.example/x")
    token = helpers.csrf_of(page.text)
    base = {"name": "ops", "token": helpers.TOKEN}
    assert c.post("/login", data=base).status_code == 403  # no CSRF field
    assert c.post("/login", data={**base, "csrf": "forged"}).status_code == 403
    cross = c.post(
        "/login", data={**base, "csrf": token}, headers={"origin": "https://evil.example"}
    )
    assert cross.status_code == 403
    ok = c.post(
        "/login",
        data={**base, "csrf": token, "next": "//evil.example/x"},
        follow_redirects=False,
    )
    assert ok.headers["location"] == "/"  # never off-site


def test_every_form_needs_its_csrf_token(loaded: Store) -> None:
    c = helpers.client(loaded)
    csrf = helpers.login(c)
    sid = sug.list_suggestions(loaded, status="promotable")[0]["id"]
    for data in ({}, {"csrf": "forged"}, {"csrf": csrf + "x"}):
        r = c.post(f"/suggestions/{sid}/decide", data={"action": "approve", **data})
        assert r.status_code == 403
    cross = c.post(
        f"/suggestions/{sid}/decide",
        data={"action": "approve", "csrf": csrf},
        headers={"origin": "https://evil.example"},
    )
    assert cross.status_code == 403
    assert sug.get(loaded, sid).document["status"] == "promotable"
    assert c.post("/logout", data={}).status_code == 403
    # a session from another server (another secret) or a tampered one is no session
    other = helpers.client(loaded)
    helpers.login(other)
    stolen = other.cookies["tl_session"]
    c.cookies.clear()
    c.cookies.set("tl_session", stolen)
    assert c.get("/queue", follow_redirects=False).status_code == 303
    forged = stolen.replace(".", "x.", 1)
    other.cookies.clear()
    other.cookies.set("tl_session", forged)
    assert other.get("/queue", follow_redirects=False).status_code == 303


def test_read_only_mode(loaded: Store) -> None:
    c = helpers.client(loaded, read_only=True)
    csrf = helpers.login(c)
    sid = sug.list_suggestions(loaded, status="promotable")[0]["id"]
    page = c.get(f"/suggestions/{sid}").text
    assert "read-only" in page and "/decide" not in page and "Approve" not in page
    r = c.post(f"/suggestions/{sid}/decide", data={"action": "approve", "csrf": csrf})
    assert r.status_code == 403
    api = c.post(
        f"/api/suggestions/{sid}/approve",
        json={"by": "x"},
        headers={"authorization": f"Bearer {helpers.TOKEN}"},
    )
    assert api.status_code == 403
    assert sug.get(loaded, sid).document["status"] == "promotable"


def test_without_a_token_only_a_loopback_host_is_answered(loaded: Store) -> None:
    c = helpers.client(loaded, token=None)
    assert c.get("/api/suggestions").status_code == 200  # loopback, no token needed
    rebound = c.get("/api/suggestions", headers={"host": "attacker.example"})
    assert rebound.status_code == 421
    helpers.login(c, token=None)
    assert c.get("/queue").status_code == 200


def test_security_headers(loaded: Store) -> None:
    c = helpers.client(loaded)
    r = c.get("/login")
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["x-frame-options"] == "DENY"


@pytest.mark.parametrize(
    "target",
    ["//evil.example", "/\t/evil.example", "/\n/evil.example", "/\\evil.example",
     "https://evil.example", "javascript:alert(1)", " /x", ""],
)  # fmt: skip
def test_login_never_redirects_off_site(target: str) -> None:
    assert safe_next(target) == "/"
    assert safe_next("/queue?status=promotable") == "/queue?status=promotable"


def test_sign_in_over_plain_http_from_afar_explains_instead_of_looping(loaded: Store) -> None:
    from starlette.testclient import TestClient

    from tracelake.scrub import load_pseudonym_key
    from tracelake.web import create_app

    config = WebConfig(host="0.0.0.0", token=helpers.TOKEN, follow=False)
    app = create_app(loaded, config, load_pseudonym_key(loaded.url))
    c = TestClient(app, base_url="http://tracelake.internal:8080")
    page = c.get("/login")
    form = {"csrf": helpers.csrf_of(page.text), "name": "ops", "token": helpers.TOKEN}
    r = c.post("/login", data=form)
    assert r.status_code == 400 and "TLS reverse proxy" in r.text
    behind_proxy = TestClient(app, base_url="https://tracelake.internal")
    helpers.login(behind_proxy)  # over HTTPS the same server signs in
