"""The presidio engine, fully offline, built once per process and lazily.

presidio's default engine loads a spaCy model (a download) and its email recognizer fetches the
public-suffix list through tldextract. Neither may happen here: we use ``NoOpNlpEngine`` (no
model, no tokens) and set ``TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS=""`` before presidio is imported,
so tldextract falls back to the snapshot bundled with it.

Without a NER model presidio finds no names or addresses, so this module adds pattern
recognizers for Hangul names and Korean street addresses, plus credentials (JWT, bearer
tokens, AWS access keys, long hex/base64 secrets, session cookies).
"""

from __future__ import annotations

import importlib
import os
import re
import threading
from typing import Any

# Must be set before presidio (and so tldextract) is imported anywhere in the process.
os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")

LANGUAGE = "en"
SCORE_THRESHOLD = 0.35

# Common Korean surnames (covers >95% of the population). A 3-syllable Hangul token that
# starts with one of these and stands alone (or is followed by an honorific) is a name.
_SURNAMES = (
    "김이박최정강조윤장임한오서신권황안송전홍유고문양손배백허남심노하곽성차주우구민진나지엄"
    "채원천방공현함변염여추도소석선설마길연위표명"
)
_HONORIFIC = r"(?:님|씨|고객|께|에게|의|은|는|이|가|을|를|과|와|도|님께)?"
HANGUL_NAME_RE = rf"(?<![가-힣])[{_SURNAMES}][가-힣]{{2}}(?={_HONORIFIC}(?![가-힣]))"
# Common 3-syllable words that start with a surname syllable; never treated as names.
NAME_STOPWORDS = frozenset(
    [
        "이메일",
        "신분증",
        "조회가",
        "정보를",
        "주문번",
        "주소지",
        "전화번",
        "연락처",
        "고객님",
        "고객센",
        "결제가",
        "결제를",
        "배송지",
        "배송비",
        "확인된",
        "확인을",
        "처리가",
        "처리를",
        "정상적",
        "성공적",
        "실패한",
        "실패로",
        "이용자",
        "이번에",
        "이전에",
        "이후에",
        "오류가",
        "오류를",
        "요청이",
        "요청을",
        "한도를",
        "한도가",
        "문의가",
        "문의를",
        "사고가",
        "사본을",
        "명세서",
        "주민등",
        "안내를",
        "안내가",
        "정지를",
        "정지가",
        "최근의",
        "최소한",
        "최대한",
        "전체를",
        "전체가",
        "장바구",
        "상품을",
        "상품이",
        "상품명",
        "구매를",
        "구매가",
        "주문을",
        "주문이",
        "주문한",
        "배송을",
        "배송이",
        "배송중",
        "반품을",
        "반품이",
        "교환을",
        "환불을",
        "환불이",
        "취소를",
        "취소가",
        "적립금",
        "포인트",
        "쿠폰을",
        "회원님",
        "회원을",
        "회원이",
        "인증을",
        "인증이",
        "인증서",
        "실명확",
        "본인확",
        "정보가",
        "신청을",
        "신청이",
        "심사로",
        "심사를",
        "진행을",
        "진행중",
        "완료된",
        "재안내",
        "재시도",
        "한국어",
        "영업일",
        "유효기",
        "도착을",
        "예정일",
        "발송일",
        "주문일",
        "결제일",
        "신청일",
        "만료일",
        "도착이",
        "기본값",
        "시스템",
        "시간이",
        "시간을",
        "서비스",
        "서버가",
        "서버를",
        "응답이",
        "응답을",
        "연결이",
        "연결을",
        "기록을",
        "기록이",
        "내용을",
        "내용이",
        "방문을",
        "부분을",
        "부분이",
        "사용자",
        "사용을",
        "우편번",
        "상세주",
        "지번주",
        "도로명",
        "전송을",
        "이미지",
        "강아지",
        "이상한",
        "이름을",
        "이름이",
    ]
)
# Without a NER model a 3-syllable Hangul token starting with a surname syllable is as often
# an ordinary word (이어폰, 정수기, 고구마) as a name. It is taken for a name when the context
# says so: an honorific or address term follows (최수아님, 홍길동 고객), a person-data word or
# a label's colon precedes it closely (수령인 김민수, 이름: 박서준, "실명확인: 신시우, ..."), or
# it stands alone among non-Hangul text (the whole value, "no shipment for 최수아 010-...").
# Inside Korean prose ("김민수가 주문했습니다") it is a name only if both syllables after the
# surname are common given-name syllables: 민수 is, 어폰, 수기 and 문은 are not.
# Common syllables of given names, first and second position. Particles that end ordinary
# "noun + particle" tokens (가, 도, 를, 의, 로, 이) are not second syllables here; 은 is (다은, 하은).
_GIVEN_FIRST = frozenset(
    "민준서연도윤하은지호수아예현우채원시다주진영정성훈희경혜석태재동유승혁빈나린소미선인상"
    "철환규찬형욱범종건가보라명병학효길"
)
_GIVEN_SECOND = frozenset(
    "민준서연윤은호수아우원현진영희경혜석훈빈린율결온솔별름숙순철환규찬형욱범식용택종건성혁"
    "재주정하나미선인상한람슬래지리라동"
)
_NAME_AFTER = re.compile(r"\s?(?:님|씨|고객|께|에게|회원|귀하|선생|고객님)")
_NAME_BEFORE = re.compile(
    r"(?:고객|수령인|수령자|수신인|받는\s?분|보내는\s?분|주문자|예금주|명의자?|회원|담당자|"
    r"이름|성명|성함|대표자?|신청인|가입자|본인|님|name|Name|NAME)\W{0,3}$|:\s*$"
)
_HANGUL_CHAR = re.compile("[\uac00-\ud7a3]")


def name_in_context(text: str, start: int, end: int) -> bool:
    """Whether the KR_NAME candidate ``text[start:end]`` reads as a name (see above)."""
    if _NAME_AFTER.match(text, end):
        return True
    if _NAME_BEFORE.search(text[max(0, start - 12) : start]):
        return True
    before = text[:start].rstrip().rsplit(None, 1)
    after = text[end:].lstrip().split(None, 1)
    if not (
        (before and _HANGUL_CHAR.search(before[-1])) or (after and _HANGUL_CHAR.search(after[0]))
    ):
        return True
    return text[start + 1] in _GIVEN_FIRST and text[start + 2] in _GIVEN_SECOND


# Final syllables of place names (연수구, 강남구, 수원시, ...), which are not given names.
_PLACE_ENDINGS = frozenset("구군시읍면로길")
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
LONG_HEX_RE = r"(?<![A-Za-z0-9])[A-Fa-f0-9]{32,}(?![A-Za-z0-9])"
LONG_B64_RE = r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/_-])"

_ENGINE: tuple[Any, dict[str, list[Any]], dict[str, list[_Compiled]]] | None = None
_LOCK = threading.Lock()


def _mixed_enough(text: str) -> bool:
    """A long token looks like a secret only if it mixes letters and digits (not a word)."""
    has_digit = any(c.isdigit() for c in text)
    has_upper = any(c.isupper() for c in text)
    has_lower = any(c.islower() for c in text)
    return (has_digit and (has_upper or has_lower)) or (has_upper and has_lower and len(text) >= 32)


def _build() -> Any:
    from presidio_analyzer import AnalyzerEngine, Pattern, PatternRecognizer
    from presidio_analyzer.nlp_engine import NoOpNlpEngine
    from presidio_analyzer.predefined_recognizers import (
        CreditCardRecognizer,
        EmailRecognizer,
        IpRecognizer,
        KrBrnRecognizer,
        KrDriverLicenseRecognizer,
        KrFrnRecognizer,
        KrPassportRecognizer,
        KrRrnRecognizer,
        PhoneRecognizer,
    )
    from presidio_analyzer.recognizer_registry import RecognizerRegistry

    class _NameRecognizer(PatternRecognizer):
        def validate_result(self, pattern_text: str) -> bool | None:
            return pattern_text not in NAME_STOPWORDS and pattern_text[-1] not in _PLACE_ENDINGS

    class _SecretRecognizer(PatternRecognizer):
        def validate_result(self, pattern_text: str) -> bool | None:
            return _mixed_enough(pattern_text)

    def pattern(entity: str, regex: str, score: float = 0.9) -> Any:
        return PatternRecognizer(
            supported_entity=entity,
            patterns=[Pattern(entity.lower(), regex, score)],
            supported_language=LANGUAGE,
        )

    registry = RecognizerRegistry(supported_languages=[LANGUAGE])
    for recognizer in (
        EmailRecognizer(supported_language=LANGUAGE),
        IpRecognizer(supported_language=LANGUAGE),
        CreditCardRecognizer(supported_language=LANGUAGE),
        PhoneRecognizer(
            supported_regions=("KR", *PhoneRecognizer.DEFAULT_SUPPORTED_REGIONS),
            leniency=2,
            supported_language=LANGUAGE,
        ),
        KrRrnRecognizer(supported_language=LANGUAGE),
        KrFrnRecognizer(supported_language=LANGUAGE),
        KrBrnRecognizer(supported_language=LANGUAGE),
        KrDriverLicenseRecognizer(supported_language=LANGUAGE),
        KrPassportRecognizer(supported_language=LANGUAGE),
        pattern("JWT", JWT_RE, 0.95),
        pattern("BEARER_TOKEN", BEARER_RE, 0.9),
        pattern("AWS_ACCESS_KEY", AWS_KEY_RE, 0.95),
        pattern("SESSION_COOKIE", SESSION_COOKIE_RE, 0.9),
        pattern("KR_ADDRESS", KR_ADDRESS_RE, 0.8),
        _NameRecognizer(
            supported_entity="KR_NAME",
            patterns=[Pattern("kr_name", HANGUL_NAME_RE, 0.6)],
            supported_language=LANGUAGE,
        ),
        _SecretRecognizer(
            supported_entity="SECRET",
            patterns=[Pattern("hex", LONG_HEX_RE, 0.7), Pattern("b64", LONG_B64_RE, 0.6)],
            supported_language=LANGUAGE,
        ),
    ):
        registry.add_recognizer(recognizer)
    nlp = NoOpNlpEngine(models=[{"lang_code": LANGUAGE, "model_name": "noop"}])
    return AnalyzerEngine(
        registry=registry,
        nlp_engine=nlp,
        supported_languages=[LANGUAGE],
        default_score_threshold=SCORE_THRESHOLD,
    )


def get_engine() -> Any:
    """The process-wide ``AnalyzerEngine`` (built on first use, thread-safe)."""
    return _state()[0]


# Necessary conditions, checked with the stdlib ``re`` before a pattern runs: each is a
# superset of what the pattern can match (the digit recognizers need these digit shapes, an
# IPv6 form has a colon, an IPv4 one a dot, a street address "...로 12"). A text failing the
# gate cannot match the pattern, so skipping it changes no result (tests/scrub/test_engine.py).
_DIGIT_GATES = {
    "CREDIT_CARD": r"\d{4}[- ]?\d{3,4}[- ]?\d{3,4}[- ]?\d{3,5}",
    "KR_RRN": r"\d{6}-?\d{7}",
    "KR_FRN": r"\d{6}-?\d{7}",
    "KR_BRN": r"\d{3}-\d{2}-\d{5}|\d{10}",
    "KR_DRIVER_LICENSE": r"\d{2}[- ]?\d{2}[- ]?\d{6}[- ]?\d{2}",
    "KR_ADDRESS": r"[로길동리]\s*\d",
}
ENTITY_GATES: dict[str, re.Pattern[str]] = {e: re.compile(g) for e, g in _DIGIT_GATES.items()}
_COLON, _DOT = re.compile(":"), re.compile(r"\.")
_PATTERN_GATES: dict[tuple[str, str], re.Pattern[str]] = {
    ("IP_ADDRESS", "IPv4"): _DOT,
    ("IP_ADDRESS", "IPv4_mapped"): _COLON,
    ("IP_ADDRESS", "IPv4_embedded"): _COLON,
    ("IP_ADDRESS", "IPv6"): _COLON,
    ("IP_ADDRESS", "IPv6_unspecified"): _COLON,
}


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


def _state() -> tuple[Any, dict[str, list[Any]], dict[str, list[_Compiled]]]:
    global _ENGINE
    if _ENGINE is None:
        with _LOCK:
            if _ENGINE is None:
                from presidio_analyzer import PatternRecognizer

                analyzer = _build()
                by_entity: dict[str, list[Any]] = {}
                compiled: dict[str, list[_Compiled]] = {}
                for recognizer in analyzer.registry.recognizers:
                    for entity in recognizer.supported_entities:
                        by_entity.setdefault(entity, []).append(recognizer)
                    patterns: list[Any] = getattr(recognizer, "patterns", None) or []
                    if isinstance(recognizer, PatternRecognizer) and patterns:
                        compiled.setdefault(recognizer.supported_entities[0], []).extend(
                            _Compiled(recognizer, pattern) for pattern in patterns
                        )
                _ENGINE = (analyzer, by_entity, compiled)
                _warm_up(by_entity, compiled)
    return _ENGINE


# One text per lazily loaded resource: phonenumbers loads each region's metadata on first
# use and tldextract its public-suffix snapshot on the first e-mail validated. Loading them
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


HANGUL_ENTITIES = frozenset({"KR_NAME", "KR_ADDRESS"})
_HANGUL_BLANK = {c: " " for c in range(0xAC00, 0xD7A4)}
_HAS_HANGUL = re.compile("[\uac00-\ud7a3]")


# presidio raises a pattern's score by 0.35 when a context word of its recognizer is near
# (LemmaContextAwareEnhancer, which needs NLP artifacts that NoOpNlpEngine does not make).
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
        for recognizer in by_entity.get(entity, ()):
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
        blanked = text.translate(_HANGUL_BLANK) if _HAS_HANGUL.search(text) else text
        found += _run(blanked, other, by_entity, compiled, text)
    if hangul:
        found += [
            span
            for span in _run(text, hangul, by_entity, compiled, text)
            if span[2] != "KR_NAME" or name_in_context(text, span[0], span[1])
        ]
    return found
