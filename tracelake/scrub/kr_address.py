"""Korean street addresses in free text, fail-closed (part of :mod:`freetext`'s pass).

Two or more administrative units in a row (경기도 수원시, 강남구 역삼동) start an address;
it runs on over road names, numbers, buildings and parentheses. Fragments without the units
count too: a road name with a building number (테헤란로 427), a lot number (역삼동 736-64),
a building with its unit (자이아파트 108동 1303호), and whatever follows an address label
(배송지:, 주소:) when it has a number.
"""

from __future__ import annotations

import re

from tracelake.scrub.hangul import words_lexicon

_PROVINCE = "서울|부산|대구|인천|광주|대전|울산|세종|경기|강원|충북|충남|전북|전남|경북|경남|제주"
_FIRST_UNIT = re.compile(
    rf"(?:{_PROVINCE})|[가-힣]{{1,10}}(?:특별시|광역시|특별자치시|특별자치도)|[가-힣]{{2,6}}도"
    r"|[가-힣]{1,5}(?:시|군)"
)
_SECOND_UNIT = re.compile(r"[가-힣0-9]{1,12}(?:시|군|구|읍|면|동|로|길|거리|대로)")
_ROADISH = re.compile(
    r"(?:[가-힣0-9]{0,16}(?:로|길|거리|대로|번길|동|리|가|읍|면|구|시|군|마을|단지)(?:\d{1,5}(?:-\d{1,5})?)?"
    r"|(?:지하|산)?\d{1,5}(?:-\d{1,5})?(?:번지|호|층|동)?"
    r"|\([^()\n]{1,30}\)|[가-힣A-Za-z0-9]{1,20}(?:아파트|빌딩|빌라|오피스텔|타워|맨션|하우스|센터|상가)"
    r"|\d{1,5}(?:동|호|층))(?P<particle>으로|로|에서|에|의|까지)?"
)
_TOKEN = re.compile(r"\S+")


_BUILDING = r"[가-힣A-Za-z0-9]{1,20}(?:아파트|빌딩|빌라|오피스텔|타워|맨션|하우스|센터|상가|플라자)"
_UNIT = r"(?:\s?\d{1,4}동)?(?:\s?\d{1,5}(?:호|층))?"
_FRAGMENT = re.compile(
    # a road and a building number, then a building and its unit: 테헤란로 427 위워크타워 10층
    rf"(?P<road>[가-힣0-9]{{1,15}}(?:로|길|대로|번길))\s?(?:지하\s?)?\d{{1,5}}(?:-\d{{1,5}})?(?![\d가-힣])"
    rf"(?:\s?{_BUILDING})?{_UNIT}"
    # a dong and a lot number: 역삼동 736-64
    r"|[가-힣]{1,6}동\s?\d{1,5}-\d{1,5}(?!\d)"
    # a building and its unit: 자이아파트 108동 1303호
    rf"|{_BUILDING}\s?(?:\d{{1,4}}동\s?\d{{1,5}}호|\d{{1,5}}호|\d{{1,4}}동)"
)
_LABELLED = re.compile(
    r"(?:배송지|배송\s?주소|주소지?|도로명\s?주소|지번\s?주소|수령지|배달지|거주지|자택)\s*[:：]?\s*"
    r"([^,;|\n]{2,80})"
)


def fragment_spans(text: str) -> list[tuple[int, int]]:
    """Spans of address fragments without administrative units (:data:`_FRAGMENT`; a road
    name that is an ordinary word, 경로 2, is not one), and of what an address label
    announces when it holds a number."""
    spans: list[tuple[int, int]] = []
    for match in _LABELLED.finditer(text):
        if any(c.isdigit() for c in match.group(1)):
            spans.append((match.start(1), match.start(1) + len(match.group(1).rstrip())))
    words = words_lexicon()
    for match in _FRAGMENT.finditer(text):
        road = match.group("road")
        if road is not None and road in words:
            continue
        spans.append(match.span())
    return spans


def address_spans(text: str) -> list[tuple[int, int]]:
    """Spans of Korean street addresses: two administrative units in a row, then on; and
    the fragments of :func:`fragment_spans`."""
    return _unit_spans(text) + fragment_spans(text)


def _unit_spans(text: str) -> list[tuple[int, int]]:
    tokens = [(m.start(), m.group(0)) for m in _TOKEN.finditer(text)]
    words = [
        _MARK if _MARK in t else t.strip(_PUNCT).replace("(", "").replace(")", "")
        for _, t in tokens
    ]
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(tokens) - 1:
        j = _address_head(words, i)
        if not j:
            i += 1
            continue
        while j < len(tokens) and words[j] and _ROADISH.fullmatch(words[j]):
            j += 1
        start = _address_start(tokens, words, i)
        end = _address_end(tokens, words, j - 1, start)
        if j > i + 1 and (any(c.isdigit() for c in text[start:end]) or _MARK in text[start:end]):
            spans.append((start, end))
            i = j
        else:
            i += 1
    return spans


def _address_head(words: list[str], i: int) -> int:
    """Index of the first word after the head of an address starting at word *i*, or 0."""
    if words[i] == _MARK:  # an address a recognizer found: take what follows
        return i + 1
    if _FIRST_UNIT.fullmatch(words[i]) and (
        _SECOND_UNIT.fullmatch(words[i + 1]) or words[i + 1] == _MARK
    ):
        return i + 2
    return 0


def _address_start(tokens: list[tuple[int, str]], words: list[str], i: int) -> int:
    at, token = tokens[i]
    if words[i] == _MARK:
        return at + token.index(_MARK)
    return at + len(token) - len(token.lstrip(_PUNCT))


def _address_end(tokens: list[tuple[int, str]], words: list[str], k: int, start: int) -> int:
    """End of the address whose last word is *k*: a particle after it is not the address."""
    at, last = tokens[k]
    end = at + len(last.rstrip(_PUNCT))
    if words[k] == _MARK:
        return at + last.index(_MARK) + len(_MARK)
    if number := _NUMBER_PARTICLE.fullmatch(words[k]):  # 328로: number + particle
        return end - len(number.group(1))
    if ")" in last and last[last.rindex(")") + 1 :] in _PARTICLES:
        return at + last.rindex(")") + 1  # (정남안이면)로: 로 is a particle here
    tail = _ROADISH.fullmatch(words[k])
    if tail is not None and tail.group("particle") and end - len(tail.group("particle")) > start:
        return end - len(tail.group("particle"))  # 서초대로 12로 배송
    return end


_MARK = "[ADDRESS]"
_PARTICLES = frozenset(["로", "으로", "에", "에서", "의", "까지"])
_NUMBER_PARTICLE = re.compile(
    r"(?:지하|산)?\d{1,5}(?:-\d{1,5})?(?:번지|호)?(으로|로|에서|에|의|까지)"
)
_PUNCT = "()[]{}<>,.;:!?\"'"
