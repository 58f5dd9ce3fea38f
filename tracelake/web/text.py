"""Stored text made safe to show: control and bidi characters become visible escapes.

HTML escaping (autoescape, :func:`markupsafe.escape`) stops markup; it does not stop an ESC,
a backspace or a right-to-left override from hiding or reordering what an operator reads.
"""

from __future__ import annotations

import re
from typing import Any

from markupsafe import Markup, escape

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    return CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def show(value: Any) -> Any:
    """Jinja's ``finalize``: None as nothing, strings with visible escapes (then autoescaped)."""
    if value is None:
        return ""
    if isinstance(value, Markup):
        return value
    if isinstance(value, str):
        return visible(value)
    return value


def esc(value: Any) -> Markup:
    """For markup we build ourselves (SVG): visible escapes, then HTML-escaped."""
    return escape(visible(str(value)))


def ident(value: str) -> str:
    """An id or filter from a request, as the store would hold it: NUL (which no backend stores)
    became U+FFFD at ingest, so it does here too, instead of a database error."""
    return value.replace("\x00", "\ufffd")
