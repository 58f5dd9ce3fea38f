"""Dates in free text (part of :mod:`freetext`'s pass): old dates and dates of birth.

Dates more than RECENT_YEARS years old, or next to a birth word (생년월일, born, DOB), are
replaced; recent dates (orders, deliveries, timestamps) are kept. Next to a birth word the
short forms count too: a two-digit year (85.03.14, 850314, 14/03/85, 85년 3월 14일) or no
year at all (3월 14일, March 14).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from tracelake.scrub import hints
from tracelake.scrub.lowered import compile_lowered, lowered

Span = tuple[int, int, str]

THIS_YEAR = datetime.now(UTC).year
RECENT_YEARS = 5
_MONTHS = (
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?|janvier|février|mars|avril|"
    r"mai|juin|juillet|août|septembre|octobre|novembre|décembre|januar|februar|märz|juni|juli|"
    r"oktober|dezember"
    # Spanish, Portuguese, Italian, Dutch, Indonesian, Turkish; Polish and Russian by their
    # stems (the genitive of a date: 31 marca, 23 февраля); a fresh-context attack stored
    # 99 of 200 such dates of birth
    r"|enero|febrero|marzo|abril|mayo|junio|julio|agosto|sep?tiembre|octubre|noviembre|"
    r"diciembre|janeiro|fevereiro|março|maio|junho|julho|setembro|outubro|novembro|dezembro|"
    r"gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|dicembre|januari|"
    r"februari|maart|maret|mei|augustus|agustus|desember|ocak|şubat|mart|nisan|mayıs|haziran|"
    r"temmuz|ağustos|eylül|ekim|kasım|aralık|(?:stycz|lut|marz|marc|kwie|maj|czerw|lip|sierp|"
    r"wrze|październik|paździer|listopad|grud|январ|феврал|март|апрел|ма[йя]|июн|июл|август|"
    r"сентябр|октябр|ноябр|декабр)\w*"
)
_DATE = re.compile(
    r"(?<!\d)(?:(?P<y1>(?:19|20)\d{2})\s?[-/.년年]\s?(?:0?[1-9]|1[0-2])\s?[-/.월月]\s?"
    r"(?:0?[1-9]|[12]\d|3[01])(?:\s?[일日])?"
    r"|(?:0?[1-9]|[12]\d|3[01])[-/.](?:0?[1-9]|1[0-2])[-/.](?P<y2>(?:19|20)\d{2})"
    r"|(?:0?[1-9]|1[0-2])/(?:0?[1-9]|[12]\d|3[01])/(?P<y3>(?:19|20)\d{2})"
    rf"|(?i:(?:{_MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+(?P<y4>(?:19|20)\d{{2}}))"
    rf"|(?i:\d{{1,2}}(?:st|nd|rd|th)?\.?(?:\s+|[-/])(?:(?:of|de|di|del)\s+)?(?:{_MONTHS})"
    rf"(?:\s+|[-/])(?:de\s+)?(?P<y5>(?:19|20)\d{{2}}))"
    r"|(?P<y6>(?:19|20)\d{2})(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01]))(?!\d)"
    r"(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
)
DATE_SHAPE = re.compile(
    r"(?:19|20)\d{2}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.](?:19|20)\d{2}"
)
_BIRTH = re.compile(
    r"(?i:생년월일|생일|출생|년생|일생|(?<=\d)생|birth|born|\bdob\b|d\.o\.b|geboren|geburt|naissance|\bné|誕生|生年月日|出生"
    r"|nacimiento|nacid[oa]|nascita|\bnat[oa]\b|nascimento|nasceu|geboortedatum|urodzeni|urodzon|"
    r"doğum|рождени|родил|\blahir|ngày sinh)"
)


# a birth word, in the automaton (the case-insensitive alternation costs ~14 us on a long text)
_BIRTH_HINT = hints.hint("birth word", compile_lowered(_BIRTH.pattern), narrowing=True)
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d")
OLD_BEFORE = THIS_YEAR - RECENT_YEARS


def spans(text: str, out: list[Span], found: hints.Found | None = None) -> None:
    """Append the spans of old dates and dates of birth in *text* (*found*: the hints of its
    lower-cased text, :func:`tracelake.scrub.hints.scan`)."""
    if found is None:
        found = hints.scan(lowered(text))
    # Cheap gate: a date needs a year; recent years without a birth word are kept anyway.
    birth = _BIRTH_HINT in found and _BIRTH.search(text) is not None
    if birth:
        birth_spans(text, out)
    years = [int(m.group(0)) for m in _YEAR.finditer(text)]
    if not years:
        return
    if not birth and min(years) >= OLD_BEFORE:
        return
    _full_dates(text, birth, out)


def _full_dates(text: str, birth: bool, out: list[Span]) -> None:
    """Dates with a four-digit year: of birth next to a birth word, else old ones."""
    for match in _DATE.finditer(text):
        year = next(int(y) for y in match.group("y1", "y2", "y3", "y4", "y5", "y6") if y)
        start, end = match.span()
        if match.group("y6") and end - start == 8 and year >= OLD_BEFORE:
            continue
        near = text[max(0, start - 24) : min(len(text), end + 8)] if birth else ""
        if birth and _BIRTH.search(near):
            out.append((start, end, "DATE_OF_BIRTH"))
        elif year < OLD_BEFORE:
            out.append((start, end, "DATE"))


# Short forms, judged only next to a birth word: YY.MM.DD, YYMMDD, DD/MM/YY, MM/DD/YY, 85년 3월 14일,
# a month and a day (3월 14일, March 14, 14 March).
_SHORT_DATE = re.compile(
    r"(?<![\d.])(?:\d{2}\s?[-/.]\s?(?:0?[1-9]|1[0-2])\s?[-/.]\s?(?:0?[1-9]|[12]\d|3[01])"
    r"|\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])"
    r"|(?:0?[1-9]|[12]\d|3[01])[-/.](?:0?[1-9]|1[0-2])[-/.]\d{2}"
    r"|(?:0?[1-9]|1[0-2])[-/.](?:0?[1-9]|[12]\d|3[01])[-/.]\d{2}"  # US: 04/14/62
    rf"|(?i:\d{{1,2}}[-/](?:{_MONTHS})[-/]\d{{2}})"  # 11-Jun-04
    r"|(?:\d{2}\s?년\s?)?(?:0?[1-9]|1[0-2])\s?월\s?(?:0?[1-9]|[12]\d|3[01])\s?일?"
    rf"|(?i:(?:{_MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})))"
    r"(?![\d.])"
)


def birth_spans(text: str, out: list[Span]) -> None:
    """The short date forms (:data:`_SHORT_DATE`) within 24 characters after a birth word
    or 8 before it (85.03.14생)."""
    for word in _BIRTH.finditer(text):
        window_start = word.end()
        window = text[window_start : window_start + 32]
        for match in _SHORT_DATE.finditer(window):
            if match.start() <= 24:
                out.append(
                    (window_start + match.start(), window_start + match.end(), "DATE_OF_BIRTH")
                )
        before = text[max(0, word.start() - 16) : word.start()]
        for match in _SHORT_DATE.finditer(before):
            if len(before) - match.end() <= 8:
                start = word.start() - len(before) + match.start()
                out.append((start, start + match.end() - match.start(), "DATE_OF_BIRTH"))
