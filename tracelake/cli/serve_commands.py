"""``tracelake serve`` and ``tracelake project --follow`` (registered in ``tracelake.cli``)."""

from __future__ import annotations

import signal
import threading
from typing import Annotated, Any

import typer

from tracelake.cli.common import err, out
from tracelake.config import Settings
from tracelake.console import display_url


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on (loopback by default)")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option(help="TCP port")] = 8080,
    read_only: Annotated[
        bool, typer.Option("--read-only", help="Show everything, decide nothing")
    ] = False,
    no_follow: Annotated[
        bool,
        typer.Option("--no-follow", help="Do not keep the projections caught up in this process"),
    ] = False,
    database_url: Annotated[
        str | None,
        typer.Option("--database-url", envvar="TRACELAKE_DATABASE_URL", show_default=False),
    ] = None,
) -> None:
    """The review queue, run pages, dashboard, JSON API and /metrics over the store.

    Set TRACELAKE_UI_TOKEN (16+ characters) to require it: as a bearer token for the API and
    /metrics, and in the login form for the pages. Without it the server only listens on a
    loopback address.
    """
    import uvicorn

    from tracelake.scrub import load_pseudonym_key
    from tracelake.web import WebConfig, create_app
    from tracelake.wiring import open_store_for

    config = WebConfig.from_env(host=host, port=port, read_only=read_only, follow=not no_follow)
    settings = Settings.from_env(database_url=database_url)
    key = load_pseudonym_key(settings.database_url)
    store = open_store_for(settings.database_url)
    app = create_app(store, config, key)
    mode = "read-only" if read_only else "read-write"
    access = "token required" if config.token else "no token (loopback only)"
    err.print(
        f"tracelake serve: http://{_shown(host)}:{port}/ ({mode}, {access}) -> {display_url(store.url)}"
    )
    try:
        uvicorn.run(
            app, host=host, port=port, log_level="warning", server_header=False, access_log=False
        )
    finally:
        store.dispose()


def _shown(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def follow_projections(
    database_url: str | None, names: list[str] | None, rebuild: bool = False
) -> None:
    """``tracelake project --follow``: catch up, then keep catching up until interrupted."""
    from tracelake.projections.follow import Follower
    from tracelake.wiring import open_store_for

    store = open_store_for(database_url)
    follower = Follower(store, names)
    if rebuild:
        follower.engine.reset(names)
    stop = threading.Event()

    def _stop(signum: int, _frame: Any) -> None:
        stop.set()

    previous = {s: signal.signal(s, _stop) for s in (signal.SIGINT, signal.SIGTERM)}
    how = "LISTEN/NOTIFY" if store.notifies else "polling"
    err.print(f"following {display_url(store.url)} ({how}); Ctrl-C to stop")

    def report(result: Any) -> None:
        low = min(result.positions.values(), default=0)
        out.print(f"applied {result.events} event(s) in {result.batches} batch(es); at {low}")

    try:
        follower.run(stop, on_catch_up=report)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        store.dispose()
    out.print(
        f"stopped: {follower.state.events} event(s) applied in {follower.state.catch_ups} "
        f"catch-up(s), {follower.state.errors} error(s)"
    )
