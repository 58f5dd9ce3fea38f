"""The HTML pages: login, dashboard, review queue, one suggestion, one run."""

from __future__ import annotations

import asyncio
import json
import secrets
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import ChainableUndefined, Environment, PackageLoader
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from tracelake.errors import TracelakeError
from tracelake.promotion import kinds
from tracelake.promotion import review as sug
from tracelake.runners.registry import TIMELINE_TROUBLE
from tracelake.web import charts, data
from tracelake.web.app import Context, context
from tracelake.web.security import (
    LOGIN_COOKIE,
    SESSION_COOKIE,
    Session,
    csrf_ok,
    make_session,
    password_ok,
    read_session,
    safe_next,
    same_origin,
    set_cookie,
)
from tracelake.web.server_config import is_loopback
from tracelake.web.text import CONTROL, ident, show

MAX_NAME = 100
MAX_REASON = 500
QUEUE_ROWS = 300


ENV = Environment(
    loader=PackageLoader("tracelake.web", "templates"),
    autoescape=True,
    finalize=show,
    undefined=ChainableUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
ENV.filters["seg"] = lambda v: quote(str(v), safe="")  # one URL path segment
ENV.filters["qs"] = lambda d: urlencode({k: v for k, v in d.items() if v})
ENV.filters["when"] = lambda v: str(v or "")[:16].replace("T", " ")  # ISO, to the minute (UTC)
ENV.filters["ms"] = lambda v: "" if v is None else f"{float(v):g}"


def preview(value: Any) -> str:
    """A scrubbed preview (``{"_preview": ..., "_bytes": n}``) as its value and size."""
    if isinstance(value, dict) and "_preview" in value:
        inner = json.dumps(value["_preview"], ensure_ascii=False)
        size = value.get("_bytes")
        cut = " (truncated)" if value.get("_truncated") else ""
        return f"{inner} · {size} bytes{cut}" if size is not None else inner
    return json.dumps(value, ensure_ascii=False)


ENV.filters["preview"] = preview


def render(request: Request, name: str, status: int = 200, **values: Any) -> HTMLResponse:
    ctx = context(request)
    session: Session | None = values.pop("session", None) or read_session(ctx.config, request)
    html = ENV.get_template(name).render(
        session=session,
        csrf=session.csrf if session else "",
        read_only=ctx.config.read_only,
        path=request.url.path,
        **values,
    )
    return HTMLResponse(html, status_code=status)


def _login_redirect(request: Request) -> RedirectResponse:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/login?{urlencode({'next': target})}", status_code=303)


async def _ready(ctx: Context) -> None:
    if ctx.follower is None:  # nobody keeps the suggestions current: catch up like the CLI
        await run_in_threadpool(sug.catch_up, ctx.store)


# -- login / logout --------------------------------------------------------------------------
async def login_form(request: Request) -> Response:
    ctx = context(request)
    token = secrets.token_urlsafe(32)
    response = render(
        request,
        "login.html",
        login_csrf=token,
        next=safe_next(request.query_params.get("next")),
        needs_token=ctx.config.token is not None,
        error=None,
    )
    set_cookie(ctx.config, response, LOGIN_COOKIE, token, 3600)
    return response


async def login(request: Request) -> Response:
    ctx = context(request)
    if ctx.config.secure_cookies and not _secure_origin(request):
        return render(
            request,
            "error.html",
            400,
            title="Sign-in needs HTTPS",
            message="this page came over plain HTTP from another machine, and browsers keep the "
            "session cookie (Secure) only over HTTPS or on localhost: put a TLS reverse proxy in "
            "front of `tracelake serve` (it honours X-Forwarded-Proto from 127.0.0.1)",
        )
    form = await request.form()
    target = safe_next(str(form.get("next") or ""))
    if not same_origin(request) or not csrf_ok(request.cookies.get(LOGIN_COOKIE), form.get("csrf")):
        return Response("the login form expired or came from another site; reload it\n", 403)
    name = CONTROL.sub("", str(form.get("name") or "")).strip()
    if not password_ok(ctx.config, str(form.get("token") or "")) or not name:
        await asyncio.sleep(0.5)  # slows guessing
        error = "name required" if not name else "wrong token"
        return render(
            request,
            "login.html",
            401,
            login_csrf=request.cookies.get(LOGIN_COOKIE),
            next=target,
            needs_token=ctx.config.token is not None,
            error=error,
        )
    _, cookie = make_session(ctx.config, name[:MAX_NAME])
    done = RedirectResponse(target, status_code=303)
    set_cookie(ctx.config, done, SESSION_COOKIE, cookie, int(ctx.config.session_hours * 3600))
    done.delete_cookie(LOGIN_COOKIE, path="/")
    return done


def _secure_origin(request: Request) -> bool:
    """HTTPS, or a loopback host (browsers treat localhost as a secure context)."""
    return request.url.scheme == "https" or is_loopback(request.url.hostname or "")


async def logout(request: Request) -> Response:
    ctx = context(request)
    session = read_session(ctx.config, request)
    form = await request.form()
    if session is None or not same_origin(request) or not csrf_ok(session.csrf, form.get("csrf")):
        return Response("forbidden\n", 403)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


# -- pages -----------------------------------------------------------------------------------
async def dashboard(request: Request) -> Response:
    ctx = context(request)
    if read_session(ctx.config, request) is None:
        return _login_redirect(request)
    board = await run_in_threadpool(data.dashboard, ctx.store)
    health = await run_in_threadpool(data.health, ctx.store, ctx.projection_names)
    failures = board["failures"]
    failure_charts = [
        (name or "(no collection)", charts.stacked_bars(
            f"failures by reason per {failures['unit']}: {name}", failures["buckets"], series
        ))
        for name, series in sorted(failures["collections"].items())
    ]  # fmt: skip
    f = board["funnel"]
    funnel = charts.funnel(
        "promotion funnel",
        [
            ("derived", f["derived"]),
            ("promotable", f["promotable"]),
            ("promoted", f["promoted"]),
            ("rejected", f["rejected"]),
        ],
    )
    return render(
        request,
        "dashboard.html",
        failure_charts=failure_charts,
        unit=failures["unit"],
        latency_chart=charts.latency_bars("tool latency percentiles (ms)", board["latency"]),
        latency=board["latency"],
        funnel_chart=funnel,
        health=health,
        max_lag=max(health["lag"].values(), default=0),
        follower=ctx.follower.state if ctx.follower else None,
    )


def _filters(request: Request) -> tuple[str | None, str | None]:
    status = request.query_params.get("status") or None
    if status not in (None, *sug.STATUSES):
        status = None
    collection = ident(request.query_params.get("collection") or "") or None
    return status, collection


async def queue_page(request: Request) -> Response:
    ctx = context(request)
    if read_session(ctx.config, request) is None:
        return _login_redirect(request)
    status, collection = _filters(request)
    await _ready(ctx)
    q = await run_in_threadpool(data.queue, ctx.store, status, collection)
    return render(
        request,
        "queue.html",
        q=q,
        rows=q["items"][:QUEUE_ROWS],
        more=max(len(q["items"]) - QUEUE_ROWS, 0),
        statuses=sug.STATUSES,
        filters={"status": status, "collection": collection},
        done=request.query_params.get("done"),
    )


async def suggestion_page(request: Request) -> Response:
    ctx = context(request)
    session = read_session(ctx.config, request)
    if session is None:
        return _login_redirect(request)
    sid = ident(request.path_params["sid"])
    status, collection = _filters(request)
    await _ready(ctx)
    try:
        current = await run_in_threadpool(sug.get, ctx.store, sid)
    except sug.SuggestionNotFoundError as exc:
        return render(request, "error.html", 404, title="No such suggestion", message=str(exc))
    doc = current.document
    evidence = await run_in_threadpool(data.evidence, ctx.store, doc)
    history = await run_in_threadpool(sug.history, ctx.store, sid)
    q = await run_in_threadpool(data.queue, ctx.store, status, collection)
    return render(
        request,
        "suggestion.html",
        session=session,
        doc=doc,
        sequences=kinds.sequences(doc),  # a plan path's tools, say (promotion.kinds)
        evidence=evidence,
        history=history,
        next_id=data.next_item(q["items"], sid),
        q=q,
        filters={"status": status, "collection": collection},
        error=request.query_params.get("error"),
    )


async def decide(request: Request) -> Response:
    ctx = context(request)
    session = read_session(ctx.config, request)
    if session is None:
        return _login_redirect(request)
    form = await request.form()
    sid = ident(request.path_params["sid"])
    reason = str(form.get("reason") or "").strip()
    filters = {
        "status": form.get("status") or "",
        "collection": ident(str(form.get("collection") or "")),
    }
    refused = _refused(request, ctx, session, form, sid, reason, filters)
    if refused is not None:
        return refused
    to = "promoted" if form.get("action") == "approve" else "rejected"
    try:
        await run_in_threadpool(
            sug.decide,
            ctx.store,
            ctx.scrubber,
            sid,
            to,
            session.name,
            reason[:MAX_REASON] or "approved in the review page",
        )
    except sug.SuggestionNotFoundError as exc:
        return render(request, "error.html", 404, title="No such suggestion", message=str(exc))
    except TracelakeError as exc:  # refused (rejected already, lost a race): say so
        return _back_with_error(sid, filters, str(exc))
    return await _next_in_queue(ctx, sid, filters)


def _refused(
    request: Request,
    ctx: Context,
    session: Session,
    form: Any,
    sid: str,
    reason: str,
    filters: dict[str, Any],
) -> Response | None:
    """The answer when a decision may not be made as asked (None: go ahead)."""
    if not same_origin(request) or not csrf_ok(session.csrf, form.get("csrf")):
        return render(request, "error.html", 403, title="Forbidden", message="CSRF check failed")
    if ctx.config.read_only:
        return render(request, "error.html", 403, title="Read-only", message="read-only mode")
    action = form.get("action")
    if action not in ("approve", "reject"):
        return render(request, "error.html", 400, title="Bad request", message="unknown action")
    if action == "reject" and not reason:
        return _back_with_error(sid, filters, "a rejection needs a reason")
    return None


def _back_with_error(sid: str, filters: dict[str, Any], error: str) -> Response:
    back = f"/suggestions/{quote(sid, safe='')}"
    query = urlencode({**filters, "error": error})
    return RedirectResponse(f"{back}?{query}", status_code=303)


async def _next_in_queue(ctx: Context, sid: str, filters: dict[str, Any]) -> Response:
    """After a decision: the next suggestion in the (filtered) queue, or the queue itself."""
    status = str(filters["status"]) or None
    collection = str(filters["collection"]) or None
    q = await run_in_threadpool(
        data.queue, ctx.store, status if status in sug.STATUSES else None, collection
    )
    nxt = data.next_item([d for d in q["items"] if d["id"] != sid], sid)
    query = urlencode({k: v for k, v in filters.items() if v})
    if nxt:
        return RedirectResponse(f"/suggestions/{quote(nxt, safe='')}?{query}", status_code=303)
    return RedirectResponse(f"/queue?{query}&done={quote(sid)}", status_code=303)


async def run_page(request: Request) -> Response:
    ctx = context(request)
    if read_session(ctx.config, request) is None:
        return _login_redirect(request)
    run_id = ident(request.path_params["run_id"])
    view = await run_in_threadpool(data.run_view, ctx.store, run_id)
    if view is None:
        return render(request, "error.html", 404, title="No such run", message=f"no run {run_id!r}")
    return render(request, "run.html", run=view, trouble=TIMELINE_TROUBLE)


async def healthz(request: Request) -> Response:
    return Response("ok\n", media_type="text/plain")


def routes() -> list[Route]:
    return [
        Route("/", dashboard),
        Route("/login", login_form, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/queue", queue_page),
        Route("/suggestions/{sid}", suggestion_page, methods=["GET"]),
        Route("/suggestions/{sid}/decide", decide, methods=["POST"]),
        Route("/runs/{run_id:path}", run_page),
        Route("/healthz", healthz),
    ]
