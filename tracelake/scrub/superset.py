"""A Python regex rewritten for Hyperscan so that it matches at least what the regex matches.

:mod:`tracelake.scrub.hints` scans texts for the hints of the free-text pass with Hyperscan;
a hint only gates a rule, so its automaton form may match more than the regex, never less
(a hint missed would skip a rule that removes personal data). The rewrite:

* assertions are left out (lookarounds, ``\\b``, ``\\B``, ``\\A``, ``\\Z``, ``^``, ``$``):
  they only narrow a match;
* the automaton reads the text through :func:`plain`, which writes every non-ASCII decimal
  digit as ``0`` and every non-ASCII space as a space, so ``\\d`` and ``\\s`` become ASCII
  classes (``\\s`` with Python's ``\\x1c``-``\\x1f``): Hyperscan's own Unicode tables are
  older than Python's (a Hanifi Rohingya digit is no digit there) and its ``\\s`` has no
  ``\\x1f``; Unicode classes also made the automaton slow to build. A digit or space written
  as ``0`` or `` `` still matches every class it matched before;
* ``\\w`` becomes every non-ASCII character plus ``[0-9A-Za-z_]``, and ``\\D``, ``\\S``,
  ``\\W`` any character; a negated class holding one of them becomes any character;
* ``\\uXXXX`` and ``\\UXXXXXXXX`` become Hyperscan's ``\\x{...}``; ``(?m:`` and named
  groups become plain groups.

Hyperscan's prefilter mode (``HS_FLAG_PREFILTER``) approximates whatever else it does not
support, again by a superset. ``tests/scrub/test_hints.py`` draws texts from each hint's own
regex (Unicode digits and spaces included) and checks the scan reports them.
"""

from __future__ import annotations

import re
import warnings

_ANY = "\\x{0}-\\x{10ffff}"
_WORD = "0-9A-Za-z_\\x{80}-\\x{10ffff}"  # Python's \\w, and more (every non-ASCII character)
_DIGIT = "0-9"  # after plain()
_SPACE = "\\x{9}-\\x{d}\\x{1c}-\\x{20}"  # Python's ASCII spaces, after plain()
_ASSERTIONS = frozenset("bBAZ")
_ASSERTION_OPENERS = ("(?<!", "(?<=", "(?!", "(?=")
_WIDE = frozenset("DSW")  # \\D, \\S, \\W: any character will do
_LAST_DIGIT = 0x20000  # no decimal digit lies beyond the supplementary plane (Unicode 15)


def _members(codes: list[int]) -> str:
    """*codes* (ascending) as the members of a Python class, consecutive ones as ranges."""
    out: list[str] = []
    start = prev = codes[0]
    for code in [*codes[1:], -1]:
        if code != prev + 1:
            out.append(re.escape(chr(start)) + (f"-{re.escape(chr(prev))}" if prev > start else ""))
            start = code
        prev = code
    return "".join(out)


_DIGITS = [c for c in range(0x80, _LAST_DIGIT) if chr(c).isdecimal()]
_SPACES = [c for c in range(0x80, 0x3001) if chr(c).isspace()]
_DIGIT_TEXT, _SPACE_TEXT = "".join(map(chr, _DIGITS)), "".join(map(chr, _SPACES))
_OTHER_DIGITS = re.compile(f"[{_members(_DIGITS)}]")
_OTHER_SPACES = re.compile(f"[{_members(_SPACES)}]")
# a quick test first: the BMP's digits and spaces as a bitmap, and any astral character (the
# astral digits, rare, are matched one range at a time by the engine)
_MAYBE = re.compile(
    f"[{_members([c for c in _DIGITS + _SPACES if c < 0x10000])}\U00010000-\U0010ffff]"
)


def plain(text: str) -> str:
    """*text* with its non-ASCII decimal digits written ``0`` and its non-ASCII spaces written
    `` ``: what the rewritten patterns read (see the module doc)."""
    if text.isascii() or _MAYBE.search(text) is None:
        return text
    return _OTHER_SPACES.sub(" ", _OTHER_DIGITS.sub("0", text))


def _class_item(escape: str) -> str:
    """The members of a (non-negated) class that stand for *escape* (``\\d``, ``\\s``, ...)."""
    letter = escape[1]
    if letter == "d":
        return _DIGIT
    if letter == "s":
        return _SPACE
    if letter == "w":
        return _WORD
    if letter in _WIDE:
        return _ANY
    if letter == "b":
        return "\\x{8}"  # a backspace, in a class
    return _code_point(escape)


def _code_point(escape: str) -> str:
    if escape[1] in "uU":  # a non-ASCII digit or space as plain() writes it
        char = plain(chr(int(escape[2:], 16)))
        return re.escape(char) if char.isascii() else f"\\x{{{ord(char):x}}}"
    return escape


def superset_pattern(pattern: str) -> str:
    """*pattern* rewritten for Hyperscan: it matches whatever *pattern* matches (see the
    module doc)."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith(_ASSERTION_OPENERS, i):
            i = _group_end(pattern, i)
        elif ch == "\\":
            escape = _escape_at(pattern, i)
            i += len(escape)
            if escape[1] not in _ASSERTIONS:
                out.append(_outside(escape))
        elif ch == "[":
            end = _class_end(pattern, i)
            out.append(_class(pattern[i:end]))
            i = end
        elif pattern.startswith("(?P<", i):
            out.append("(?:")
            i = pattern.index(">", i) + 1
        elif pattern.startswith("(?m:", i):
            out.append("(?:")
            i += 4
        elif ch == "{" and (bound := _BOUND.match(pattern, i)) is not None:
            out.append(_widened(bound))
            i = bound.end()
        else:
            if ch not in "^$":  # anchors are left out
                out.append(plain(ch))  # a non-ASCII digit or space reads as plain() writes it
            i += 1
    return "".join(out)


_BOUND = re.compile(r"\{(\d*)(,?)(\d*)\}")
_WIDE_BOUND = 8  # a repeat bounded above this many is left unbounded (Hyperscan builds it fast)


def _widened(bound: re.Match[str]) -> str:
    """A counted repeat, as Hyperscan reads it: ``{,n}`` is Python's ``{0,n}``; a repeat with
    a large bound (``{3,30}``, ``{17}``) becomes at least min(low, 8) and unbounded, which only
    widens the match and keeps the automaton small (fast to build)."""
    low, comma, high = bound.groups()
    low = low or "0"
    upper = high if comma else low
    if upper and int(upper) > _WIDE_BOUND:
        return f"{{{min(int(low), _WIDE_BOUND)},}}"
    return f"{{{low}{comma}{high}}}"


def _outside(escape: str) -> str:
    letter = escape[1]
    if letter in "dsw" or letter in _WIDE:
        return f"[{_class_item(escape)}]"
    return _code_point(escape)


def _escape_at(pattern: str, i: int) -> str:
    letter = pattern[i + 1 : i + 2]
    size = {"u": 6, "U": 10, "x": 4}.get(letter, 2)
    return pattern[i : i + size]


def _class_end(pattern: str, start: int) -> int:
    """The index after the class opened at *start* (``]`` first is a member)."""
    i = start + 1
    if pattern[i : i + 1] == "^":
        i += 1
    if pattern[i : i + 1] == "]":
        i += 1
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] == "]":
            return i + 1
        i += 1
    raise ValueError(f"unterminated class at {start} in a hint pattern")


def _class(text: str) -> str:
    """A class ``[...]`` rewritten: its escapes expanded; a negated class holding a category
    escape (``[^\\W\\d_]``) or leaving out ``0`` or a space (which :func:`plain` writes for
    other digits and spaces) becomes any character; a class holding a non-ASCII digit or
    space holds ``0`` or a space too."""
    negated = text.startswith("[^")
    with warnings.catch_warnings():  # "possible nested set" ([[:x]): read as Python reads it
        warnings.simplefilter("ignore", FutureWarning)
        python = re.compile(text)
    if negated and not (python.fullmatch("0") and python.fullmatch(" ")):
        return f"[{_ANY}]"
    body = text[2:-1] if negated else text[1:-1]
    members: list[str] = []
    i = 0
    while i < len(body):
        if body[i] == "\\":
            escape = _escape_at(body, i)
            if negated and escape[1] in "dswDSW":
                return f"[{_ANY}]"
            members.append(_class_item(escape))
            i += len(escape)
        else:
            # escaped: no POSIX class ([:alpha:]), no early end when members go in front
            members.append("\\" + body[i] if body[i] in "[]" else body[i])
            i += 1
    if not negated:  # in front: a "-" that ends the class stays a literal
        if python.search(_SPACE_TEXT):
            members.insert(0, "\\x{20}")
        if python.search(_DIGIT_TEXT):
            members.insert(0, "0")
    return ("[^" if negated else "[") + "".join(members) + "]"


def _group_end(pattern: str, start: int) -> int:
    """The index after the group opened at *start* (escapes and classes skipped)."""
    depth, i = 0, start
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            i = _class_end(pattern, i)
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError(f"unbalanced group at {start} in a hint pattern")
