"""National identity numbers that mix letters and digits (part of :mod:`freetext`'s pass).

Ids made of digits alone (Korean RRN, US SSN, Japanese My Number, Chinese RIC, Brazilian
CPF, French INSEE, Aadhaar) are digit runs of 7 or more, which the fail-closed digit rule
replaces. These carry letters, so that rule cannot see them; each is found by its official
shape, and where the shape is close to an order or product code, by its check character too:

* UK National Insurance number (``AB 12 34 56 C``), shape and prefix rules;
* Italian codice fiscale (``RSSMRA85T10A562S``), shape (with the letters that replace digits
  in homocodes);
* Taiwan national id and resident certificate (``A123456789``), checksum;
* Chinese resident id ending in ``X`` (17 digits + ``X``), shape;
* Spanish DNI (``12345678Z``) and NIE (``X1234567L``), check letter;
* a Polish identity card (``ABA300000``) after its label (``dowód``): its shape alone is an
  invoice number's (``INV986863``), and its check digit passes one code in ten;
* Singapore NRIC/FIN (``S1234567D``), shape;
* Hong Kong identity card with its check digit in brackets (``A123456(7)``), shape;
* Indian PAN (``ABCPE1234F``), shape;
* Finnish personal identity code (``290766-538R``), French NIR of Corsica (``2A``), shape.
"""

from __future__ import annotations

import re

from tracelake.scrub import hints
from tracelake.scrub.lowered import compile_lowered, lowered

Span = tuple[int, int, str]

_EDGE_L = r"(?<![A-Za-z0-9])"
_EDGE_R = r"(?![A-Za-z0-9])"
# The NINO's shape with any letters (test data uses the never-issued ZZ prefix; codes of
# this exact shape are rare enough to give up)
_NINO = re.compile(_EDGE_L + r"[A-Z]{2}\s?(?:\d{2}\s?){3}\s?[A-Z]" + _EDGE_R)
# Finnish henkilötunnus (290766-538R) and French NIR of Corsica (2 08 02 2A 004 428 31)
_FINLAND = re.compile(_EDGE_L + r"\d{6}[-+A-FU-Y]\d{3}[0-9A-Y]" + _EDGE_R)
_FRANCE_2AB = re.compile(
    _EDGE_L + r"[12]\s?\d{2}\s?\d{2}\s?2[AB]\s?\d{3}\s?\d{3}(?:\s?\d{2})?" + _EDGE_R
)
_CODICE = re.compile(
    _EDGE_L + r"(?i:[A-Z]{6}[\dLMNPQRSTUV]{2}[ABCDEHLMPRST][\dLMNPQRSTUV]{2}[A-Z]"
    r"[\dLMNPQRSTUV]{3}[A-Z])" + _EDGE_R
)
_TAIWAN = re.compile(_EDGE_L + r"([A-Z])([12]\d{8})" + _EDGE_R)
# A Korean vehicle plate (12가3456, 123가 4567, 서울12가3456): a person's car, by its shape
_KR_PLATE = re.compile(r"(?<![\d가-힣])(?:[가-힣]{2})?\d{2,3}\s?[가-힣]\s?\d{4}(?!\d)")
_CHINA_X = re.compile(r"(?<![A-Za-z0-9])\d{17}[Xx]" + _EDGE_R)
_SPAIN = re.compile(_EDGE_L + r"(?:([XYZ])-?)?(\d{7,8})-?([A-Z])" + _EDGE_R)  # X-6624039-Q
_SINGAPORE = re.compile(_EDGE_L + r"[STFGM]\d{7}[A-Z]" + _EDGE_R)
_HONG_KONG = re.compile(_EDGE_L + r"[A-Z]{1,2}\d{6}\s?\([0-9A]\)")
_PAN = re.compile(_EDGE_L + r"[A-Z]{5}\d{4}[A-Z]" + _EDGE_R)
_HINT = re.compile(r"\d\d")

# Taiwan: the letter's two-digit code (A=10 ... Z=33, in this order).
_TW_LETTERS = "ABCDEFGHJKLMNPQRSTUVXYWZIO"
_ES_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"


def _taiwan_ok(letter: str, digits: str) -> bool:
    code = _TW_LETTERS.index(letter) + 10
    weights = (8, 7, 6, 5, 4, 3, 2, 1)
    total = code // 10 + (code % 10) * 9
    total += sum(int(d) * w for d, w in zip(digits[:8], weights, strict=True)) + int(digits[8])
    return total % 10 == 0


def _spain_ok(prefix: str, digits: str, letter: str) -> bool:
    if prefix:
        if len(digits) != 7:
            return False
        digits = str("XYZ".index(prefix)) + digits
    elif len(digits) != 8:
        return False
    return _ES_LETTERS[int(digits) % 23] == letter


# Any id of 5+ characters with a digit (or in capitals) after a national-id word (an Azerbaijani FIN
# T2RAVE3, a Venezuelan cédula V-34313739, a Swedish personnummer): no shape is needed.
_LABELLED = re.compile(
    r"(?i:ssn|social security(?: number| no\.?)?|national (?:id|identity|insurance)(?: number| no\.?)?|"
    r"(?:personal |tax |citizen )?id(?:entity|entification)? (?:number|no\.?|code)|identity card|"
    r"id card|c[eé]dula|dni|nif|nie|dow[oó]du?(?: osobist(?:y|ego))?|cpf|cnpj|rut|curp|rfc|pesel|bsn|nino|nric|hkid|aadhaar|"
    r"personnummer|henkil[oö]tunnus|fin code|tin|steuer-?id|codice fiscale|"
    r"driver'?s?[ _-]?licen[cs]e(?: number| no\.?)?|\bdl\b|licen[cs]e (?:number|no\.?)|"
    r"(?:license |number |licence )?plate(?: number| no\.?)?|registration(?: number| no\.?)?|"
    r"운전면허(?:번호)?|면허번호|차량번호|번호판|"
    r"주민등록번호|주민번호|외국인등록번호|身份证(?:号码?)?|身分證(?:字號)?|マイナンバー|個人番号)"
    r"(?:\s*(?:no\.?|number|#|번호))?\s*[:=#]?\s*"
    r"((?=[^\s\d]*\d|[A-Z0-9]{5,12}(?![A-Za-z0-9]))[A-Za-z0-9][A-Za-z0-9./-]{3,30}[A-Za-z0-9])"
)
_THING_ID = re.compile(r"[A-Za-z]{2,}[-_]")  # ORD-20260725-0001 after "id number"
# Both hints run on the lower-cased text (a case-insensitive alternation is several times
# slower in the standard library's engine): supersets of what the patterns need. The label
# hint is the labelled pattern itself, lower-cased (a hand list of its words lacked "hkid",
# so an HKID after its label was stored: found by tests/scrub/test_hints.py).
_LABEL_HINT = hints.hint("national-id label", compile_lowered(_LABELLED.pattern))


# the shapes that need no checksum, in one pass (longest first where two could start at one
# place)
_SHAPES = re.compile(
    "|".join(
        p.pattern
        for p in (_CHINA_X, _CODICE, _FRANCE_2AB, _FINLAND, _PAN, _NINO, _HONG_KONG, _SINGAPORE)
    )
)
_SHAPE_HINT = hints.hint("national-id shape", re.compile(r"[a-z][\s(]?\d|\d[a-z]"))
# An NIE with its letters apart (X-6624039-Q), which the hint above does not see
_DASHED_NIE = re.compile(r"(?i:[xyz]-\d{7}-[a-z])")


# the shapes themselves, lower-cased (a superset on the lower-cased text: each shape is made
# of ASCII letters, digits, spaces and punctuation, which lower-case one to one); in the
# automaton only, where it spares _shape_spans on most texts with a letter next to a digit
_SHAPES_HINT = hints.hint(
    "national-id shapes",
    compile_lowered("|".join(p.pattern for p in (_SHAPES, _TAIWAN, _SPAIN))),
    narrowing=True,
)


def spans(text: str, out: list[Span], found: hints.Found | None = None) -> None:
    """Append the spans of the national ids above found in *text* (and of Korean vehicle
    plates and ids after a driver's licence or plate word); *found*: the hints of its
    lower-cased text (:func:`tracelake.scrub.hints.scan`)."""
    if found is None:
        found = hints.scan(lowered(text))
    if not text.isascii():
        out.extend((m.start(), m.end(), "VEHICLE_PLATE") for m in _KR_PLATE.finditer(text))
    if _LABEL_HINT in found:
        _labelled_spans(text, out)
    if _HINT.search(text) is not None and _SHAPE_HINT in found and _SHAPES_HINT in found:
        _shape_spans(text, out)
    elif "-" in text and _DASHED_NIE.search(text) is not None:
        _checked_spans(text, out)


def distinct_shape(text: str) -> bool:
    """Whether *text* holds a shape that is a national id without a checksum to tell (a
    codice fiscale, a HETU, a NINO, ...; not the Taiwanese and Spanish ones, whose shapes
    product codes share: ``G170982173``)."""
    return _SHAPES.search(text) is not None


def shaped(text: str) -> bool:
    """Whether *text* holds one of the shapes above (a code-like token that is one:
    ``PSSDNI93T63F987K``, ``lookup:K121074313``)."""
    return any(p.search(text) is not None for p in (_SHAPES, _TAIWAN, _SPAIN))


def checked_shape(text: str) -> bool:
    """Whether *text*, read in capitals and without the dots and spaces that group its
    digits, holds a national id whose shape product codes share but whose check
    character holds (a Spanish DNI or NIE, a Taiwanese id): an id field holding one is not
    kept (``plan_id: "43464097P"``, ``"43.464.097-p"``, ``"X-6624039-Q"``)."""
    if _SEVEN_DIGITS.search(text) is None:  # every one of them has 7 digits or more
        return False
    found: list[Span] = []
    upper = text.upper()  # then the case-sensitive patterns: a third of the instructions
    _checked_spans(upper, found, _TAIWAN, _SPAIN)  # req-51706749N
    if not found:
        _checked_spans(_ID_GROUPING.sub("", upper), found, _TAIWAN, _SPAIN)  # 43.464.097-P
    return bool(found)


_ID_GROUPING = re.compile(r"(?<=\d)[. ](?=\d)")  # digit groups; dashes the patterns allow
_SEVEN_DIGITS = re.compile(r"\d(?:[. ]?\d){6}")


def _labelled_spans(text: str, out: list[Span]) -> None:
    for match in _LABELLED.finditer(text):
        label = text[match.start() : match.start(1)].lower()
        if "id" not in label or not _THING_ID.match(match.group(1)):
            out.append((match.start(1), match.end(1), "NATIONAL_ID"))


def _shape_spans(text: str, out: list[Span]) -> None:
    out.extend((m.start(), m.end(), "NATIONAL_ID") for m in _SHAPES.finditer(text))
    _checked_spans(text, out)


def _checked_spans(
    text: str,
    out: list[Span],
    taiwan: re.Pattern[str] | None = None,
    spain: re.Pattern[str] | None = None,
) -> None:
    # in any case: its check character tells it (x6624039q is an NIE written in lower case)
    for match in (taiwan or _TAIWAN_ANY_CASE).finditer(text):
        if _taiwan_ok(match.group(1).upper(), match.group(2)):
            out.append((match.start(), match.end(), "NATIONAL_ID"))
    for match in (spain or _SPAIN_ANY_CASE).finditer(text):
        if _spain_ok((match.group(1) or "").upper(), match.group(2), match.group(3).upper()):
            out.append((match.start(), match.end(), "NATIONAL_ID"))


_TAIWAN_ANY_CASE = re.compile(_TAIWAN.pattern, re.IGNORECASE)
_SPAIN_ANY_CASE = re.compile(_SPAIN.pattern, re.IGNORECASE)
