"""Value detection: one combined prefilter regex, presidio only where it can apply, an LRU cache.

presidio costs tens of microseconds per recognizer per string, and its phone recognizer (nine
regions through ``phonenumbers``) costs about a millisecond. So a string first goes through
:data:`PREFILTER`, one compiled regex whose named groups say which recognizers could possibly
match; a string with no hit is returned untouched without calling presidio at all. Phone
numbers are confirmed by presidio on short windows around each candidate only. Results are
cached per string (bounded LRU): trace metadata, tool names and repeated arguments recur on
every event of a run.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from tracelake.scrub import analyzer, freetext

# Entity sets each prefilter group unlocks. Cheap recognizers only (< ~70 us per string);
# phone numbers are handled separately on windows (see _phone_spans).
# KR_BRN and KR_DRIVER_LICENSE are not run: a bare 10- or 12-digit number is as often an
# invoice or delivery number, and the fail-closed digit rule (freetext) replaces any long
# digit run that no id label precedes.
_DIGIT_ENTITIES = ("CREDIT_CARD", "KR_RRN", "KR_FRN")
_GROUP_ENTITIES: dict[str, tuple[str, ...]] = {
    "email": ("EMAIL_ADDRESS",),
    "jwt": ("JWT",),
    "bearer": ("BEARER_TOKEN",),
    "aws": ("AWS_ACCESS_KEY",),
    "cookie": ("SESSION_COOKIE",),
    "ip": ("IP_ADDRESS",),
    "phone": _DIGIT_ENTITIES,
    "digits": _DIGIT_ENTITIES,
    "passport": ("KR_PASSPORT",),
    "hangul": ("KR_ADDRESS",),
    "secret": ("SECRET",),
    "urlcred": ("URL_CREDENTIAL",),
    "iban": ("IBAN",),
}

# Phone-number candidates: Korean (0xx / +82), international (+cc), North American.
# Look-behind/ahead keep order numbers (ORD-20260725-0001) and dates out.
_PHONE = (
    r"(?<![A-Za-z0-9_.-])(?:(?:\+82[\s.-]?0?|0)(?:1[016789]|2|[3-6][1-5]|70|50\d?)[\s.)-]{0,2}\d{3,4}"
    r"[\s.-]?\d{4}"
    r"|\+\d{1,3}[\s.-]?\(?\d{1,4}\)?(?:[\s.-]?\d{2,4}){2,4}"
    r"|\(\d{3}\)\s?\d{3}[\s.-]\d{4}|\d{3}[\s.-]\d{3}[\s.-]\d{4})(?![A-Za-z0-9_-])"
)
# The (?=[...]) look-aheads list the first characters of the case-insensitive alternatives
# that follow (with U+017F, which IGNORECASE folds to "s"), so most positions fail on one set
# test instead of eight case-folded literals: same matches, about 20% faster.
PREFILTER = re.compile(
    r"(?P<email>[\w.+-]@[\w-])"
    r"|(?P<jwt>eyJ[\w-]{5,}\.)"
    r"|(?P<bearer>(?=[bBtT])(?i:bearer|basic|token)\s+\S{8})"
    r"|(?P<aws>\bA[KSGIRNBC][A-Z]{2}[A-Z0-9]{16}\b)"
    r"|(?P<cookie>(?=[sScCxXrRaA_\u017f])(?i:sess|sid|csrf|xsrf|remember_me|_token|access_token|refresh_token)"
    r"[\w.-]*\s*[=:]\s*\S{6})"
    r"|(?P<ip>\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b|\b[0-9a-fA-F]{1,4}:[0-9a-fA-F]{0,4}:[0-9a-fA-F]*:?[0-9a-fA-F]+\b)"
    r"|(?P<iban>(?<![A-Za-z0-9])[A-Z]{2}\d{2}\s?[A-Z0-9]{4})"
    rf"|(?P<phone>{_PHONE})"
    r"|(?P<digits>\d(?:[\s-]?\d){9,18})"
    r"|(?P<passport>(?<![A-Za-z0-9])[MmSsRrOoDd]\d{3}(?:[A-Za-z]\d{4}|\d{5})(?!\d))"
    r"|(?P<hangul>[가-힣]{2})"
    r"|(?P<secret>[A-Za-z0-9+/_-]{24,})"
    r"|(?P<urlcred>://[^/\s:@]+:[^/\s@]*@)"
)
_PHONE_RE = re.compile(_PHONE)
_SKIP_RE = re.compile(
    # UUIDs, recent ISO dates/timestamps, and enum-like codes are known-safe shapes (an old
    # date may be a date of birth: the fail-closed pass judges it).
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|20[2-3]\d-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|[a-z][a-z0-9]*(?:[._][a-z0-9]+){0,4}"
)
CACHE_SIZE = 65_536
Counts = tuple[tuple[str, int], ...]


def candidate_entities(text: str, *, allow_secret: bool = True) -> tuple[set[str], bool]:
    """Entities the prefilter says may be present, and whether a phone candidate exists."""
    found: set[str] = set()
    phone = False
    if "@" in text:  # the long-token group can consume an e-mail's local part before "@"
        found.add("EMAIL_ADDRESS")
    for match in PREFILTER.finditer(text):
        group = match.lastgroup
        if group is None or (group == "secret" and not allow_secret):
            continue
        if group == "phone":
            phone = True
        found.update(_GROUP_ENTITIES[group])
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


@lru_cache(maxsize=CACHE_SIZE)
def detect(text: str, allow_secret: bool = True) -> tuple[str, Counts]:
    """Return *text* with detected entities replaced by ``[ENTITY]`` and counts per entity.

    ``allow_secret=False`` disables the long-token heuristic (for values under id keys, which
    are long opaque ids by design); every other recognizer still applies.
    """
    if _SKIP_RE.fullmatch(text):
        return text, ()
    entities, phone = candidate_entities(text, allow_secret=allow_secret)
    counts: Counts = ()
    if entities:
        spans = analyzer.analyze(text, sorted(entities))
        if phone:
            spans.extend(_phone_spans(text))
        text, counts = _redact(text, spans)
    if allow_secret:
        text, more = freetext.close(text)
    else:  # ids: names and known credential shapes only
        text, more = freetext.close_id(text)
    return text, _add(counts, more) if more else counts


def _add(a: Counts, b: Counts) -> Counts:
    total: Counter[str] = Counter(dict(a))
    total.update(dict(b))
    return tuple(sorted(total.items()))


def _luhn_ok(digits: str) -> bool:
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
    if 13 <= len(digits) <= 19 and _CARD_PREFIX.match(digits) and _luhn_ok(digits):
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


def cache_info() -> str:
    return str(detect.cache_info())
