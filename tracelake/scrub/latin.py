"""Names and addresses in Latin-script free text, fail-closed (part of :mod:`freetext`'s pass).

A run of capitalised words with at least one that is not on the allow-list of common English
words (:mod:`tracelake.scrub.vocab`) is a name, or an address when it holds a number, a street
word or a postcode-like code (``876 Jesse Drive Suite 012, West Kimberlyview, NJ 78456``).
Lower-case words, ALL-CAPS codes, camelCase and snake_case identifiers are kept.
"""

from __future__ import annotations

import re
from functools import lru_cache

from tracelake.scrub.first_chars import guard
from tracelake.scrub.lowered import compile_lowered
from tracelake.scrub.vocab import (
    COMMON_WORDS,
    NAME_PARTICLES,
    PHRASE_WORDS,
    ROLE_HEADS,
    STREET_WORDS,
)

Span = tuple[int, int, str]

CJK_CHARS = (
    "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\u3005\u3006"
    "\uff10-\uff19\uff21-\uff3a\uff41-\uff5a"  # full-width digits and Latin (ＪＰタワー)
)
# A word: letters (any script but Hangul and CJK, which have their own passes), with inner
# apostrophes, hyphens and dots (O'Neil, Jean-Pierre, B.Sc).
_WORD = re.compile(
    r"[A-Za-z]+\d[A-Za-z0-9]*|\d+[A-Za-z][A-Za-z0-9]*|"
    r"[^\W\d_\uac00-\ud7a3"
    + CJK_CHARS
    + r"](?:[^\W_\uac00-\ud7a3"
    + CJK_CHARS
    + r"]|['’.\-](?=[^\W\d_]))*"
    r"|\d+|\[[A-Z][A-Z0-9_]*\]"
)
_MILITARY_POST = frozenset(
    {"PSC", "APO", "FPO", "DPO", "USNS", "USNV", "USS", "USCGC", "CMR", "UNIT"}
)
_GAP = re.compile(r"[\s,./#()\-–]*")
_CODE = re.compile(r"[A-Z0-9]{1,4}|[A-Z]{1,2}\d[A-Z0-9]?|(?=[A-Za-z]*\d)[A-Za-z0-9]{1,5}")
_PARTS = re.compile(r"[-'’.]")
_CAPS_PARTS = re.compile(r"[-'.]")
_INNER_CAP = re.compile(r"[-'’.][A-Z]")
_NAME_PREFIX = re.compile(r"(?:Mc|Mac|O'|D'|Di|De|Le|La|Van|Von)[A-Z][a-z]+")
_JOINABLE = ("anchor", "cap", "join")
_CODE_SUFFIX = re.compile(
    r"(?:Error|Exception|Warning|Service|Client|Handler|Request|Response|Event|Config|Manager|"
    r"Controller|Factory|Provider|Adapter|Repository|Model|Schema|Type|Id|Api|Tool)$"
)


@lru_cache(maxsize=65536)
def kind(word: str) -> str:
    """anchor (unknown capitalised word), cap (common capitalised word), join (may sit
    inside a name or an address), caps (unknown ALL-CAPS word), pascal (PascalCase), or
    stop."""
    if word[0] == "[":
        return "stop"
    if word.isdigit():
        return "join" if len(word) <= 6 else "stop"
    if word[0].isupper():
        return _all_caps_kind(word) if word.isupper() else _capitalised_kind(word)
    if _CODE.fullmatch(word):
        return "join"
    low = word.lower()
    return "join" if low in NAME_PARTICLES or low in STREET_WORDS else "stop"


def _all_caps_kind(word: str) -> str:
    if word in _MILITARY_POST:
        return "anchor"
    parts = [p for p in _CAPS_PARTS.split(word.lower()) if p]
    if all(p in COMMON_WORDS for p in parts) and (len(parts) == 1 or min(map(len, parts)) > 2):
        return "cap"  # I-AN, SU-IN: parts of a romanised given name, not two words
    letters = word.replace("-", "").replace("'", "").replace(".", "")
    if letters.isalpha() and len(letters) >= 2:
        return "caps"  # LI CHIA-HU: a name only next to another name word
    return "join" if _CODE.fullmatch(word) else "stop"


def _capitalised_kind(word: str) -> str:
    rest = word[1:].replace("'", "").replace("’", "").replace("-", "").replace(".", "")
    if any(c.isupper() for c in rest) and not _INNER_CAP.search(word):
        if not word.isascii():
            return "anchor"  # GérardVille: code identifiers are ASCII
        if _NAME_PREFIX.fullmatch(word):
            return "anchor"
        if _CODE_SUFFIX.search(word):
            return "stop"  # ValueError, OrderService, HttpClient: a class name
        return "pascal"  # PascalCase: an identifier, unless inside a name or address
    if word.lower().rstrip(".") in STREET_WORDS:
        return "anchor"  # Street, Suite, Apt., Box, Flat, Studio, Rue ...
    parts = [p for p in _PARTS.split(word.lower()) if p]
    return "cap" if parts and all(p in COMMON_WORDS for p in parts) else "anchor"


def _joined(words: list[re.Match[str]], text: str, a: int, b: int) -> bool:
    """Words *a* < *b* are separated by a gap only (spaces, commas, dots, ...)."""
    return _GAP.fullmatch(text[words[a].end() : words[b].start()]) is not None


def _next_to(
    words: list[re.Match[str]], kinds: list[str], k: int, text: str, what: tuple[str, ...]
) -> bool:
    for j in (k - 1, k + 1):
        if 0 <= j < len(words) and kinds[j] in what and _joined(words, text, min(j, k), max(j, k)):
            return True
    return False


def _resolve(words: list[re.Match[str]], kinds: list[str], text: str) -> None:
    """PascalCase and ALL-CAPS words become anchors only next to a name or place word."""
    for k, what in enumerate(kinds):  # 32277 LemoineBourg, Sainte JulieVille: the place
        if what == "pascal":
            kinds[k] = "anchor" if _next_to(words, kinds, k, text, ("anchor", "join")) else "stop"
    for k, what in enumerate(kinds):  # an unknown ALL-CAPS word next to another name word
        if what == "caps":
            kinds[k] = (
                "anchor"
                if _next_to(words, kinds, k, text, ("caps", "anchor"))
                or _after_initial(words, k, text)  # I CHIEN-HUA, O MINSU: a one-letter surname
                else "stop"
            )


def _after_initial(words: list[re.Match[str]], k: int, text: str) -> bool:
    """Word *k* follows a one-letter capital word other than the article (I, O, U, E:
    romanised surnames such as 易, 오, 우)."""
    if k == 0:
        return False
    before = words[k - 1].group(0)
    return (
        len(before) == 1 and before.isupper() and before != "A" and _joined(words, text, k - 1, k)
    )


def _mid_sentence(words: list[re.Match[str]], text: str, k: int) -> bool:
    """Word *k* follows a lower-case word and one blank."""
    return (
        k > 0
        and words[k - 1].group(0)[:1].islower()
        and text[words[k - 1].end() : words[k].start()] == " "
    )


def _extent(words: list[re.Match[str]], kinds: list[str], text: str, i: int) -> tuple[int, int]:
    """The run of joinable words around anchor *i*, less common words at its edges."""
    lo = hi = i
    while lo > 0 and kinds[lo - 1] in _JOINABLE and _joined(words, text, lo - 1, lo):
        lo -= 1
    while hi + 1 < len(words) and kinds[hi + 1] in _JOINABLE and _joined(words, text, hi, hi + 1):
        hi += 1
    # common capitalised words and particles at the edges are not part of the name, unless
    # a common word comes mid-sentence, right after a lower-case word: a first name that is a
    # word too (to Jun Suzuki, for May Tanaka), not a sentence's first word
    while lo < i and (
        (kinds[lo] == "cap" and not _mid_sentence(words, text, lo))
        or words[lo].group(0).lower() in NAME_PARTICLES
    ):
        lo += 1
    while hi > i and (kinds[hi] == "cap" or words[hi].group(0).islower()):
        hi -= 1
    return lo, hi


def _run_entity(members: list[str], run_kinds: list[str]) -> str | None:
    """PERSON or ADDRESS for a run of words, ``None`` for a street word alone."""
    has_digit = any(m.isdigit() for m in members)
    if not has_digit and all(
        m.lower().rstrip(".") in STREET_WORDS or m in _MILITARY_POST
        for m, k in zip(members, run_kinds, strict=True)
        if k == "anchor"
    ):
        return None  # "Box not found": a street word alone, without a number
    # an address has a number (house, postcode): "Joshua Park" or "Ryan Green" is a name
    address = any(any(c.isdigit() for c in m) for m in members) or any(
        m in _MILITARY_POST for m in members
    )
    return "ADDRESS" if address else "PERSON"


# Street words that are common surnames too: right after a capitalised common word they end
# a name (Max Green, Will Park, Grace Hill), where a street word alone is kept ("Box not
# found"). Found by a Faker corpus (seed 3397894): "Max Green (...) asked" was stored whole.
_SURNAME_STREETS = frozenset({"green", "park", "parks", "hill", "lane", "grove", "court"})


def _surname_street(
    words: list[re.Match[str]], kinds: list[str], text: str, lo: int, hi: int
) -> bool:
    return (
        lo == hi
        and lo > 0
        and kinds[lo - 1] == "cap"
        and words[lo].group(0).lower() in _SURNAME_STREETS
        and _joined(words, text, lo - 1, lo)
    )


def latin_spans(text: str, out: list[Span]) -> None:
    """Append the spans of Latin-script names (PERSON) and addresses (ADDRESS) in *text*."""
    words = list(_WORD.finditer(text))
    kinds = [kind(w.group(0)) for w in words]
    if "anchor" not in kinds and "caps" not in kinds:
        return  # no unknown capitalised word (a PascalCase one alone is an identifier)
    _resolve(words, kinds, text)
    i = 0
    while i < len(words):
        if kinds[i] != "anchor":
            i += 1
            continue
        lo, hi = _extent(words, kinds, text, i)
        entity = _run_entity([w.group(0) for w in words[lo : hi + 1]], kinds[lo : hi + 1])
        if entity is None and _surname_street(words, kinds, text, lo, hi):
            lo, entity = lo - 1, "PERSON"
        if entity is not None:
            out.append((words[lo].start(), words[hi].end(), entity))
        i = hi + 1


# -- names in lower case --------------------------------------------------------------------
# A name written in lower case has no capital to betray it; its label does (name: john smith,
# customer rosenda jerez called, From: olivia permadi <...>, 수령인 marco rossi). Strong labels
# (a colon or "=", a name word, a title, a Korean person label) announce one word or more;
# weak ones (customer, client, hi) two or more, so "customer complained" stays.
_STRONG_LABEL = (
    r"(?i:\b(?:(?:full|first|last|given|family|customer|client|contact|recipient|receiver|sender|"
    r"buyer|user|account|card ?holder|guest|passenger|patient|member)[ _]?)?name\s*[:=]"
    r"|\b(?:customer|client|recipient|receiver|addressee|buyer|orderer|consignee|shipper|sender|"
    r"contact|attn|attention|signed(?: by)?|regards|assignee|owner|holder|guest|passenger|"
    r"patient|member)\s*[:=,]"
    r"|(?m:^(?:from|to|cc|bcc|reply-to)\s*:)"
    r"|\b(?:dear|mr|mrs|ms|miss|mx|dr|prof|sir|madam)\b\.?)"
    r"|수령인|주문자|예금주|이름|성명|성함|받는\s?분|보내는\s?분|고객명"
)
# (a whole word: "hi" in "hicks.com today" took "cks.com today" for a name)
_WEAK_LABEL = (
    r"(?i:\b(?:customer|client|buyer|guest|passenger|patient|member|hi|hello|hey|user|"
    r"recipient|receiver|addressee|consignee|sender|orderer)\b)"
)
_LOWER_LABEL = re.compile(rf"(?:(?P<strong>{_STRONG_LABEL})|(?P<weak>{_WEAK_LABEL}))\s*")
_LOWER_LABEL_LOW = guard(compile_lowered(_LOWER_LABEL.pattern))
_LOWER_NAME_WORD = re.compile(r"[a-zß-öø-ÿ][a-zß-öø-ÿ'’.\-]{0,30}(?![\w'’\-])")
# After a label, two or more capitalised words are a name even when each is a common word
# (Customer: Max Field, dear Rose Hill, passenger Will Price): the capitalised pass (above)
# only sees a name in a word it does not know.
_TITLE_NAME_WORD = re.compile(
    r"[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]*(?:['’\-][A-ZÀ-ÖØ-Þa-zß-öø-ÿ][a-zß-öø-ÿ]*)*\.?(?![\w'’\-])"
)  # Mary-Kate, O'Field, Jr.
_BLANK = re.compile(r"[ \t]")
_BLANKS = re.compile(r"[ \t]+")
_PARTICLE = re.compile(
    "(?:(?:" + "|".join(sorted(NAME_PARTICLES, key=len, reverse=True)) + r")[ \t]+)+"
    r"(?=[A-ZÀ-ÖØ-Þ])"
)
# ... unless they name a role, a team or a thing, or make a phrase (vocab.ROLE_HEADS,
# vocab.PHRASE_WORDS)
LOWER_PATTERN = rf"{_STRONG_LABEL}|{_WEAK_LABEL}"  # freetext runs it lowered (lower_pattern)


# A common word that ends the line or clause right after a name's first word is its surname
# (Contact: ryan price\n, From: anna page <...>)
_NAME_END = re.compile(r"[ \t]*(?:$|[\n,;<(])")


def _ordinary(word: str, first: bool = True) -> bool:
    """A common English word or a regular inflection of one (wants, called, asking,
    boxes); the stripping is strict so that a name is not read as one (bagas is not bag).
    After a name's first word, street words and particles are parts of it (corrado green,
    anne de la tour)."""
    if word in COMMON_WORDS:
        return True
    if not first:  # after a name's first word only a word as written ends it (llamas, not llama)
        return False
    if word in NAME_PARTICLES or word in STREET_WORDS:
        return True
    if word.endswith("es") and word[:-2].endswith(("s", "x", "ch", "sh")):
        return word[:-2] in COMMON_WORDS
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1] in COMMON_WORDS
    for suffix in ("ed", "ing"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            base = word[: -len(suffix)]
            return base in COMMON_WORDS or base + "e" in COMMON_WORDS or base[:-1] in COMMON_WORDS
    return False


def lower_name_spans(text: str, low: str, out: list[Span]) -> None:
    """Append the spans of lower-case names after a person label, and of two or more
    capitalised words after one (see above). *low*: :func:`lowered` of *text*, where the
    labels are found (same length, same word boundaries: a case-insensitive alternation of
    labels took ~32 us a text, about twice this)."""
    for label in _LOWER_LABEL_LOW.finditer(low):
        titled = _title_words(text, label.end())
        if len(titled) >= 2 and _may_be_name([w.group(0).lower() for w in titled]):
            out.append((titled[0].start(), titled[-1].end(), "PERSON"))
            continue
        pos, words = label.end(), list[re.Match[str]]()
        while len(words) < 4:
            match = _LOWER_NAME_WORD.match(text, pos)
            if match is None:
                break
            if _ordinary(match.group(0).lower(), first=not words) and not (
                words and _NAME_END.match(text, match.end())  # ryan price<end>: a surname
            ):
                break
            words.append(match)
            if _BLANK.match(text, match.end()) is None:
                break
            pos = match.end() + 1
        if words and (label.group("strong") is not None or len(words) >= 2):
            out.append((words[0].start(), words[-1].end(), "PERSON"))


def _may_be_name(words: list[str]) -> bool:
    return words[-1] not in ROLE_HEADS and PHRASE_WORDS.isdisjoint(words)


def _title_words(text: str, pos: int) -> list[re.Match[str]]:
    """Up to four capitalised words from *pos*, blanks apart, name particles between them
    (Kristin van de Water)."""
    words: list[re.Match[str]] = []
    while len(words) < 4:
        match = _TITLE_NAME_WORD.match(text, pos)
        if match is None or len(match.group(0).rstrip(".")) < 2:
            break
        words.append(match)
        blank = _BLANKS.match(text, match.end())
        if blank is None:
            break
        pos = blank.end()
        particle = _PARTICLE.match(text, pos)
        if particle is not None:
            pos = particle.end()
    return words
