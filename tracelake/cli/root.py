"""The ``tracelake`` command's root: the typer app and its sub-apps, ``--version``, and
:func:`main`, the one boundary that turns every error into a message that says what to do and
an exit code (0 ok, 1 something was quarantined or not found, 2 error).

The commands live one group per module beside this one (``*_commands.py``) and register on the
apps defined here when :mod:`tracelake.cli` imports them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from typing import Annotated

import typer

from tracelake import __version__, collector
from tracelake.cli.common import err
from tracelake.config import PRESIDIO_WITHOUT_SPACY
from tracelake.console import markup, say
from tracelake.errors import TracelakeError

HELP = """Store AI-agent runner events in a scrubbed, append-only log and learn from them.

Start with `tracelake db upgrade`, `tracelake ingest FILE` (or `tracelake demo`), then
`tracelake project` and `tracelake runs list`. Exit codes: 0 ok; 1 something was quarantined
or not found; 2 an error (the message says what to do).
"""

app = typer.Typer(
    no_args_is_help=True, add_completion=False, help=HELP, pretty_exceptions_show_locals=False
)
db_app = typer.Typer(no_args_is_help=True, help="Schema migrations.")
runs_app = typer.Typer(no_args_is_help=True, help="Look at stored runs.")
quarantine_app = typer.Typer(no_args_is_help=True, help="Lines and events set aside, and why.")
spool_app = typer.Typer(no_args_is_help=True, help="The sink's on-disk spool.")
suggestions_app = typer.Typer(no_args_is_help=True, help="Suggestions and operator decisions.")
export_app = typer.Typer(no_args_is_help=True, help="Exports: learning block, Parquet lake.")

# Sub-apps: other modules register theirs here, one line each.
app.add_typer(db_app, name="db")
app.add_typer(runs_app, name="runs")
app.add_typer(quarantine_app, name="quarantine")
app.add_typer(spool_app, name="spool")
app.add_typer(suggestions_app, name="suggestions")
app.add_typer(export_app, name="export")


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"tracelake {__version__}\n")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", help="Print the version and exit", callback=_version, is_eager=True
        ),
    ] = False,
) -> None:
    """Event-sourced persistence and trace learning for AI-agent runners."""


# ---------------------------------------------------------------------------- the boundary


def _click_exceptions() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(usage errors, aborts) of every click typer may use: its vendored copy and click."""
    usage: list[type[BaseException]] = []
    aborts: list[type[BaseException]] = [typer.Abort, KeyboardInterrupt]
    for name in ("typer._click.exceptions", "click.exceptions"):
        with contextlib.suppress(ImportError):
            module = __import__(name, fromlist=["ClickException"])
            usage.append(module.ClickException)
            if hasattr(module, "Abort"):
                aborts.append(module.Abort)
    return tuple(usage), tuple(aborts)


def _fail(message: str, code: int = 2) -> None:
    say(err, f"[red]error:[/] {markup(message)}")
    sys.exit(code)


def main(argv: list[str] | None = None) -> None:
    """Run the command; every error leaves here as a message and an exit code.

    Without *argv* this process is the command, and it ends here: what is alive is frozen
    (:func:`tracelake.collector.leaving`) so the interpreter's exit does not walk it again.
    """
    try:
        _main(argv)
    finally:
        if argv is None:
            collector.leaving()


def _main(argv: list[str] | None) -> None:
    collector.rarer()
    # this process and the workers it starts are tracelake's own: presidio without spaCy
    os.environ.setdefault(PRESIDIO_WITHOUT_SPACY, "1")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if not sys.stdout.isatty():  # plain help when piped: no boxes
        app.rich_markup_mode = None
    usage_errors, aborts = _click_exceptions()
    try:
        rc = app(args=argv, standalone_mode=False, prog_name="tracelake")
    except TracelakeError as exc:
        _fail(str(exc))
    except usage_errors as exc:  # looks exactly like click's own: "Usage: ...\nError: ..."
        exc.show()  # type: ignore[attr-defined]
        sys.exit(exc.exit_code)  # type: ignore[attr-defined]
    except aborts:
        say(err, "aborted")
        sys.exit(130)
    except BrokenPipeError:  # `tracelake runs list | head`: the reader has what it wanted
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename else ""
        _fail(f"cannot use{where}: {exc.strerror or exc}; check that it exists and is readable")
    except Exception as exc:  # a bug, not bad input: say so, exit 2, keep the trace on demand
        if os.environ.get("TRACELAKE_DEBUG"):
            raise
        _fail(
            f"internal error: {type(exc).__name__}; rerun with TRACELAKE_DEBUG=1 for the "
            "traceback and report it"
        )
    sys.exit(rc if isinstance(rc, int) else 0)
