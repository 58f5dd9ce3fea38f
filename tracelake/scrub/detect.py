"""Value detection: a cheap prefilter, presidio's recognizers only where they can apply, an LRU cache.

presidio costs tens of microseconds per recognizer per string, and its phone recognizer (nine
regions through ``phonenumbers``) costs about a millisecond. So a string first goes through
the prefilter (:func:`candidate_entities`: one necessary condition per recognizer); a string
with no hit is returned untouched without calling presidio at all. Phone
numbers are confirmed by presidio on short windows around each candidate only. Results are
cached per string (bounded LRU): trace metadata, tool names and repeated arguments recur on
every event of a run.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from tracelake.scrub import analyzer, credentials, digits, freetext
from tracelake.scrub.first_chars import guard
from tracelake.scrub.visible import visible

# Digit entities (KR_BRN and KR_DRIVER_LICENSE are not run: a bare 10- or 12-digit number is
# as often an invoice or delivery number, and the fail-closed digit rule (freetext) replaces
# any long digit run that no id label precedes). Phone numbers are handled separately by
# shape (see _phone_spans).
_DIGIT_ENTITIES = ("CREDIT_CARD", "KR_RRN", "KR_FRN")

# Phone-number candidates: Korean (0xx / +82), international (+cc), North American.
# Look-behind/ahead keep order numbers (ORD-20260725-0001) and dates out.
_PHONE = (
    r"(?<![A-Za-z0-9_.-])(?:(?:\+82[\s.-]?0?|0)(?:1[016789]|2|[3-6][1-5]|70|50\d?)[\s.)-]{0,2}\d{3,4}"
    r"[\s.-]?\d{4}"
    r"|\+\d{1,3}[\s.-]?\(?\d{1,4}\)?(?:[\s.-]?\d{2,4}){2,4}"
    r"|\(\d{3}\)\s?\d{3}[\s.-]\d{4}|\d{3}[\s.-]\d{3}[\s.-]\d{4})(?![A-Za-z0-9_-])"
)
_PHONE_RE = re.compile(_PHONE)

# The prefilter: one necessary condition per recognizer, each a superset of what the
# recognizer can match, tried only where a substring test allows it. Each regex starts with
# a character set (look-behinds moved after the first character), so the stdlib engine skips
# to the positions where it can start instead of trying every position: about 40% fewer
# instructions than one alternation of named groups. Case-insensitive words are looked up
# in the lower-cased text; IGNORECASE also folds U+0131 to "i" and U+017F to "s", which
# ``str.lower`` does not, so those two are mapped first.
_JWT = re.compile(r"eyJ[\w-]{5,}\.")
_BEARER = re.compile(r"(?i:bearer|basic|token)\s+\S{8}")
_AWS = re.compile(r"A(?<!\wA)[KSGIRNBC][A-Z]{2}[A-Z0-9]{16}\b")
_COOKIE = re.compile(
    r"(?i:sess|sid|csrf|xsrf|remember_me|_token|access_token|refresh_token)[\w.-]*\s*[=:]\s*\S{6}"
)
_IPV4 = re.compile(r"\d(?<!\w\d)\d{0,2}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b")
_IPV6 = re.compile(
    r"[0-9a-fA-F](?<!\w[0-9a-fA-F])[0-9a-fA-F]{0,3}:[0-9a-fA-F]{0,4}:[0-9a-fA-F]*:?[0-9a-fA-F]+\b"
)
_IBAN = re.compile(
    r"[A-Z](?<![A-Za-z0-9][A-Z])[A-Z]\d{2}\s?[A-Z0-9]{4}"
    r"|[a-z](?<![A-Za-z0-9][a-z])[a-z]\d{2}[a-z0-9]{11}"  # lower case (checksum checked)
)
_DIGIT_RUN = re.compile(r"\d(?:[\s-]?\d){9,18}")
_PASSPORT = re.compile(
    r"[MmSsRrOoDd](?<![A-Za-z0-9][MmSsRrOoDd])\d{3}(?:[A-Za-z]\d{4}|\d{5})(?!\d)"
)
_ADDRESS = re.compile(r"[로길동리]\s*\d")  # the KR_ADDRESS pattern needs "...로 12"
_SECRET = re.compile(r"[A-Za-z0-9+/_-]{24}")
_URL_CREDENTIAL = re.compile(r"://[^/\s:@]+:[^/\s@]*@")
_HAS_DIGIT = re.compile(r"\d")
_SKIP_RE = re.compile(
    # UUIDs, recent ISO dates/timestamps, and enum-like codes are known-safe shapes (an old
    # date may be a date of birth: the fail-closed pass judges it).
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|20[2-3]\d-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|[a-z][a-z0-9]*(?:[._][a-z0-9]+){0,4}"
)
_SEVEN_DIGITS = re.compile(r"(?:\d[._]?){7}")
CACHE_SIZE = 65_536
Counts = tuple[tuple[str, int], ...]


# (a literal the text must contain, the regex, the entity)
_LITERAL_GATED = (
    ("eyJ", _JWT, "JWT"),
    ("://", _URL_CREDENTIAL, "URL_CREDENTIAL"),
    ("A", _AWS, "AWS_ACCESS_KEY"),
)
# (words one of which the lower-cased text must contain, the regex, the entity); the words
# are looked up by one regex search (C) instead of a generator of substring tests
_WORD_GATED = (
    (re.compile("bearer|basic|token"), _BEARER, "BEARER_TOKEN"),
    (re.compile("ss|sid|srf|token|remember"), _COOKIE, "SESSION_COOKIE"),
)


def _word_candidates(text: str, found: set[str]) -> None:
    """Credentials announced by a word or a fixed prefix."""
    if "@" in text:
        found.add("EMAIL_ADDRESS")
    for literal, pattern, entity in _LITERAL_GATED:
        if literal in text and pattern.search(text):
            found.add(entity)
    low = text.lower()
    if not text.isascii():
        low = low.replace("\u0131", "i").replace("\u017f", "s")
    for words, pattern, entity in _WORD_GATED:
        if words.search(low) is not None and pattern.search(text):
            found.add(entity)


def _digit_candidates(text: str, found: set[str]) -> bool:
    """Entities that need a digit; True if a phone-number candidate exists."""
    phone = _PHONE_RE.search(text) is not None
    if phone or _DIGIT_RUN.search(text):
        found.update(_DIGIT_ENTITIES)
    if "." in text and _IPV4.search(text):
        found.add("IP_ADDRESS")
    if _IBAN.search(text):
        found.add("IBAN")
    if _PASSPORT.search(text):
        found.add("KR_PASSPORT")
    if _ADDRESS.search(text):
        found.add("KR_ADDRESS")
    return phone


def candidate_entities(text: str, *, allow_secret: bool = True) -> tuple[set[str], bool]:
    """Entities the prefilter says may be present, and whether a phone candidate exists."""
    found: set[str] = set()
    _word_candidates(text, found)
    phone = _HAS_DIGIT.search(text) is not None and _digit_candidates(text, found)
    if ":" in text and _IPV6.search(text):
        found.add("IP_ADDRESS")
    if allow_secret and _SECRET.search(text):
        found.add("SECRET")
    return found, phone


# A Korean mobile number in its usual written forms is certain without phonenumbers' nine-region
# parse (~0.6 ms); every other candidate (but the NANP shapes below) is confirmed by presidio's
# PhoneRecognizer.
_KR_MOBILE_TEXT = re.compile(r"(?:\+82[\s.-]?0?|0)1[016789][\s.-]?\d{3,4}[\s.-]?\d{4}")
# A North American number written as (415) 555-0100 or 415-555-0100 is a phone by its shape,
# even where phonenumbers calls it invalid (555 and other unassigned area codes, which
# examples and test data use): order numbers and dates never take these shapes.
_NANP_TEXT = re.compile(r"(?:\+?1[\s.-]?)?(?:\(\d{3}\)\s?|\d{3}-)\d{3}-\d{4}")


def _phone_spans(text: str) -> list[tuple[int, int, str]]:
    """Phone numbers by their shape only: a Korean mobile or a North American number. Any
    other candidate is a digit run the fail-closed pass replaces (7+ digits, any country),
    so phonenumbers' region-by-region parse (~0.6 ms a candidate) is not needed."""
    spans: list[tuple[int, int, str]] = []
    for match in _PHONE_RE.finditer(text):
        if _KR_MOBILE_TEXT.fullmatch(match.group(0)) or _NANP_TEXT.fullmatch(match.group(0)):
            spans.append((match.start(), match.end(), "PHONE_NUMBER"))
    return spans


def _redact(text: str, spans: list[tuple[int, int, str]]) -> tuple[str, Counts]:
    spans = credentials.outside_uuids(text, spans)
    if not spans:
        return text, ()
    # the longest span wins; on a tie a specific entity beats the generic long-token rule
    spans.sort(key=lambda s: (s[0], -(s[1] - s[0]), s[2] == "SECRET"))
    out: list[str] = []
    counts: Counter[str] = Counter()
    pos = 0
    for start, end, entity in spans:
        if start < pos:  # overlaps a span already replaced (the longer one wins)
            continue
        out.append(text[pos:start])
        out.append(f"[{freetext.MARKERS.get(entity, entity)}]")
        counts[entity] += 1
        pos = end
    out.append(text[pos:])
    return "".join(out), tuple(sorted(counts.items()))


# Strings (up to CLEAN_MAX characters) that detect() returned unchanged with no entity, per
# allow_secret: the walk's hot paths test membership here (a set lookup) before calling
# detect() through its LRU wrapper. detect() is a pure function of its arguments, so a member
# stays clean after the LRU forgets it; each set is emptied when it reaches CACHE_SIZE.
CLEAN_MAX = 256
CLEAN_TEXTS: set[str] = set()  # detect(text, True) == (text, ())
CLEAN_IDS: set[str] = set()  # detect(text, False) == (text, ())


@lru_cache(maxsize=CACHE_SIZE)
def detect(text: str, allow_secret: bool = True) -> tuple[str, Counts]:
    """Return *text* with detected entities replaced by ``[ENTITY]`` and counts per entity.

    ``allow_secret=False`` disables the long-token heuristic (for values under id keys, which
    are long opaque ids by design); every other recognizer still applies.
    """
    clean, counts = found = _detect(visible(text), allow_secret)
    if not counts and len(text) <= CLEAN_MAX and clean == text:
        known = CLEAN_TEXTS if allow_secret else CLEAN_IDS
        if len(known) >= CACHE_SIZE:
            known.clear()
        known.add(text)
    return found


# Values a recognizer takes for personal data or a secret that their label says are not: a
# barcode or an ISBN of a resident number's shape, a commit hash, a digest or a trace id.
_PRODUCT_NUMBER = re.compile(r"(?i:barcode|ean(?:-?13)?|gtin|upc|isbn(?:-?13)?|jan code)\W{0,3}$")
_DIGEST = guard(
    re.compile(
        r"(?i:commit|sha(?:1|256|512)?|hash|digest|checksum|etag|revision|\brev|trace(?:_?id|parent)?|"
        r"span(?:_?id)?|build|md5|object)\W{0,3}$|traceparent\W{0,3}[0-9a-f]{2}-$"
    )
)
_HEX = re.compile(r"[0-9a-f]{32,64}|[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}")


def _safe_in_context(text: str, span: tuple[int, int, str]) -> bool:
    start, end, entity = span
    before = text[max(0, start - 16) : start]
    if entity in ("KR_RRN", "KR_FRN", "CREDIT_CARD"):
        return _PRODUCT_NUMBER.search(before) is not None
    if entity == "SECRET":
        return _DIGEST.search(before) is not None and _HEX.fullmatch(text[start:end]) is not None
    return False


def _detect(text: str, allow_secret: bool) -> tuple[str, Counts]:
    if (
        _SKIP_RE.fullmatch(text)
        and not credentials.provider_key(text)  # ghp_<lower case>
        and not (  # phone_010..., report_4155550123.pdf
            _SEVEN_DIGITS.search(text) and (digits.glued_number(text) or digits.glued_run(text))
        )
    ):
        return text, ()
    entities, phone = candidate_entities(text, allow_secret=allow_secret)
    counts: Counts = ()
    if entities:
        spans = analyzer.analyze(text, sorted(entities))
        if spans:
            spans = [span for span in spans if not _safe_in_context(text, span)]
        if phone:
            spans.extend(_phone_spans(text))
        text, counts = _redact(text, spans)
    if allow_secret:
        text, more = freetext.close(text)
    else:  # ids: names and known credential shapes only
        text, more = freetext.close_id(text)
    return text, _add(counts, more) if more else counts


@lru_cache(maxsize=CACHE_SIZE)
def close_label(text: str, names: bool) -> tuple[str, Counts]:
    """The fail-closed pass over a label (a type, a status, a tool's name) after the id pass
    of :func:`detect`: digit runs, old dates, CJK runs, credentials, Hangul names, and with
    *names* capitalised Latin words (``tool: "David Stark"``, ``stage: "+441184960813"``)."""
    return freetext.close(text, names=names)


def _add(a: Counts, b: Counts) -> Counts:
    total: Counter[str] = Counter(dict(a))
    total.update(dict(b))
    return tuple(sorted(total.items()))


def luhn_ok(digits: str) -> bool:
    """Whether *digits* pass the Luhn checksum (card numbers)."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


_CARD_PREFIX = re.compile(r"4|5[1-5]|2[2-7]|3[47]|6(?:011|5)|35|9")
# As an integer a Korean mobile number has lost its leading zero: 010-xxxx-xxxx -> 10xxxxxxxx.
# Only 010 (every mobile number since 2004): legacy 017/018 would also catch Unix timestamps.
_KR_MOBILE = re.compile(r"010\d{8}")
_RRN = re.compile(r"\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])[1-8]\d{6}")


def detect_int(value: int, strict: bool = True) -> str | None:
    """Entity type of a phone, card or resident number stored as an integer, else ``None``.

    Argument coercion turns ``"01012345678"`` into ``1012345678``: the leading zero is lost,
    so both the digits and the digits with a ``0`` prefix are checked. *strict* (values under
    keys that do not name an id) fails closed: any other number of 8 to 15 digits is a
    ``NUMBER`` (a phone of any country, an account) unless it starts with a date
    (20260725..., YYYYMMDD itself included). A Unix timestamp is not told apart from a
    phone number without its leading zero (1632960318 is both): under a key that says time
    (``created_at``, ``ts``, ``expires``) it is kept, see :data:`keys.QUANTITY`.
    """
    digits = str(abs(value))
    if len(digits) < 8 or len(digits) > 19:
        return None
    for candidate in (digits, "0" + digits):
        if _KR_MOBILE.fullmatch(candidate):
            return "PHONE_NUMBER"
        if len(candidate) == 13 and _RRN.fullmatch(candidate):
            return "KR_RRN"
    if 13 <= len(digits) <= 19 and _CARD_PREFIX.match(digits) and luhn_ok(digits):
        return "CREDIT_CARD"
    if re.fullmatch(r"82(?:1[016789]\d{7,8}|[2-6]\d{7,9})", digits):
        return "PHONE_NUMBER"  # +82 numbers stored as int
    if not strict:
        return None
    if _DATE_INT.match(digits):
        return None
    return "NUMBER"


# YYYYMMDD (2000-2039), alone or starting a longer id.
_DATE_INT = re.compile(r"20[0-3]\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])(?:\d{2,})?$")


def recent_date_digits(digits: str) -> bool:
    """Whether *digits* are a date of 2000-2039 (YYYYMMDD), alone or starting a longer id."""
    return _DATE_INT.match(digits) is not None


def cache_info() -> str:
    return str(detect.cache_info())
