"""``key=value`` pairs in free text, read as the key rules judge a pair in a dict: every pair,
also one inside another pair's value, and a credential key written as prose."""

from __future__ import annotations

import re
from collections.abc import Iterator

from tracelake.scrub.keys import KeyClass, classify, credential_quantity
from tracelake.scrub.written import NUMBER

Span = tuple[int, int, str]
_SYMBOL_OR_DIGIT = re.compile(r"[\d\W_]")


def pairs(pattern: re.Pattern[str], text: str, key: int = 1) -> Iterator[re.Match[str]]:
    """Every ``key=value`` match of *pattern* (its key: group *key*) in *text*, those inside
    another's value too.

    ``finditer`` resumes after a whole match, so in ``request failed: db_password=x`` the
    pair ``failed: db_password=x`` hid ``db_password=x``, and ``?q=https://a.b/c?sig=x`` hid
    ``sig=x`` (an attack stored both secrets), and ``failed: db_password = x`` read
    ``db_password`` as the value of ``failed``. So the search resumes right after each key."""
    pos = 0
    while (match := pattern.search(text, pos)) is not None:
        yield match
        pos = match.end(key) + 1


# "db_password is x", "AWS_SECRET_ACCESS_KEY was set to x": a credential key in prose (the
# secret words match whole words only, and db_password is none)
KEY_IS: re.Pattern[str] = re.compile(
    r"(?:^|(?<=[\s,(\[{\"'=&;|]))([A-Za-z][A-Za-z0-9_.\-]{0,63})[ \t]+"
    r"(?:(?:is |was )?(?:set|changed|reset|updated) to|is|was)[ \t]+([^\s,;\"'<>]{3,64})"
)


def key_is_spans(text: str, out: list[Span]) -> None:
    """The value of a credential key written as prose, when it has a digit or a symbol (as
    after a secret word and a space: "auth is required" keeps "required")."""
    for match in pairs(KEY_IS, text):
        key, value = match.group(1), match.group(2)
        if classify(key)[0] is not KeyClass.CREDENTIAL or value.startswith("["):
            continue
        if not _SYMBOL_OR_DIGIT.search(value) or (
            NUMBER.fullmatch(value) and credential_quantity(key)
        ):
            continue
        out.append((match.start(2), match.end(2), "CREDENTIAL"))
