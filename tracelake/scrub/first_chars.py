"""A first-character guard for patterns that start with a case-insensitive alternation.

The standard library's engine skips the positions where no match can start when it knows a
pattern's literal prefix or first-character set. A pattern that starts with a case-insensitive
alternation of words gets neither (``re._compiler`` gives up on cased literals under
IGNORECASE), so every alternative is tried at every position of the text. :func:`guard` puts a
lookahead for the characters a match can start with in front of the pattern: the same matches
(the lookahead admits every character a match can start with), tried only where one can start.
Measured on the scrubber's free text (2,066 texts of 40+ characters from the bench corpus,
pure Python): the one-time-code pattern 45.8 -> 24.6 us a text, the secret-word one 18.8 ->
7.0, the lower-case label one 13.5 -> 6.4.

The first characters are read from the parsed pattern (``re._parser``): literals, classes,
alternatives, groups, repeats (a repeat that may be empty lets the next item start a match),
anchors and lookarounds (zero-width: the next item starts it). Anything else (``.``, a negated
class, a category, a backreference), a first set that may be empty, or a parser that changed,
leaves the pattern as it is. ``tests/scrub/test_first_chars.py`` compares every guarded
pattern with its original at every position of generated texts.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

_parser: Any = importlib.import_module("re._parser")
_ops: Any = importlib.import_module("re._constants")

# (first, last, case-insensitive): the code points a match may start with
Interval = tuple[int, int, bool]
GUARDED: list[tuple[re.Pattern[str], re.Pattern[str]]] = []  # (original, guarded), for tests
_GLOBAL_FLAGS = re.compile(r"(?:\(\?[aiLmsux]+\))+")
_CHARSET_FLAGS = re.ASCII | re.UNICODE | re.LOCALE


class _Unbounded(Exception):
    """A match may start with (almost) any character: no guard."""


def guard(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """*pattern* with a lookahead for its first characters in front, or *pattern* itself."""
    try:
        parsed = _parser.parse(pattern.pattern, pattern.flags)
        intervals, nullable = _first(list(parsed), parsed.state.flags)
    except _Unbounded:
        return pattern
    except Exception:  # noqa: BLE001 - another Python's parser: the pattern as it is
        return pattern
    if nullable or not intervals or any(f and high > 0xFFFF for _, high, f in intervals):
        # (CPython 3.11's case-insensitive class misses capitals beyond the BMP: U+10400)
        return pattern
    source = pattern.pattern
    flags = _GLOBAL_FLAGS.match(source)  # global flags must stay first
    at = flags.end() if flags else 0
    end = "\n)" if parsed.state.flags & re.VERBOSE else ")"  # (after a trailing comment)
    rest = f"(?:{source[at:]}{end}"  # the lookahead before every top-level alternative
    try:
        guarded = re.compile(source[:at] + _lookahead(intervals) + rest, pattern.flags)
    except re.error:  # global flags after a comment or a blank: the pattern as it is
        return pattern
    GUARDED.append((pattern, guarded))
    return guarded


def _first(items: list[Any], flags: int) -> tuple[set[Interval], bool]:
    """The first characters of a sequence of parsed items, and whether it may match empty."""
    found: set[Interval] = set()
    for op, arg in items:
        first, nullable = _first_of(op, arg, flags)
        found |= first
        if not nullable:
            return found, False
    return found, True


def _first_of(op: Any, arg: Any, flags: int) -> tuple[set[Interval], bool]:
    folded = bool(flags & re.IGNORECASE)
    if op is _ops.LITERAL:
        return {(arg, arg, folded)}, False
    if op is _ops.IN:
        return {_interval(item_op, item, folded) for item_op, item in arg}, False
    if op is _ops.BRANCH:
        found: set[Interval] = set()
        nullable = False
        for alternative in arg[1]:
            first, empty = _first(list(alternative), flags)
            found |= first
            nullable = nullable or empty
        return found, nullable
    if op is _ops.SUBPATTERN:
        _, add, remove, sub = arg
        if (add | remove) & _CHARSET_FLAGS:  # the lookahead would read it with other rules
            raise _Unbounded
        return _first(list(sub), (flags | add) & ~remove)
    if op in (_ops.MAX_REPEAT, _ops.MIN_REPEAT, _ops.POSSESSIVE_REPEAT):
        low, _, sub = arg
        first, empty = _first(list(sub), flags)
        return first, empty or low == 0
    if op is _ops.ATOMIC_GROUP:
        return _first(list(arg), flags)
    if op in (_ops.AT, _ops.ASSERT, _ops.ASSERT_NOT):
        return set(), True  # zero-width: what follows starts the match
    raise _Unbounded


def _interval(op: Any, arg: Any, folded: bool) -> Interval:
    if op is _ops.LITERAL:
        return (arg, arg, folded)
    if op is _ops.RANGE:
        return (arg[0], arg[1], folded)
    raise _Unbounded  # a negated class, a category (\w, \d, \s)


def _lookahead(intervals: set[Interval]) -> str:
    def members(folded: bool) -> str:
        return "".join(
            re.escape(chr(low)) if low == high else f"{re.escape(chr(low))}-{re.escape(chr(high))}"
            for low, high, f in sorted(intervals)
            if f is folded
        )

    parts = []
    if plain := members(False):
        parts.append(f"[{plain}]")
    if folded := members(True):
        parts.append(f"(?i:[{folded}])")
    return "(?=" + "|".join(parts) + ")"
