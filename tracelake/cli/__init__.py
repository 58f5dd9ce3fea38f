"""The ``tracelake`` command: parse, call, print. No logic lives here.

:mod:`tracelake.cli.root` holds the typer app, ``--version`` and :func:`main`, the one error
boundary; every command group is a module beside it (``*_commands.py``) that registers on the
root's apps when imported here, in the order of :data:`COMMAND_MODULES` (the order of
``tracelake --help``). Output goes through :mod:`tracelake.console` (plain when not a
terminal, stored text made inert).
"""

from __future__ import annotations

import importlib

from tracelake.cli import lifecycle_commands
from tracelake.cli.root import app, db_app, main
from tracelake.cli.serve_commands import serve

# Each registers its commands on import; a new command group is one more name here.
COMMAND_MODULES = (
    "db_commands",
    "ingest_commands",
    "browse_commands",
    "project_commands",
    "sink_commands",
    "promotion_commands",
    "export_commands",
)

lifecycle_commands.register(app, db_app)  # db roles|verify|partitions, erase, subjects, retention
for _name in COMMAND_MODULES:
    importlib.import_module(f"{__name__}.{_name}")
app.command()(serve)

__all__ = ["COMMAND_MODULES", "app", "main"]
