"""What the ``tracelake`` command prints, and how, so that no stored text can hurt a terminal.

* Rich tables and colours on a terminal; plain tab-separated lines when stdout is not one
  (a pipe, a file, ``less``): no box drawing, no 80-column wrapping, nothing cut.
* Every value that comes from stored data or the command line goes through :func:`safe`
  (control characters, bidi overrides and lone surrogates become visible escapes, so an
  ``ESC [2J`` in an event never reaches the terminal raw) and, where rich markup is
  interpreted, :func:`markup` (an event type ``[/]`` is text, not a closing tag).
* URLs are shown with their password masked (:func:`display_url`).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

# C0 and C1 controls (tab and newline too: one value, one cell), DEL, bidi and zero-width
# format characters, line/paragraph separators, BOM, and lone surrogates.
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]"
)


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(value: object) -> str:
    """The value's text with every character that could act on a terminal made visible."""
    text = value if isinstance(value, str) else str(value)
    return _UNSAFE.sub(_escape_char, text)


def markup(value: object) -> str:
    """:func:`safe`, then escaped for rich markup (square brackets are literal). Backslashes
    before a bracket that rich's ``escape`` leaves alone (not tag-like: ``\\[``, ``\\[x``)
    are doubled first, or rich would read them as escaping the bracket and drop them."""
    return escape(_LONE_ESCAPES.sub(lambda m: m.group(1) * 2, safe(value)))


_LONE_ESCAPES = re.compile(r"(\\+)(?=\[)(?!\[[a-z#/@][^[]*?\])")


def display_url(url: str) -> str:
    """A database URL with its password replaced by ``***``."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return safe(make_url(url).render_as_string(hide_password=True))
    except (ArgumentError, ValueError):
        return safe(re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url))


def new_console(stderr: bool = False) -> Console:
    # highlight=False: rich would otherwise colour numbers and strings in stored text.
    return Console(stderr=stderr, highlight=False)


def say(console: Console, text: str) -> None:
    """A line of our own text (with rich markup; interpolated values already :func:`markup`).
    Not wrapped when the output is not a terminal."""
    console.print(text, soft_wrap=not console.is_terminal)


def table(
    console: Console,
    columns: Sequence[str],
    rows: Iterable[Sequence[object]],
    title: str | None = None,
) -> None:
    """A table: rich on a terminal; a header line and tab-separated rows otherwise."""
    if console.is_terminal:
        shown = Table(title=None if title is None else markup(title))
        for column in columns:  # fold, never cut: ids must stay whole to be copied
            shown.add_column(markup(column), overflow="fold")
        for row in rows:
            shown.add_row(*[markup("" if v is None else v) for v in row])
        console.print(shown)
        return
    lines = ["\t".join(safe(c) for c in columns)]
    lines.extend("\t".join(safe("" if v is None else v) for v in row) for row in rows)
    console.file.write("\n".join(lines) + "\n")
    console.file.flush()


# json.dumps escapes C0 controls inside strings; the rest of _UNSAFE is escaped here (as \\u).
# Tab, newline and CR are left alone: outside strings they are the indentation.
_JSON_UNSAFE = re.compile(
    "[\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]"
)


def _json_safe(text: str) -> str:
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def dumps(data: Any, indent: int | None = 2) -> str:
    """JSON for stdout: UTF-8 text, but nothing a terminal would act on."""
    return _json_safe(json.dumps(data, ensure_ascii=False, indent=indent, default=str))


def emit_json(data: Any, indent: int | None = 2) -> None:
    sys.stdout.write(dumps(data, indent) + "\n")
    sys.stdout.flush()
