"""The fail-closed pass over free text: keep what is known to be safe, replace the rest.

Runs after the recognizers (:mod:`tracelake.scrub.detect`), on their output. Recall must
not hinge on recognising every name, address or number format of every country, so:

* **Digit runs** of 7 or more digits, whatever the format, but known-safe ids:
  :mod:`tracelake.scrub.digits`.
* **Dates** more than five years old, or next to a birth word (short forms too):
  :mod:`tracelake.scrub.dates`.
* **National ids with letters** (NINO, codice fiscale, DNI, ...) and any id after a
  national-id word: :mod:`tracelake.scrub.national_ids`.
* **E-mail addresses** spelt out or loosely written: :mod:`tracelake.scrub.email_forms`.
* **Machine text**: names in home directories, MAC addresses, IPs in host names, passport
  MRZ lines, webhook secrets: :mod:`tracelake.scrub.machine`.
* **IBANs** (shape, any country, spaced or not) and **provider API keys** (GitHub, Slack,
  OpenAI, Stripe, Google, AWS) are replaced; so are URL credentials (``user:pass@``) and
  query parameters whose name the key rules call a credential or person data.
* **Hangul names**: :mod:`tracelake.scrub.hangul`; **Korean addresses**:
  :mod:`tracelake.scrub.kr_address`.
* **Chinese and Japanese script** (Han, kana) is replaced run by run: names and addresses in
  those scripts cannot be told from other words without a model.
* **Capitalised words** (in text with spaces): names and addresses in Latin script,
  :mod:`tracelake.scrub.latin`.
"""

from __future__ import annotations

import re
from collections import Counter

from tracelake.scrub import (
    credentials,
    dates,
    digits,
    email_forms,
    hangul,
    hints,
    kr_address,
    latin,
    machine,
    national_ids,
    pairs,
    registrations,
    street_lines,
    written,
)
from tracelake.scrub.first_chars import guard
from tracelake.scrub.lowered import compile_lowered, lowered

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
_ADDRESS_HINT = re.compile(
    r"[시도군구동로길]\s|\d\s?[호층]|[로길동]\s?\d|배송지|주소|수령지|\[ADDRESS\]"
)
_HAS_UPPER_WORD = re.compile(r"[^\W\d_a-z]")
# a superset of what credentials.spans can find: its rules' own patterns and hints, so the
# word lists live there. The "key: value" pairs (any key the key rules hide: "Contact: jdoe42"
# was kept when only a list of key words triggered the pass), command-line passwords and
# login pairs are in it by their patterns (tests/scrub/test_hints.py draws texts from each).
_TRIGGERS_PATTERN = "|".join(
    (
        r"[=]|://|%40|-----BEGIN|(?i:token|secret|key|pwd|pass|pw|auth|id|name|nm|mail|phone|tel|"
        r"no|user|login|member|customer|addr|address)[ \t]*:",
        r"(?<!\S)-(?:p\S|-?(?i:pass|pwd|user)|u\s)|(?i:sshpass|login|redis-cli|htpasswd|"
        r"secret|token|creds|credentials|log in|sign in|cookie|session)",
        credentials.KEY_VALUE.pattern,
        pairs.KEY_IS.pattern,
        written.CLI_PASSWORD.pattern,
        credentials.LOGIN_PAIR.pattern,
        credentials.API_HINT.pattern,
        credentials.PASSPORT_HINT.pattern,
        credentials.SECRET_WORDS,
        written.OTP_HINT.pattern,
        written.PATH_SECRET.pattern,
        r"</[^\s\d/<>]|/>",  # XML, element names in any script (credentials.XML_ELEMENT: a backreference, no hint)
        r"[A-Za-z][\"'][ \t]*[=:]",  # a quoted key ('name': '…'; _CREDENTIAL_PAIR: idem)
    )
)


_TRIGGERS = hints.hint("credential trigger", compile_lowered(_TRIGGERS_PATTERN))
_EMAIL_HINT = hints.hint("e-mail form", compile_lowered(email_forms.HINT.pattern))
_MACHINE_HINT = hints.hint("machine text", compile_lowered(machine.HINT.pattern))
_LOWER_NAME_HINT = hints.hint("lower-case name label", compile_lowered(latin.LOWER_PATTERN))


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
    found = hints.scan(lowered(text))
    if _DIGIT.search(text):
        dates.spans(text, spans, found)
        digits.spans(text, spans, found)
    _hinted_spans(text, found, spans)
    if not text.isascii() and hangul.HANGUL_RUN.search(text):
        spans.extend((a, b, "KR_NAME") for a, b in hangul.name_spans(text))
    if names and (" " in text or "\n" in text):
        if _UPPER.search(text):
            latin.latin_spans(text, spans)
        if _LOWER_NAME_HINT in found:
            latin.lower_name_spans(text, found.low, spans)  # lowered once, for the scan
    if not spans:
        return text, counts
    if _DIGIT.search(text):
        street_lines.attach_postcodes(text, spans)
    text, more = redact(text, spans)
    return text, _add_counts(counts, more) if counts else more


def _hinted_spans(text: str, found: hints.Found, spans: list[Span]) -> None:
    """National ids, credentials, e-mail forms and machine text, each behind its hint
    (*found*: the hints of the lower-cased text, :mod:`tracelake.scrub.hints`)."""
    national_ids.spans(text, spans, found)
    registrations.spans(text, spans, found)
    if _DIGIT.search(text):
        street_lines.spans(text, spans, found)
    if _TRIGGERS in found:
        credentials.spans(text, spans, found)
    if _EMAIL_HINT in found:
        email_forms.spans(text, spans)
    if _MACHINE_HINT in found:
        machine.spans(text, spans)


def _plain_token(text: str) -> bool:
    """A short ASCII word or a code identifier: no fail-closed rule can fire on it. Not one:
    a token with a national id's shape (a codice fiscale as a whole value), a 7+ digit
    path or ``key:`` segment (``users/33359946034/orders``, ``msisdn:NNN``), or one glued to
    a lower-case word (``report_4155550123.pdf``)."""
    if len(text) < 7 and text.isascii() and " " not in text:
        return True
    return (
        _ID_TOKEN.fullmatch(text) is not None
        and not credentials.api_hinted(text)
        and not digits.glued_number(text)
        and not machine.in_token(text)
        and not (":" in text and credentials.sensitive_key(text.partition(":")[0]))
        and _DIGIT_SEGMENT.search(text) is None
        and not digits.glued_run(text)
        and not national_ids.shaped(text)
        and not registrations.shaped(text)
    )


_DIGIT_SEGMENT = re.compile(r"[/:]\d{7,}(?![A-Za-z0-9])")


def _add_counts(
    a: tuple[tuple[str, int], ...], b: tuple[tuple[str, int], ...]
) -> tuple[tuple[str, int], ...]:
    total = Counter(dict(a))
    total.update(dict(b))
    return tuple(sorted(total.items()))


_SECRET_WORD_SEARCH = guard(credentials.SECRET_WORD_HINT)
_OTP_SEARCH = guard(written.OTP_HINT)


def _cjk_secret_spans(text: str, spans: list[Span]) -> None:
    """Secrets announced in CJK text (パスワード：x, 認証コード：123456), found before the
    label becomes a run."""
    if _SECRET_WORD_SEARCH.search(text):
        credentials.secret_word_spans(text, spans)
    if _OTP_SEARCH.search(text):
        written.otp_spans(text, spans)


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
    if "</" in text:  # <パスワード>x</パスワード>: judged before its name becomes a run
        written.xml_element_spans(text, spans)
    if has_hangul:
        spans.extend((a, b, "KR_ADDRESS") for a, b in kr_address.address_spans(text))
    if has_cjk:
        _cjk_spans(text, spans)
    if has_uncased:
        found = _UNCASED.finditer(text)
        spans.extend((m.start(), m.end(), _uncased_entity(m.group(0))) for m in found)
    if not spans:
        return text, ()
    return redact(text, spans)


def _cjk_spans(text: str, spans: list[Span]) -> None:
    """Han/kana runs, and what must be found before they replace their words."""
    digit = _DIGIT.search(text) is not None
    if digit:
        dates.spans(text, spans)  # 1985年3月14日 is a date before it is CJK text
    spans.extend((m.start(), m.end(), _cjk_entity(m.group(0))) for m in _CJK.finditer(text))
    # パスワード：x, 旅券番号: J47713891: the value is found before its label becomes a run
    _cjk_secret_spans(text, spans)
    if digit:  # 口座番号: NWBK60161331926819 (the account word becomes a run)
        digits.lettered_account_spans(text, spans)
    credentials.passport_spans(text, spans)


def redact(text: str, spans: list[Span]) -> tuple[str, tuple[tuple[str, int], ...]]:
    """Replace *spans* (overlaps: the one starting first, then the longest, wins)."""
    spans = credentials.outside_uuids(text, spans)
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
    found = hints.scan(lowered(text))
    if _TRIGGERS in found:
        credentials.spans(text, spans, found)
    if hangul.HANGUL_RUN.search(text):
        spans.extend((a, b, "KR_NAME") for a, b in hangul.name_spans(text))
    if not spans:
        return text, ()
    return redact(text, spans)
