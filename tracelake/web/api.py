"""The JSON API under ``/api/`` and ``/metrics``; bearer token when one is configured."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from tracelake.errors import StoreError, TracelakeError
from tracelake.promotion import review as sug
from tracelake.web import data, metrics
from tracelake.web.app import context
from tracelake.web.security import token_ok
from tracelake.web.text import ident

Handler = Callable[[Request], Awaitable[Response]]
MAX_BODY = 64 * 1024


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def guarded(handler: Handler) -> Handler:
    async def wrapper(request: Request) -> Response:
        if not token_ok(context(request).config, request):
            response = _error(401, "missing or wrong bearer token (Authorization: Bearer ...)")
            response.headers["www-authenticate"] = 'Bearer realm="tracelake"'
            return response
        try:
            return await handler(request)
        except sug.SuggestionNotFoundError as exc:
            return _error(404, str(exc))
        except StoreError:
            raise  # the app's handler: 503 while the database is unreachable, else 500
        except TracelakeError as exc:
            return _error(409 if isinstance(exc, sug.DecisionRefusedError) else 400, str(exc))

    return wrapper


async def _ready(request: Request) -> None:
    ctx = context(request)
    if ctx.follower is None:
        await run_in_threadpool(sug.catch_up, ctx.store)


@guarded
async def list_suggestions(request: Request) -> Response:
    ctx = context(request)
    await _ready(request)
    status = request.query_params.get("status") or None
    collection = ident(request.query_params.get("collection") or "") or None
    docs = await run_in_threadpool(sug.list_suggestions, ctx.store, collection, status)
    return JSONResponse(docs)


@guarded
async def get_suggestion(request: Request) -> Response:
    ctx = context(request)
    await _ready(request)
    sid = ident(request.path_params["sid"])
    current = await run_in_threadpool(sug.get, ctx.store, sid)
    history = await run_in_threadpool(sug.history, ctx.store, sid)
    evidence = await run_in_threadpool(data.evidence, ctx.store, current.document)
    return JSONResponse({"suggestion": current.document, "history": history, "evidence": evidence})


async def _body(request: Request) -> dict[str, Any] | Response:
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return _error(415, "send the body as application/json")
    raw = await request.body()
    if len(raw) > MAX_BODY:
        return _error(413, f"body over {MAX_BODY} bytes")
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        return _error(400, "the body is not JSON")
    if not isinstance(body, dict):
        return _error(400, "the body must be a JSON object")
    return body


def _text(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    return value.strip() if isinstance(value, str) else ""


async def _decide(request: Request, to: str) -> Response:
    ctx = context(request)
    if ctx.config.read_only:
        return _error(403, "the server is read-only (started with --read-only)")
    body = await _body(request)
    if isinstance(body, Response):
        return body
    by, reason = _text(body, "by"), _text(body, "reason")
    if not by:
        return _error(400, '"by" (who decides) is required')
    if to == "rejected" and not reason:
        return _error(400, '"reason" is required to reject')
    doc = await run_in_threadpool(
        sug.decide,
        ctx.store,
        ctx.scrubber,
        ident(request.path_params["sid"]),
        to,
        by[:100],
        reason[:500] or "approved through the API",
    )
    return JSONResponse(doc)


@guarded
async def approve(request: Request) -> Response:
    return await _decide(request, "promoted")


@guarded
async def reject(request: Request) -> Response:
    return await _decide(request, "rejected")


@guarded
async def get_run(request: Request) -> Response:
    ctx = context(request)
    run_id = ident(request.path_params["run_id"])
    view = await run_in_threadpool(data.run_view, ctx.store, run_id)
    if view is None:
        return _error(404, f"no run {run_id!r}")
    return JSONResponse(view)


@guarded
async def get_dashboard(request: Request) -> Response:
    ctx = context(request)
    return JSONResponse(await run_in_threadpool(data.dashboard, ctx.store))


@guarded
async def get_metrics(request: Request) -> Response:
    ctx = context(request)
    health = await run_in_threadpool(data.health, ctx.store, ctx.projection_names)
    return PlainTextResponse(metrics.render(health, ctx.follower), media_type=metrics.CONTENT_TYPE)


def routes() -> list[Route]:
    return [
        Route("/api/suggestions", list_suggestions),
        Route("/api/suggestions/{sid}", get_suggestion),
        Route("/api/suggestions/{sid}/approve", approve, methods=["POST"]),
        Route("/api/suggestions/{sid}/reject", reject, methods=["POST"]),
        Route("/api/runs/{run_id:path}", get_run),
        Route("/api/dashboard", get_dashboard),
        Route("/metrics", get_metrics),
    ]
