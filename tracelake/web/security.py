"""Access: signed session cookies for the pages, CSRF tokens for every form, the bearer token
for the API and ``/metrics``, and the response headers every page gets.

* A session is ``base64(json{name, csrf, expires}).hmac`` in an HttpOnly, SameSite=Strict
  cookie (Secure unless configured off for a plain-HTTP test host); nothing else is kept on the
  server, so sessions end when the process restarts with a fresh secret.
* Every form carries the session's CSRF token (synchronizer token), compared in constant time;
  the login form, which has no session yet, uses a double-submit cookie. A POST whose
  ``Origin`` names another site is refused before that.
* The API takes ``Authorization: Bearer <TRACELAKE_UI_TOKEN>``; its POSTs must be
  ``application/json``, which a cross-site form cannot send without a CORS preflight (never
  granted), so it needs no CSRF token.
* Without a token (loopback only) requests must name a loopback ``Host``: a DNS-rebinding page
  cannot reach the server under its own name.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tracelake.web.server_config import WebConfig, is_loopback

SESSION_COOKIE = "tl_session"
LOGIN_COOKIE = "tl_login"
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


@dataclass(frozen=True, slots=True)
class Session:
    name: str
    csrf: str
    expires: float


def _sign(secret: bytes, body: bytes) -> str:
    return hmac.new(secret, body, hashlib.sha256).hexdigest()


def make_session(config: WebConfig, name: str) -> tuple[Session, str]:
    session = Session(name, secrets.token_urlsafe(32), time.time() + config.session_hours * 3600)
    raw = json.dumps({"n": session.name, "c": session.csrf, "e": session.expires}).encode()
    body = base64.urlsafe_b64encode(raw).rstrip(b"=")  # no padding: no quoted cookie
    return session, f"{body.decode()}.{_sign(config.secret, body)}"


def read_session(config: WebConfig, request: Request) -> Session | None:
    value = request.cookies.get(SESSION_COOKIE)
    if not value or "." not in value or len(value) > 4096:
        return None
    body, _, mac = value.rpartition(".")
    if not hmac.compare_digest(mac, _sign(config.secret, body.encode())):
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(body.encode() + b"=" * (-len(body) % 4)))
        session = Session(str(data["n"]), str(data["c"]), float(data["e"]))
    except (ValueError, KeyError, TypeError):
        return None
    return session if session.expires > time.time() else None


def set_cookie(config: WebConfig, response: Response, name: str, value: str, age: int) -> None:
    response.set_cookie(
        name,
        value,
        max_age=age,
        path="/",
        secure=config.secure_cookies,
        httponly=True,
        samesite="strict",
    )


def csrf_ok(expected: str | None, given: Any) -> bool:
    if not expected or not isinstance(given, str):
        return False
    return hmac.compare_digest(expected.encode(), given.encode())


def token_ok(config: WebConfig, request: Request) -> bool:
    """The API's bearer token (always true when no token is configured: loopback only)."""
    if config.token is None:
        return True
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(
        given.strip().encode(), config.token.encode()
    )


def password_ok(config: WebConfig, given: str) -> bool:
    if config.token is None:
        return True
    return hmac.compare_digest(given.encode(), config.token.encode())


def same_origin(request: Request) -> bool:
    """A POST from a page of this server (or a client that sends no Origin, like curl)."""
    origin = request.headers.get("origin")
    if origin is None:
        return True
    host = request.headers.get("host", "")
    return urlsplit(origin).netloc == host


def safe_next(target: str | None) -> str:
    """A local path to go to after login; anything else (``//evil``, ``https:``) is ``/``."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    if any(ord(c) <= 0x20 or ord(c) == 0x7F for c in target):
        return "/"  # browsers drop tabs and newlines: "/\t/evil" would become "//evil"
    return target


class Guard:
    """ASGI middleware: the loopback Host rule and the security headers on every response."""

    def __init__(self, app: ASGIApp, config: WebConfig) -> None:
        self.app = app
        self.config = config

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.config.token is None and not _loopback_host(scope):
            response = Response("this server only answers to a loopback Host\n", 421)
            await response(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                for key, value in _HEADERS:
                    headers.append((key, value))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # no-referrer makes Origin "null"
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]


def _loopback_host(scope: Scope) -> bool:
    for key, value in scope.get("headers", []):
        if key == b"host":
            host = value.decode("latin-1")
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            return is_loopback(name)
    return True  # HTTP/1.0 without Host: nothing to rebind
