"""E-mail addresses spelt out against harvesters (part of :mod:`freetext`'s pass).

``kim(at)example(dot)org``, ``kim [at] example.org``, ``kim at example dot org``: the
spelt-out "at" must come with brackets, or with a spelt-out "dot" before a top-level domain
("meet at api.example.com" is a host, "arrive at 10 dot 30" a time).
"""

from __future__ import annotations

import re

Span = tuple[int, int, str]

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})"
_SPELT_EMAIL = re.compile(
    rf"[A-Za-z0-9._%+-]+\s*(?i:[(\[{{<]\s*at\s*[)\]}}>]|@)\s*{_LABEL}"
    rf"(?:\s*(?i:[(\[{{<]\s*dot\s*[)\]}}>]|\s+dot\s+)\s*{_LABEL}|\.{_LABEL})+"
    rf"|[A-Za-z0-9._%+-]+\s+(?i:at)\s+{_LABEL}(?:\s+(?i:dot)\s+{_LABEL})*"
    r"\s+(?i:dot)\s+[A-Za-z]{2,24}(?:\.[A-Za-z]{2,24})*\b"
)
# An address on an internal host (kim.minjun@localhost, ops@mailhost) or with spaces around
# the "@" (kim.minjun @ naver.com); the recognizer's pattern needs a dotted domain written
# solid. A host must start with a letter (react@18.2.0 is a package version).
_LOOSE_EMAIL = re.compile(
    r"(?<![\w.%+-])[\w.%+-]*\w(?:@[^\W\d_][\w-]{0,62}(?:\.[^\W_][\w-]*)*(?![\w.@-])"
    r"|\s+@\s+\w[\w-]*(?:\.[\w-]+)+)"
)
_SPELT_HINT = re.compile(r"(?i:[(\[{<]\s*at\s*[)\]}>]|\sdot\s|[(\[{<]\s*dot\s*[)\]}>])")
# a superset of what the patterns need: a bracketed "at" or "dot", a spaced "dot", an "@"
HINT = re.compile(_SPELT_HINT.pattern + "|@")


def spans(text: str, out: list[Span]) -> None:
    """Append the spans of spelt-out and loosely written e-mail addresses in *text* (an IDN
    domain too: kim@예제.한국)."""
    if _SPELT_HINT.search(text):
        out.extend((m.start(), m.end(), "EMAIL_ADDRESS") for m in _SPELT_EMAIL.finditer(text))
    if "@" in text:
        out.extend((m.start(), m.end(), "EMAIL_ADDRESS") for m in _LOOSE_EMAIL.finditer(text))
