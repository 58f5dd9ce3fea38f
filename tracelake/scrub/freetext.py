"""The fail-closed pass over free text: keep what is known to be safe, replace the rest.

Runs after the recognizers (:mod:`tracelake.scrub.detect`), on their output. Recall must
not hinge on recognising every name, address or number format of every country, so:

* **Digit runs** (digits joined by spaces, ``-``, ``.``, ``/``, parentheses, a leading ``+``,
  an ``x123`` extension) of 7 or more digits are replaced, whatever the format: phone
  numbers of any country, bank accounts, card numbers grouped or not, Luhn-valid or not,
  national ids. Kept: runs of up to 6 digits (amounts, statuses, durations, postcodes),
  runs inside an id with a letter prefix (``ORD-20260725-0001``, ``DLV240513871715``), runs
  right after an id label (``송장번호 512345678901``, ``order no. 2026072512345``) unless a
  personal-data word (계좌, card, phone, ...) is as close, and numbers that start with a
  recent date (``20260725123456``).
* **Dates** more than five years old, or next to a birth word (생년월일, born, DOB), are
  replaced; recent dates (order, delivery, timestamps) are kept.
* **IBANs** (shape, any country, spaced or not) and **provider API keys** (GitHub, Slack,
  OpenAI, Stripe, Google, AWS) are replaced; so are URL credentials (``user:pass@``) and
  query parameters whose name the key rules call a credential or person data.
* **Hangul names and Korean addresses**: :mod:`tracelake.scrub.hangul`.
* **Chinese and Japanese script** (Han, kana) is replaced run by run: names and addresses in
  those scripts cannot be told from other words without a model.
* **Capitalised words** (in text with spaces): names and addresses in Latin script,
  :mod:`tracelake.scrub.latin`.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime

from tracelake.scrub import credentials, email_forms, hangul, latin, national_ids

Span = tuple[int, int, str]

# The marker written in place of a value, where it differs from the entity counted in the
# report: a name is ``[PERSON]`` and an address ``[ADDRESS]`` whatever their script, so that
# goals which differ only in whose name they carry still make one query family.
MARKERS = {
    "KR_NAME": "PERSON",
    "CJK_NAME": "PERSON",
    "KR_ADDRESS": "ADDRESS",
    "CJK_ADDRESS": "ADDRESS",
    "KR_PASSPORT": "PASSPORT",
}

_THIS_YEAR = datetime.now(UTC).year
RECENT_YEARS = 5

# -- digits ---------------------------------------------------------------------------------
_DIGIT_RUN = re.compile(
    r"(?<![A-Za-z0-9_])(?<![A-Za-z0-9][-_./])"
    r"(?:\+\s?)?(?:\(\s?\+?\d{1,5}\s?\)\s?(?:[-.]\s?)?)?\d+"  # (0479)-305966
    r"(?:(?:\s?[-./_\u00b7\u2010-\u2015\u2212\uff0d]\s?|\s|\s?\(\d{1,4}\)\s?(?:[-.]\s?)?|\)\s?)\d+)*"
    r"(?:\s?(?:x|ext\.?)\s?\d{1,6})?"
    r"(?![A-Za-z0-9_])"
)
_ID_LABEL = re.compile(
    r"(?i:(?:주문|송장|운송장|배송|택배|상품|클레임|반품|교환|환불|결제|승인|영수증|거래|요청|접수|"
    r"쿠폰|invoice|order|tracking|waybill|shipment|parcel|claim|delivery|refund|return|goods|"
    r"product|item|sku|transaction|txn|receipt|reference|ref|(?<!bad )(?<!invalid )request|ticket|case)"
    r"\s*(?:번호|no\.?|number|num|id|#|code)?\s*[:#=]?\s*)$"
)
_PII_WORD = re.compile(
    r"(?i:계좌|account|acct|iban|bank|은행|뱅크|카드|card|phone|tel\b|fax|mobile|전화|연락처|휴대폰|핸드폰|"
    r"주민|외국인|passport|여권|ssn|national|면허|license|생년|birth)"
)
_DATE_PREFIX = re.compile(r"(20[1-3]\d)(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])\d{2,}")


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


_CONTEXT_ENTITY = (
    (re.compile(r"(?i:계좌|account|acct|bank|은행|뱅크|예금)"), "BANK_ACCOUNT"),
    (re.compile(r"(?i:카드|card|visa|master|amex)"), "CREDIT_CARD"),
    (re.compile(r"(?i:passport|여권|旅券|パスポート|护照|護照)"), "PASSPORT"),
    (re.compile(r"(?i:주민|외국인등록|rrn|ssn|national id)"), "KR_RRN"),
    (
        re.compile(r"(?i:phone|tel|fax|mobile|call|전화|연락처|휴대폰|핸드폰|번호로)"),
        "PHONE_NUMBER",
    ),
)


def _digit_entity(run: str, digits: str, before: str) -> str:
    """The marker of a replaced digit run: the nearest context word decides, else its shape."""
    best, where = "", -1
    for pattern, entity in _CONTEXT_ENTITY:
        for match in pattern.finditer(before):
            if match.start() > where:
                best, where = entity, match.start()
    if best:
        return best
    if re.fullmatch(r"\d{6}\s?-\s?[1-8]\d{6}", run):
        return "KR_RRN"
    if 13 <= len(digits) <= 19 and _luhn(digits) and not run.startswith(("+", "(")):
        return "CREDIT_CARD"
    if run.startswith(("+", "(")) or len(digits) <= 12:
        return "PHONE_NUMBER"
    return "NUMBER"


_NON_DIGIT = re.compile(r"\D")
_RECENT_YMD = re.compile(r"20[1-3]\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])(?!\d)")


# A phone number glued to its label (HP.010-2345-6789, Tel:+44 20 7946 0958, No.010...):
# the digit-run rule keeps runs glued to a word (ids such as ORD-20260725-0001), so these
# labels are named.
_GLUED_PHONE = re.compile(
    r"(?<![A-Za-z])(?i:hp|tel|t\u00e9l|ph|phone|mob|mobile|cell|fax|no|nr|num|contact|call|"
    r"whatsapp|wa|kakao|line|m|t|p)[-_./:]"
    r"((?:\+\s?)?\(?\d[\d\s().\-]{5,}\d)(?![A-Za-z0-9_])"
)


def _glued_phone_spans(text: str, out: list[Span]) -> None:
    for match in _GLUED_PHONE.finditer(text):
        if len(_NON_DIGIT.sub("", match.group(1))) >= 7:
            out.append((match.start(1), match.end(1), "PHONE_NUMBER"))


def _recent_date_first(run: str, digits: str) -> bool:
    """*run* starts with a date of the last RECENT_YEARS years (or next year): an order or
    delivery number. Older dates are not (a Yugoslav JMBG starts with a birth date), nor
    later ones (a Polish PESEL of 2028-09-02 is a birth date written YYMMDD)."""
    match = (_DATE_PREFIX.fullmatch(digits) if digits == run else None) or _RECENT_YMD.match(run)
    return match is not None and _OLD_BEFORE <= int(run[:4]) <= _THIS_YEAR + 1


def _digit_spans(text: str, out: list[Span]) -> None:
    _glued_phone_spans(text, out)
    for match in _DIGIT_RUN.finditer(text):
        run = match.group(0).rstrip(" -./")
        if len(run) < 7:
            continue
        digits = _NON_DIGIT.sub("", run)
        if len(digits) < 7:
            continue
        if _recent_date_first(run, digits):
            continue  # an id that starts with a recent date (20260725123, 20260725-001)
        if _DATE_SHAPE.fullmatch(run):
            continue  # a date or timestamp: the date rule decides
        start = match.start()
        before = text[max(0, start - 24) : start]
        if (
            before
            and run[0] != "+"  # +44 161 ...: an international phone number, never an id
            and _ID_LABEL.search(before[-16:])
            and not _PII_WORD.search(before)
        ):
            continue
        out.append((start, start + len(run), _digit_entity(run, digits, before)))


# -- dates ----------------------------------------------------------------------------------
_MONTHS = (
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?|janvier|février|mars|avril|"
    r"mai|juin|juillet|août|septembre|octobre|novembre|décembre|januar|februar|märz|juni|juli|"
    r"oktober|dezember"
)
_DATE = re.compile(
    r"(?<!\d)(?:(?P<y1>(?:19|20)\d{2})\s?[-/.년年]\s?(?:0?[1-9]|1[0-2])\s?[-/.월月]\s?"
    r"(?:0?[1-9]|[12]\d|3[01])(?:\s?[일日])?"
    r"|(?:0?[1-9]|[12]\d|3[01])[-/.](?:0?[1-9]|1[0-2])[-/.](?P<y2>(?:19|20)\d{2})"
    r"|(?:0?[1-9]|1[0-2])/(?:0?[1-9]|[12]\d|3[01])/(?P<y3>(?:19|20)\d{2})"
    rf"|(?i:(?:{_MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+(?P<y4>(?:19|20)\d{{2}}))"
    rf"|(?i:\d{{1,2}}(?:st|nd|rd|th)?\.?\s+(?:of\s+)?(?:{_MONTHS})\s+(?P<y5>(?:19|20)\d{{2}}))"
    r"|(?P<y6>(?:19|20)\d{2})(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01]))(?!\d)"
    r"(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
)
_DATE_SHAPE = re.compile(
    r"(?:19|20)\d{2}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.](?:19|20)\d{2}"
)
_BIRTH = re.compile(
    r"(?i:생년월일|생일|출생|birth|born|\bdob\b|d\.o\.b|geboren|geburt|naissance|\bné|誕生|生年月日|出生)"
)


_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d")
_OLD_BEFORE = _THIS_YEAR - RECENT_YEARS


def _date_spans(text: str, out: list[Span]) -> None:
    # Cheap gate: a date needs a year; recent years without a birth word are kept anyway.
    years = [int(m.group(0)) for m in _YEAR.finditer(text)]
    if not years:
        return
    birth = _BIRTH.search(text) is not None
    if not birth and min(years) >= _OLD_BEFORE:
        return
    for match in _DATE.finditer(text):
        year = next(int(y) for y in match.group("y1", "y2", "y3", "y4", "y5", "y6") if y)
        start, end = match.span()
        if match.group("y6") and end - start == 8 and year >= _OLD_BEFORE:
            continue
        near = text[max(0, start - 24) : min(len(text), end + 8)] if birth else ""
        if birth and _BIRTH.search(near):
            out.append((start, end, "DATE_OF_BIRTH"))
        elif year < _OLD_BEFORE:
            out.append((start, end, "DATE"))


# -- scripts --------------------------------------------------------------------------------
_CJK_CHARS = latin.CJK_CHARS
_CJK = re.compile(
    rf"(?:(?<!\d)\d{{1,7}}\s?)?[{_CJK_CHARS}]+(?:(?:[\d\-－]{{1,6}}|\s|[A-Za-z])[{_CJK_CHARS}]+)*"
    rf"(?:\s?[A-Za-z]?\d{{1,7}}(?:[-－]\d{{1,7}}){{0,3}}(?!\d))?"
)
_HAS_CJK = re.compile(f"[{_CJK_CHARS}]")
_CJK_ADDRESS = re.compile(r"[省市区區县縣镇鎮乡鄉村路街道巷弄号號楼樓座都府県郡町丁目番地]|\d")


def _cjk_entity(run: str) -> str:
    """A Han/kana run: an address when it has digits, a name when it is short (2-5
    characters, a space allowed: 林 京助, 木村 篤司), an address when it has address
    characters (省, 市, 県, 丁目, ...), else CJK text."""
    if any(c.isdigit() for c in run):
        return "CJK_ADDRESS"
    if len(run.replace(" ", "")) <= 5:
        return "CJK_NAME"
    if _CJK_ADDRESS.search(run):
        return "CJK_ADDRESS"
    return "CJK_TEXT"


# Scripts without letter case (Arabic, Hebrew, Thai, Lao, the Indic scripts, Sinhala,
# Georgian, Ethiopic, Khmer, Myanmar): no capital marks a name, and no lexicon here covers
# them, so a run of their letters (words joined by spaces) is not kept: up to three words is
# taken for a name, a run with digits for an address, a longer one for text (fail closed).
_UNCASED_CHARS = (
    "\u0590-\u05ff\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\u0900-\u0dff\u0e00-\u0eff"
    "\u1000-\u109f\u10a0-\u10ff\u1200-\u137f\u1780-\u17ff\ufb1d-\ufdff\ufe70-\ufefc"
)
_UNCASED = re.compile(
    rf"[{_UNCASED_CHARS}]+(?:[\s'\u2019.\-]+\d{{0,6}}\s?[{_UNCASED_CHARS}]+|\s\d{{1,6}})*"
)
_HAS_UNCASED = re.compile(f"[{_UNCASED_CHARS}]")


def _uncased_entity(run: str) -> str:
    if any(c.isdigit() for c in run):
        return "ADDRESS"
    return "PERSON" if len(run.split()) <= 3 else "SCRIPT_TEXT"


# -- the pass -------------------------------------------------------------------------------
_ADDRESS_HINT = re.compile(r"[시도군구동로길]\s|\[ADDRESS\]")
# the separators of _DIGIT_RUN: ASCII ones, underscore, Unicode dashes and minus, full-width
# hyphen, middle dot (010_8792_1742, 4180\u20139679\u20132908\u20131002)
_HAS_DIGIT7 = re.compile(r"\d[\d\s().+/_\u00b7\u2010-\u2015\u2212\uff0d-]{5,}\d")
_HAS_UPPER_WORD = re.compile(r"[^\W\d_a-z]")
# a superset of what credentials.spans can find: its own hints, so the word lists live there
_TRIGGERS = re.compile(
    "|".join(
        (
            r"[=]|://|%40|-----BEGIN|(?i:token|secret|key|pwd|pass|pw|auth|id|name|nm|mail|phone|tel|"
            r"no|user|login|member|customer|addr|address)[ \t]*:",
            r"(?<!\S)-(?:p\S|-?(?i:pass|pwd|user)|u\s)|(?i:sshpass)",
            credentials.API_HINT.pattern,
            credentials.PASSPORT_HINT.pattern,
            credentials.SECRET_WORDS,
        )
    )
)


_DIGIT = re.compile(r"\d")
_UPPER = re.compile(r"[^\W\d_a-z\uac00-\ud7a3\u3040-\u30ff\u3400-\u9fff]")


# A code identifier: letters first, digit groups only after a letter or a separator that
# follows one (ORD-20260725-0001, plan-commerce-3, call_7f3a): no fail-closed rule can fire
# on it (digit runs glued to an id are kept, and it has no space, Hangul or CJK) except a
# provider key, checked first.
_ID_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_.:/][A-Za-z0-9]+)*")


def close(text: str, *, names: bool = True) -> tuple[str, tuple[tuple[str, int], ...]]:
    """*text* with every span the fail-closed rules find replaced by ``[ENTITY]``; *names*:
    capitalised Latin words too (not for the names of agents and tasks, see
    :func:`tracelake.scrub.keys.names_vocabulary`)."""
    if _plain_token(text):
        return text, ()
    # addresses and CJK runs first: a name is judged by its neighbours, which must not be
    # the words of an address
    text, counts = _close_places(text)
    spans: list[Span] = []
    if _DIGIT.search(text):
        _date_spans(text, spans)
        if _HAS_DIGIT7.search(text):
            _digit_spans(text, spans)
        national_ids.spans(text, spans)
    if _TRIGGERS.search(text):
        credentials.spans(text, spans)
    if email_forms.HINT.search(text):
        email_forms.spans(text, spans)
    if not text.isascii() and hangul.HANGUL_RUN.search(text):
        spans.extend((a, b, "KR_NAME") for a, b in hangul.name_spans(text))
    if names and (" " in text or "\n" in text) and _UPPER.search(text):
        latin.latin_spans(text, spans)
    if not spans:
        return text, counts
    text, more = redact(text, spans)
    return text, _add_counts(counts, more) if counts else more


def _plain_token(text: str) -> bool:
    """A short ASCII word or a code identifier: no fail-closed rule can fire on it."""
    if len(text) < 7 and text.isascii() and " " not in text:
        return True
    return (
        _ID_TOKEN.fullmatch(text) is not None
        and credentials.API_HINT.search(text) is None
        and _GLUED_PHONE.search(text) is None
        and not (":" in text and credentials.sensitive_key(text.partition(":")[0]))
    )


def _add_counts(
    a: tuple[tuple[str, int], ...], b: tuple[tuple[str, int], ...]
) -> tuple[tuple[str, int], ...]:
    total = Counter(dict(a))
    total.update(dict(b))
    return tuple(sorted(total.items()))


def _close_places(text: str) -> tuple[str, tuple[tuple[str, int], ...]]:
    """The first pass: Korean addresses, Han/kana runs (dates in CJK text before them) and
    runs of scripts without letter case."""
    if text.isascii():  # neither Hangul nor Han/kana
        return text, ()
    has_hangul = hangul.HANGUL_RUN.search(text) is not None
    has_cjk = _HAS_CJK.search(text) is not None
    has_uncased = _HAS_UNCASED.search(text) is not None
    if not ((has_hangul and _ADDRESS_HINT.search(text)) or has_cjk or has_uncased):
        return text, ()
    spans: list[Span] = []
    if has_hangul:
        spans.extend((a, b, "KR_ADDRESS") for a, b in hangul.address_spans(text))
    if has_cjk:
        if _DIGIT.search(text):
            _date_spans(text, spans)  # 1985年3月14日 is a date before it is CJK text
        spans.extend((m.start(), m.end(), _cjk_entity(m.group(0))) for m in _CJK.finditer(text))
        # パスワード：x, 旅券番号: J47713891: the value is found before its label becomes a run
        if credentials.SECRET_WORD_HINT.search(text):
            credentials.secret_word_spans(text, spans)
        credentials.passport_spans(text, spans)
    if has_uncased:
        found = _UNCASED.finditer(text)
        spans.extend((m.start(), m.end(), _uncased_entity(m.group(0))) for m in found)
    if not spans:
        return text, ()
    return redact(text, spans)


def redact(text: str, spans: list[Span]) -> tuple[str, tuple[tuple[str, int], ...]]:
    """Replace *spans* (overlaps: the one starting first, then the longest, wins)."""
    spans.sort(key=lambda s: (s[0], -(s[1] - s[0])))
    parts: list[str] = []
    counts: Counter[str] = Counter()
    pos = 0
    for start, end, entity in spans:
        if start < pos:
            if end > pos:  # a partial overlap: extend the span already replaced
                pos = end
            continue
        parts.append(text[pos:start])
        parts.append(f"[{MARKERS.get(entity, entity)}]")
        counts[entity] += 1
        pos = end
    parts.append(text[pos:])
    return "".join(parts), tuple(sorted(counts.items()))


def close_id(text: str) -> tuple[str, tuple[tuple[str, int], ...]]:
    """The pass for values under id keys: provider keys, URL credentials and Hangul names
    only (ids are digit runs and codes by design)."""
    spans: list[Span] = []
    if _TRIGGERS.search(text):
        credentials.spans(text, spans)
    if hangul.HANGUL_RUN.search(text):
        spans.extend((a, b, "KR_NAME") for a, b in hangul.name_spans(text))
    if not spans:
        return text, ()
    return redact(text, spans)
