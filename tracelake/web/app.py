"""The ASGI application: review queue, run pages, dashboard, JSON API and ``/metrics``.

Pages are rendered on the server (Jinja2, autoescaped; control characters shown as escapes),
charts are inline SVG, and there is no JavaScript. Database work runs in Starlette's thread
pool. Decisions go through ``tracelake.promotion.review.decide`` — the very function
``tracelake suggestions approve|reject`` calls — so they are the same events, scrubbed the
same way, with the signed-in name as ``decided_by`` and the append time as "when".
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from tracelake.errors import StoreUnavailableError, TracelakeError
from tracelake.projections import ProjectionEngine
from tracelake.projections.follow import Follower, start_thread
from tracelake.store import Store
from tracelake.web.security import Guard
from tracelake.web.server_config import WebConfig

if TYPE_CHECKING:
    from tracelake.scrub import Scrubber

log = logging.getLogger("tracelake.web")


@dataclass
class Context:
    """What every handler needs; one per application."""

    store: Store
    config: WebConfig
    key: bytes
    follower: Follower | None = None
    projection_names: list[str] = field(default_factory=list)
    _scrubber: Scrubber | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def scrubber(self) -> Scrubber:
        """Loaded once, on first use or by the warm-up thread (presidio takes seconds)."""
        with self._lock:
            if self._scrubber is None:
                from tracelake.scrub import get_scrubber

                self._scrubber = get_scrubber(self.key)
            return self._scrubber


def create_app(store: Store, config: WebConfig, key: bytes) -> Starlette:
    from tracelake.web import api, pages

    ctx = Context(store, config, key)
    ctx.projection_names = [p.name for p in ProjectionEngine(store).projections]
    if config.follow:
        ctx.follower = Follower(store)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        stop = threading.Event()
        thread = start_thread(ctx.follower, stop) if ctx.follower is not None else None
        if not config.read_only:
            threading.Thread(target=lambda: ctx.scrubber, daemon=True, name="warm").start()
        try:
            yield
        finally:
            stop.set()
            if thread is not None:
                thread.join(timeout=10)

    routes = [
        *pages.routes(),
        *api.routes(),
        Mount("/static", StaticFiles(packages=[("tracelake.web", "static")]), name="static"),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(Guard, config=config)],
        lifespan=lifespan,
        exception_handlers={TracelakeError: store_error},
    )
    app.state.ctx = ctx
    return app


async def store_error(request: Request, exc: Exception) -> Response:
    """A database error a handler did not expect: say what happened (503 while the database
    is unreachable), as JSON for the API and a page otherwise; never a traceback."""
    status = 503 if isinstance(exc, StoreUnavailableError) else 500
    log.warning("%s %s: %s", request.method, request.url.path, exc)
    if request.url.path.startswith(("/api/", "/metrics")):
        return JSONResponse({"error": str(exc)}, status_code=status)
    from tracelake.web.pages import render

    return render(request, "error.html", status, title="The store refused", message=str(exc))


def context(request: Any) -> Context:
    ctx: Context = request.app.state.ctx
    return ctx


__all__ = ["Context", "Route", "context", "create_app"]
