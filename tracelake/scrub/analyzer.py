"""presidio's recognizers, fully offline, built once per process and lazily.

presidio's default engine loads a spaCy model (a download) and its email recognizer fetches the
public-suffix list through tldextract. Neither may happen here: no ``AnalyzerEngine`` and no NLP
engine are built (the recognizers are run by :func:`analyze`, see :func:`_run`), and
``TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS=""`` is set before presidio is imported, so tldextract
falls back to the snapshot bundled with it. :mod:`tracelake.scrub.presidio_import` imports
presidio, without spaCy in the processes of the ``tracelake`` command.

Without a NER model presidio finds no names or addresses, so this module adds pattern
recognizers for Hangul names and Korean street addresses, plus credentials (JWT, bearer
tokens, AWS access keys, long hex/base64 secrets, session cookies).
"""

from __future__ import annotations

import importlib
import ipaddress
import os
import re
import threading
from typing import Any

# Must be set before presidio (and so tldextract) is imported anywhere in the process.
os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")

from tracelake.forksafe import renew_locks_after_fork
from tracelake.scrub import hangul, presidio_import
from tracelake.scrub.credentials import mixed_enough

LANGUAGE = "en"
SCORE_THRESHOLD = 0.35

_PROVINCE = (
    r"(?:서울|부산|대구|인천|광주|대전|울산|세종|경기|강원|충북|충남|전북|전남|경북|경남|제주)"
    r"(?:특별시|광역시|특별자치시|특별자치도|도)?"
)
KR_ADDRESS_RE = (
    rf"(?:{_PROVINCE}\s+)?[가-힣]{{1,10}}(?:시|군|구)\s+(?:[가-힣]{{1,10}}(?:구|읍|면)\s+)?"
    r"[가-힣0-9]{1,20}(?:로|길|동|리)\s*\d{1,5}(?:-\d{1,5})?"
    r"(?:(?:\s*,\s*|\s+)(?:[가-힣0-9A-Za-z]{1,12}\s*)?\d{1,5}(?:동|호|층)(?:\s*\d{1,5}호)?)?"
)

# Credentials.
JWT_RE = r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}"
BEARER_RE = r"(?i)\b(?:bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}"
AWS_KEY_RE = r"(?-i)\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[A-Z0-9]{16}\b"
SESSION_COOKIE_RE = (
    r"(?i)\b(?:jsessionid|sessionid|session_id|session|sid|phpsessid|connect\.sid|"
    r"csrftoken|xsrf-token|_csrf|remember_me|auth_token|access_token|refresh_token)"
    r"\s*[=:]\s*[^\s;,\"'&]{6,}"
)
# Any IBAN by its shape (country, check digits, 11-30 characters, spaced in fours or not):
# checksums are not verified, so a mistyped IBAN is replaced too.
IBAN_RE = r"(?-i)(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]){11,30}(?![A-Za-z0-9])"
# An IBAN written in lower case (nl91abna0417164300): only with a valid checksum (ISO 13616's
# mod 97), since lower-case tokens of this shape are common in ids and hashes.
# Unspaced: a spaced one would take the next word in (``nl91abna0417164300 thanks``).
IBAN_LOWER_RE = r"(?-i)(?<![A-Za-z0-9])[a-z]{2}\d{2}[a-z0-9]{11,30}(?![A-Za-z0-9])"
URL_CREDENTIAL_RE = r"(?<=://)[^/\s:@]+:[^/\s@]*@"
LONG_HEX_RE = r"(?<![A-Za-z0-9])[A-Fa-f0-9]{32,}(?![A-Za-z0-9])"
LONG_B64_RE = r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/_-])"

_ENGINE: tuple[list[Any], dict[str, list[Any]], dict[str, list[_Compiled]]] | None = None
_LOCK = threading.Lock()
renew_locks_after_fork(globals(), "_LOCK")


# Hex groups joined by colons (``::`` allowed), ending in a group: a trailing colon of the
# sentence is left out; ``_Ipv6Recognizer`` keeps only what ``ipaddress`` accepts as IPv6.
IPV6_RE = r"(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{1,4}(?![0-9A-Fa-f])"


# An e-mail address by its own shape, beside presidio's recognizer: presidio's local part may
# hold "/", "?" and "=", and it checks the match with tldextract, which reads
# "users/x@y.org" as a URL whose host is "users" and rejects it, so an address in a URL path
# or query (GET /api/v1/users/x@y.org/profile, ?q=x@y.org on an internal host) was kept.
EMAIL_RE = r"(?<![\w.%+-])[\w.%+-]*\w@\w[\w-]*(?:\.[\w-]+)*\.[^\W\d_]{2,24}(?![\w-])"


def _build() -> list[Any]:
    """The recognizers, presidio's and ours. No ``AnalyzerEngine`` (nor its NLP engine) is
    built: :func:`_run` runs the recognizers itself.

    Only recognizers for entities :func:`tracelake.scrub.detect.candidate_entities` can ask
    for: phone numbers are found by their shape (``detect._phone_spans``) and by the
    fail-closed digit rule, and KR_BRN and KR_DRIVER_LICENSE are not run (a bare 10- or
    12-digit number is as often an invoice number; the digit rule replaces it). Building
    presidio's PhoneRecognizer anyway cost its warm-up: every region's ``phonenumbers``
    metadata, ~0.03-0.08 s of each ``ingest``'s start on one core
    (tests/scrub/test_analyzer.py keeps the two lists equal)."""
    presidio_import.import_presidio()
    from presidio_analyzer import Pattern, PatternRecognizer
    from presidio_analyzer.predefined_recognizers import (
        CreditCardRecognizer,
        EmailRecognizer,
        IpRecognizer,
        KrFrnRecognizer,
        KrPassportRecognizer,
        KrRrnRecognizer,
    )

    class _SecretRecognizer(PatternRecognizer):
        def validate_result(self, pattern_text: str) -> bool | None:
            return mixed_enough(pattern_text)

    class _IbanChecksumRecognizer(PatternRecognizer):
        def validate_result(self, pattern_text: str) -> bool | None:
            return iban_checksum_ok(pattern_text)

    class _Ipv6Recognizer(PatternRecognizer):
        """IPv6 that presidio's pattern misses: followed by a colon (``calling <ip>: timeout``)
        or with short groups; every match is confirmed by the standard library's parser."""

        def validate_result(self, pattern_text: str) -> bool | None:
            try:
                ipaddress.IPv6Address(pattern_text)
            except ValueError:
                return False
            return True

    def pattern(entity: str, regex: str, score: float = 0.9) -> Any:
        return PatternRecognizer(
            supported_entity=entity,
            patterns=[Pattern(entity.lower(), regex, score)],
            supported_language=LANGUAGE,
        )

    return [
        EmailRecognizer(supported_language=LANGUAGE),
        IpRecognizer(supported_language=LANGUAGE),
        CreditCardRecognizer(supported_language=LANGUAGE),
        KrRrnRecognizer(supported_language=LANGUAGE),
        KrFrnRecognizer(supported_language=LANGUAGE),
        KrPassportRecognizer(supported_language=LANGUAGE),
        pattern("EMAIL_ADDRESS", EMAIL_RE, 0.9),
        pattern("JWT", JWT_RE, 0.95),
        pattern("BEARER_TOKEN", BEARER_RE, 0.9),
        pattern("AWS_ACCESS_KEY", AWS_KEY_RE, 0.95),
        pattern("SESSION_COOKIE", SESSION_COOKIE_RE, 0.9),
        pattern("KR_ADDRESS", KR_ADDRESS_RE, 0.8),
        pattern("URL_CREDENTIAL", URL_CREDENTIAL_RE, 0.95),
        pattern("IBAN", IBAN_RE, 0.9),
        _IbanChecksumRecognizer(
            supported_entity="IBAN",
            patterns=[Pattern("iban lower case", IBAN_LOWER_RE, 0.9)],
            supported_language=LANGUAGE,
        ),
        _Ipv6Recognizer(
            supported_entity="IP_ADDRESS",
            patterns=[Pattern("ipv6", IPV6_RE, 0.9)],
            supported_language=LANGUAGE,
        ),
        _SecretRecognizer(
            supported_entity="SECRET",
            patterns=[Pattern("hex", LONG_HEX_RE, 0.7), Pattern("b64", LONG_B64_RE, 0.6)],
            supported_language=LANGUAGE,
        ),
    ]


def iban_checksum_ok(text: str) -> bool:
    """ISO 13616's check: the country and check digits moved to the end, letters as 10-35,
    the number mod 97 is 1."""
    compact = text.replace(" ", "").upper()
    moved = compact[4:] + compact[:4]
    digits = "".join(str(int(c, 36)) for c in moved)
    return len(compact) >= 15 and int(digits) % 97 == 1


def get_recognizers() -> list[Any]:
    """The process-wide recognizers (built on first use, thread-safe)."""
    return _state()[0]


# Necessary conditions, checked with the stdlib ``re`` before a pattern runs: each is a
# superset of what the pattern can match (the digit recognizers need these digit shapes, an
# IPv6 form has a colon, an IPv4 one a dot, a street address "...로 12"). A text failing the
# gate cannot match the pattern, so skipping it changes no result (tests/scrub/test_analyzer.py).
_DIGIT_GATES = {
    "CREDIT_CARD": r"\d{4}[- ]?\d{3,4}[- ]?\d{3,4}[- ]?\d{3,5}",
    "KR_RRN": r"\d{6}-?\d{7}",
    "KR_FRN": r"\d{6}-?\d{7}",
    "KR_ADDRESS": r"[로길동리]\s*\d",
}
ENTITY_GATES: dict[str, re.Pattern[str]] = {e: re.compile(g) for e, g in _DIGIT_GATES.items()}
# Every IPv6 form has two colons at most four hex digits apart ("::", "db8:0:"): a "key:
# value" text with an IPv4 address does not run the five IPv6 patterns.
_TWO_COLONS, _DOT = re.compile(r":[0-9A-Fa-f]{0,4}:"), re.compile(r"\.")
_PATTERN_GATES: dict[tuple[str, str], re.Pattern[str]] = {
    ("IP_ADDRESS", "IPv4"): _DOT,
    ("IP_ADDRESS", "IPv4_mapped"): _TWO_COLONS,
    ("IP_ADDRESS", "IPv4_embedded"): _TWO_COLONS,
    ("IP_ADDRESS", "IPv6"): _TWO_COLONS,
    ("IP_ADDRESS", "IPv6_unspecified"): _TWO_COLONS,
    ("IP_ADDRESS", "ipv6"): _TWO_COLONS,  # ours (IPV6_RE)
}


# Entities whose patterns are ours (not presidio's) and run faster with the stdlib ``re``
# (measured with callgrind on the bench corpus: KR_ADDRESS 3.2x, SECRET 1.5-2x, URL_CREDENTIAL
# 2.2x fewer instructions); the cookie, bearer and JWT patterns run faster with ``regex``
# (literal-prefix search). Same flags as presidio's (DOTALL | MULTILINE | IGNORECASE).
_STDLIB_RE = frozenset({"KR_ADDRESS", "SECRET", "URL_CREDENTIAL"})
_STDLIB_FLAGS = re.DOTALL | re.MULTILINE | re.IGNORECASE


class _Compiled:
    """One pattern of a presidio ``PatternRecognizer``, compiled once, run without presidio's
    per-call overhead (a timestamp, an explanation object and a result object per match, the
    de-duplication pass): same regex module, same flags, same score, same ``validate_result``
    and ``invalidate_result`` as ``PatternRecognizer.analyze``."""

    __slots__ = ("entity", "gate", "invalidate", "recognizer", "regex", "score", "validate")

    def __init__(self, recognizer: Any, pattern: Any) -> None:
        from presidio_analyzer import PatternRecognizer

        regex: Any = importlib.import_module("regex")  # presidio's regex engine (untyped)

        self.recognizer = recognizer
        self.entity: str = recognizer.supported_entities[0]
        if self.entity in _STDLIB_RE:  # our own patterns, which the stdlib runs 2-3x faster
            self.regex = re.compile(pattern.regex, _STDLIB_FLAGS)
        else:
            self.regex = regex.compile(pattern.regex, flags=recognizer.global_regex_flags)
        self.score: float = pattern.score
        self.gate = _PATTERN_GATES.get((self.entity, pattern.name))
        cls = type(recognizer)
        # Skip the base class's no-op hooks (they return None).
        self.validate = (
            recognizer.validate_result
            if cls.validate_result is not PatternRecognizer.validate_result
            else None
        )
        self.invalidate = (
            recognizer.invalidate_result
            if cls.invalidate_result is not PatternRecognizer.invalidate_result
            else None
        )

    def spans(self, text: str, out: list[tuple[int, int, str]], boost: float = 0.0) -> None:
        if self.gate is not None and self.gate.search(text) is None:
            return
        for match in self.regex.finditer(text):
            start, end = match.span()
            if start == end:
                continue
            score = self.score
            if self.validate is not None:
                valid = self.validate(text[start:end])
                if valid is not None:
                    score = 1.0 if valid else 0.0
            if self.invalidate is not None and self.invalidate(text[start:end]):
                score = 0.0
            if score > 0.0 and score + boost >= SCORE_THRESHOLD:
                out.append((start, end, self.entity))


def _state() -> tuple[list[Any], dict[str, list[Any]], dict[str, list[_Compiled]]]:
    global _ENGINE
    if _ENGINE is None:
        with _LOCK:
            if _ENGINE is None:
                recognizers = _build()  # imports presidio: nothing from it before this
                from presidio_analyzer import PatternRecognizer

                by_entity: dict[str, list[Any]] = {}
                compiled: dict[str, list[_Compiled]] = {}
                for recognizer in recognizers:
                    for entity in recognizer.supported_entities:
                        by_entity.setdefault(entity, []).append(recognizer)
                    patterns: list[Any] = getattr(recognizer, "patterns", None) or []
                    if isinstance(recognizer, PatternRecognizer) and patterns:
                        compiled.setdefault(recognizer.supported_entities[0], []).extend(
                            _Compiled(recognizer, pattern) for pattern in patterns
                        )
                _ENGINE = (recognizers, by_entity, compiled)
                _warm_up(by_entity, compiled)
                hangul.load_lexicon()  # Kiwi's word list, read on the first Hangul name else
    return _ENGINE


# One text per lazily loaded resource: tldextract loads its public-suffix snapshot on the
# first e-mail validated, and each recognizer's patterns run once. Loading them
# here, with the engine, keeps that one-time cost (and the full garbage collection its many
# new long-lived objects trigger) out of the first events scrubbed.
_WARM_UP = (
    "mail kim.minjun@example.co.kr, tel +82 2-312-3456, +1 415 555 0100, +44 20 7946 0958, "
    "+49 30 901820, +91 98765 43210, +61 2 9374 4000, +33 1 42 68 53 00, +81 3-1234-5678, "
    "+86 10 1234 5678, +972 2 123 4567, +55 11 91234 5678, 203.0.113.7, 2001:db8::1, "
    "4111 1111 1111 1111, 841217-1518843, 123-45-67890, 11-17-174133-01"
)


def _warm_up(by_entity: dict[str, list[Any]], compiled: dict[str, list[_Compiled]]) -> None:
    entities = sorted({*by_entity, *compiled} - HANGUL_ENTITIES)
    _run(_WARM_UP, entities, by_entity, compiled, _WARM_UP)


HANGUL_ENTITIES = frozenset({"KR_ADDRESS"})
# One space per syllable; re.sub does it with a third of str.translate's instructions (a dict
# lookup per character of the text).
_HANGUL = re.compile("[\uac00-\ud7a3]")


# presidio raises a pattern's score by 0.35 when a context word of its recognizer is near
# (LemmaContextAwareEnhancer, which needs NLP artifacts: no NLP engine makes any here).
# KR_PASSPORT scores 0.05/0.1 without context, below the threshold: it is the one recognizer
# that finds nothing without it. Its context words are looked up in the whole text.
CONTEXT_BOOST = 0.35
_CONTEXT: dict[str, re.Pattern[str]] = {"KR_PASSPORT": re.compile(r"(?i)passport|여권")}


def _run(
    text: str,
    entities: list[str],
    by_entity: dict[str, list[Any]],
    compiled: dict[str, list[_Compiled]],
    original: str,
) -> list[tuple[int, int, str]]:
    """Spans for *entities*: pattern recognizers through their precompiled patterns, any
    other recognizer (the phone numbers) through its own ``analyze``.

    ``AnalyzerEngine.analyze`` adds context enhancement (useless without NLP artifacts),
    de-duplication and deep copies: about half the cost. The caller resolves overlaps.
    """
    spans: list[tuple[int, int, str]] = []
    for entity in entities:
        patterns = compiled.get(entity)
        if patterns is not None:
            gate = ENTITY_GATES.get(entity)
            if gate is not None and gate.search(text) is None:
                continue
            context = _CONTEXT.get(entity)
            boost = CONTEXT_BOOST if context is not None and context.search(original) else 0.0
            for pattern in patterns:
                pattern.spans(text, spans, boost)
            continue
        for recognizer in by_entity[entity]:  # none for it: a KeyError, the scrub fails closed
            for r in recognizer.analyze(text, [entity], None):
                if r.score >= SCORE_THRESHOLD and r.entity_type == entity:
                    spans.append((r.start, r.end, r.entity_type))
    return spans


def analyze(text: str, entities: list[str]) -> list[tuple[int, int, str]]:
    """Spans ``(start, end, entity)`` that the recognizers find for *entities* in *text*.

    Korean particles attach to whatever precedes them ("010-1234-5678로", "a@b.com로"), and
    Hangul counts as a word character, so ``\\b``-anchored recognizers miss such values. All
    recognizers except the Hangul ones therefore see a copy of the text with every Hangul
    syllable replaced by a space: same length, so the offsets stay valid.
    """
    _, by_entity, compiled = _state()
    hangul = [e for e in entities if e in HANGUL_ENTITIES]
    other = [e for e in entities if e not in HANGUL_ENTITIES]
    found: list[tuple[int, int, str]] = []
    if other:
        blanked = text if text.isascii() else _HANGUL.sub(" ", text)  # no Hangul in ASCII
        found += _run(blanked, other, by_entity, compiled, text)
    if hangul:
        found += _run(text, hangul, by_entity, compiled, text)
    return [span for span in found if not _glued(text, span)]


_DIGIT_ENTITIES = frozenset({"CREDIT_CARD", "KR_RRN", "KR_FRN", "PHONE_NUMBER"})
_GLUED = re.compile(r"[A-Za-z][-_]?$")


def _glued(text: str, span: tuple[int, int, str]) -> bool:
    """A digit entity glued to letters is part of an id (DLV240513871715, ORD-2026...)."""
    start, end, entity = span
    return (
        entity in _DIGIT_ENTITIES and _GLUED.search(text[max(0, start - 2) : start]) is not None
    ) or (
        entity in _DIGIT_ENTITIES
        and end < len(text)
        and text[end].isascii()
        and text[end].isalpha()
    )
