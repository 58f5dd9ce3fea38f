"""Hints run on the lower-cased text (part of the free-text pass).

The standard library's engine runs a case-insensitive alternation of words several times
slower than a case-sensitive one (50 against 10 us on a 60-character text), and the hints
that decide which rules run are tried on every distinct text: they are compiled from the
rules' own patterns with :func:`lower_pattern` and run on :func:`lowered` text.
"""

from __future__ import annotations

import re


def lower_pattern(pattern: str) -> str:
    """*pattern* for the lower-cased text, without case-insensitive groups: literals lowered,
    escapes (\\S, \\W, \\d ...) kept. The standard library's engine runs a case-insensitive
    alternation of words several times slower than a case-sensitive one (50 against 10 µs on a
    60-character text), and these hints run on every text."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\":
            out.append(pattern[i : i + 2])
            i += 2
        elif pattern.startswith("(?P", i):  # a named group (its name is lowered)
            out.append("(?P")
            i += 3
        else:
            out.append(pattern[i].lower())
            i += 1
    return "".join(out).replace("(?i:", "(?:")


def lowered(text: str) -> str:
    """*text* lower-cased for the hints: dotted capital I, dotless i and long s read as i, i
    and s, as the case-insensitive patterns read them (``str.lower`` writes İ as two
    characters, i and a combining dot: ``PİN`` was no ``pin`` for a hint while ``(?i:pin)``
    matched it; a fresh-context attack stored a codice fiscale, a date of birth and a phone
    number that way). No other character is matched by ``(?i:x)`` for an ASCII letter x and
    lower-cased to something else (checked over every code point by that attack)."""
    if text.isascii():
        return text.lower()
    low = text.replace("\u0130", "i").lower()
    return low.replace("\u0131", "i").replace("\u017f", "s")


def compile_lowered(pattern: str) -> re.Pattern[str]:
    """:func:`lower_pattern` of *pattern*, compiled."""
    return re.compile(lower_pattern(pattern))
