"""Digit runs in free text, fail-closed (part of :mod:`freetext`'s pass).

Digit runs (digits joined by spaces, ``-``, ``.``, ``/``, parentheses, a leading ``+``, an
``x123`` extension) of 7 or more digits are replaced, whatever the format: phone numbers of
any country, bank accounts, card numbers grouped or not, Luhn-valid or not, national ids.
Kept: runs of up to 6 digits (amounts, statuses, durations, postcodes), runs inside an id
with a letter prefix (``ORD-20260725-0001``, ``DLV240513871715``), runs right after an id
label (``송장번호 512345678901``, ``order no. 2026072512345``) unless a personal-data word
(계좌, card, phone, ...) is as close, and numbers that start with a recent date
(``20260725123456``).
"""

from __future__ import annotations

import re

from tracelake.scrub import dates, hints
from tracelake.scrub.first_chars import guard
from tracelake.scrub.lowered import compile_lowered, lowered

Span = tuple[int, int, str]

# the separators of _DIGIT_RUN: ASCII ones, underscore, Unicode dashes and minus, full-width
# hyphen, middle dot (010_8792_1742, 4180\u20139679\u20132908\u20131002)
# More dashes and dots a hand types between digit groups: #, \\, bullet, wave dashes, the
# Hangul letter ㅡ, hyphen bullet, small and modifier minus, heavy minus, one-dot leader (a
# sixth fresh-context attack: 010ㅡ7421ㅡ5648, 123#45#6789)
_MORE_GLUE = (
    "#\\\\\u2022\uff5e\u301c\u3161\u2043\ufe58\ufe63\u02d7\u2796\u2024"
    "\u318d\u3001\u3002\u2027\u2219"  # ㆍ (a Korean middle dot), 、 。 ‧ ∙ (a seventh attack)
)
_HAS_DIGIT7 = re.compile(
    rf"\d[\d\s().+/_*|~:,=\u00b7\u2010-\u2015\u2212\uff0d\uff0f{_MORE_GLUE}-]{{5,}}\d"
)
_DIGIT_RUN = re.compile(
    # glued to an id by "-", "_" or "." (ORD-20260725-0001), not by "/": a path segment is a
    # value of its own (/users/33359946034/orders: a phone, 136 of 150 in an attack)
    r"(?<![A-Za-z0-9_])(?<![A-Za-z0-9][-_.])"
    r"(?:\+\s?)?(?:\(\s?\+?\d{1,5}\s?\)\s?(?:[-.]\s?)?)?\d+"  # (0479)-305966
    rf"(?:(?:\s?[-./_\u00b7\u2010-\u2015\u2212\uff0d]\s?|[*|~\uff0f{_MORE_GLUE}]|\s{{1,3}}"
    r"|\s?\(\d{1,4}\)\s?(?:[-.]\s?)?"
    r"|\)\s?)\d+)*"
    r"(?:\s?(?:x|ext\.?)\s?\d{1,6})?"
    r"(?![A-Za-z0-9_])"
)
# Words that name an id by themselves (송장 512345678901, order 2026072512345) and words
# that do only with a number word after them (요청번호 12345678, not 요청: 080-9859-8559).
_NUMBER_WORD = r"(?:번호|코드|no\.?|number|num|id|#|code)"
# English words that name an id: here after a label and in _GLUED_ID_WORD before a glued run
_PRODUCT_ID_WORDS = (
    r"invoice|order|tracking|waybill|shipment|parcel|claim|delivery|goods|product|item|sku|"
    r"barcode|ean|gtin|upc|isbn"
)
_PAYMENT_ID_WORDS = r"refund|return|transaction|txn|receipt"
_ID_LABEL = re.compile(
    rf"(?i:(?:주문|송장|운송장|택배|상품|클레임|반품|{_PRODUCT_ID_WORDS}|대한통운|통운|한진|롯데|"
    r"우체국|로젠|경동|cj|fedex|ups|dhl|usps|ems|tnt)s?"
    rf"\s*{_NUMBER_WORD}?"
    rf"|(?:배송|교환|환불|결제|승인|영수증|거래|요청|접수|쿠폰|{_PAYMENT_ID_WORDS}|"
    rf"reference|ref|(?<!bad )(?<!invalid )request|ticket|case)\s*{_NUMBER_WORD})"
    r"(?:[는은이가]|\s*is)?[\s:#=/]{0,4}$"  # /orders/12345678: an id after its path label
)
# The shapes of a phone or resident number, which no id label makes an id
_PERSONAL_SHAPE = re.compile(
    r"0\d{1,2}[-.\s]\d{3,4}[-.\s]\d{4}|\(?\d{3}\)?[-.\s]\d{3}[-.\s]\d{4}|\d{6}[-\s][1-8]\d{6}"
)
_PII_WORD = re.compile(
    r"(?i:계좌|account|acct|iban|bank|은행|뱅크|카드|card|phone|tel\b|fax|mobile|전화|연락처|휴대폰|핸드폰|"
    r"주민|외국인|passport|여권|ssn|national|면허|license|생년|birth)"
)
# A card, account or phone word right before a number (card 2022103041285604, 카드: …): then a
# number that starts with a date is that, not a dated order id (gift card order 2026…: one)
_CARD_BEFORE = re.compile(
    r"(?<![A-Za-z])(?i:card|credit|debit|visa|mastercard|mc|amex|cc|pan|tarjeta|carte|"
    r"kreditkarte|karte|carta|karta|카드|カード|信用卡|account|acct|iban|bank|konto|compte|cuenta|"
    r"phone|tel|mobile|계좌|전화|휴대폰|주민(?:번호)?|외국인(?:등록번호)?|면허(?:번호)?|생년월일|"
    r"license|licence|birth|dob|passport|여권|ssn|national id)(?![A-Za-z])(?:\s*(?:no\.?|number|num|nr|n°|번호|番号|#))?"
    r"(?:\s*(?:is|:|=|#))?\s*$"
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
_TIMESTAMP = re.compile(r"(?:19|20)\d{2}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
_UUID_AT = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)
_AFTER_DATE = re.compile(r"\d{8}[\s\-./*|~]+(.+)")
_RECENT_YMD = re.compile(r"20[1-3]\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])(?!\d)")


# A phone number glued to its label (HP.010-2345-6789, Tel:+44 20 7946 0958, No.010...):
# the digit-run rule keeps runs glued to a word (ids such as ORD-20260725-0001), so these
# labels are named.
_GLUED_PHONE_LABELS = (
    r"(?<![A-Za-z0-9])(?i:(hp|tel|t\u00e9l|ph|phone|mob|mobile|cell|fax|card|cc|rrn|ssn|bank|acct|acc|"
    r"account|a/c)[-_./:]?|(no|nr|num|contact|whatsapp|wa|kakao|m|t|p)[-./:])"
)
GLUED_PHONE = re.compile(
    _GLUED_PHONE_LABELS + r"((?:\+\s?)?\(?\d[\d\s().\-]{5,}\d)(?![A-Za-z0-9_])"
)
# A Korean mobile number or a card number in groups, glued to anything or with any
# separators (010:1234:5678, 4111~1111~1111~1111, x_01012345678; not inside an id such as
# ORD-0101234567)
_ANY_SEPARATOR = rf"(?:[\s*|~:,./_\uff0f+={_MORE_GLUE}-]{{1,3}})"
_SHAPED = re.compile(
    rf"(?<![\dA-Za-z-])(?:01[016789]{_ANY_SEPARATOR}?\d{{3,4}}{_ANY_SEPARATOR}?\d{{4}}"
    rf"|\d{{4}}(?:{_ANY_SEPARATOR}\d{{4}}){{3}})(?!\d)"
)
# A phone number in a phone's written shape glued to a code (SMS-010-1234-5678,
# IMG_01012345678.jpg, DETAIL-(555)123-4567.log): a run glued to a code is kept as an id's
# digits (ORD-20260725-0001, ORD-0101234567, corr-1443142093-146-859096), but ids are not
# written 0NN-NNNN-NNNN, nor as an 11-digit Korean mobile number; 3-3-4 only after a code
# that names an id (ORD-123-456-7890, see _names_an_id)
_EXTENSION = r"(?:x\d{1,6})?"
_CODE_GLUED_PHONE = re.compile(
    # 0NN-NNNN-NNNN, a French 0N.NN.NN.NN.NN, a spaced UK 0NNNN NNNNNN, after a code and a
    # separator or right after a letter (smsTo010-7421-5648)
    r"(?:(?<=[A-Za-z0-9][-_.])|(?<=[A-Za-z]))"
    rf"(?:0\d{{1,2}}[-.]\d{{3,4}}[-.]\d{{4}}|0[1-9](?:\.\d{{2}}){{4}}|0\d{{4}} \d{{6}}){_EXTENSION}"
    r"(?![\dA-Za-z])"
    r"|(?:(?<=[A-Za-z])|(?<=[A-Za-z][-_.]))010\d{8}(?!\d)"
    # 3-3-4 after a code and a separator (SMS-415-555-0123x12) or glued to letters (VM415-…)
    r"|(?<![A-Za-z0-9])(?:([A-Za-z][A-Za-z0-9]*)[-_.]|([A-Za-z]+))"
    rf"(\(\d{{3}}\)[-.]?\d{{3}}[-.]\d{{4}}{_EXTENSION}|\d{{3}}[-.]\d{{3}}[-.]\d{{4}}{_EXTENSION})"
    r"(?![\dA-Za-z])"
)
# the glue characters a hand types for a dash, read as "-" for the date check (2024ㅡ07ㅡ25)
_TO_DASH = str.maketrans(dict.fromkeys("~\uff5e\u301c\u3161\u2043\ufe58\ufe63\u02d7\u2796", "-"))
_YEAR_RANGE = re.compile(r"(?:19|20)\d{2}\s?[-\u2010-\u2015\u2212]\s?(?:19|20)\d{2}")
_CODE_BEFORE = re.compile(r"([A-Za-z][A-Za-z0-9]*)[-_.]?$")
# all three, in the automaton (GLUED_PHONE's case-insensitive labels cost ~14 us on a long
# text)
_GLUED_HINT = hints.hint(
    "glued or shaped number",
    compile_lowered(f"{GLUED_PHONE.pattern}|{_SHAPED.pattern}|{_CODE_GLUED_PHONE.pattern}"),
    narrowing=True,
)
_LABEL_ENTITY = {"card": "CREDIT_CARD", "cc": "CREDIT_CARD", "rrn": "KR_RRN", "ssn": "KR_RRN"}
_LABEL_ENTITY.update(dict.fromkeys(("bank", "acct", "acc", "account", "a/c"), "BANK_ACCOUNT"))


# A number written as one run of digits with a unit after it or a quantity word (or key)
# right before it: an amount, a size, a duration, a count, a timestamp (환불금액 1250000원,
# 10485760 bytes, ts=1721900000, max_tokens=1000000), unless a personal-data word is near.
_UNIT_AFTER = re.compile(
    r"\s?(?i:원|won|krw|usd|eur|jpy|bytes?|[kmgt]i?b|ms|µs|us|ns|s|secs?|seconds?|tokens?|건|개|회|점|"
    r"포인트|points?|views?|rows?|records?|events?|items?|times|requests?|calls?|users?|chars?|"
    r"characters?)(?![A-Za-z])"
)
# The quantity word ends where a key's next part starts (max_tokens, maxTokens, total.count,
# size:) or the label does: "Maxime", "Summer", "attached", "export" are no quantities, and a
# phone number after them was kept (a fresh-context attack: 198 of 200).
_QUANTITY_BEFORE = re.compile(
    r"(?i:size|bytes|length|total|count|amount|금액|가격|price|cost|duration|elapsed|latency|"
    r"timeout|epoch|timestamp|\bts|tokens?|offset|limit|seed|views|revenue|budget|quota|usage|"
    r"balance|잔액|포인트|sum|avg|mean|p\d\d|max|min|\bat|\bexp|\biat|\bnbf|created|updated)"
    r"(?=[\W\d_]|[A-Z](?![A-Z])|$)[\w.-]{0,24}\s*[:=]?\s*$|[?&;](?:t|_|v|ts)=$"
)


def _is_quantity(text: str, start: int, end: int, before: str) -> bool:
    if _PII_WORD.search(before):
        return False
    return _UNIT_AFTER.match(text, end) is not None or _quantity_label(before, text[start:end])


_KEY_MARK = re.compile(r"[:=_.\-]|[a-z][A-Z]")


# "at" makes a time of a Unix time only (sent at 1721900000); "reach me at 07700900123" is
# a phone number
_AT = re.compile(r"(?i:at)\W*")
_UNIX_TIME = re.compile(r"1\d{9}(?:\d{3})?")


def _quantity_label(before: str, run: str | None = None) -> bool:
    """A quantity word or key right before the number; a capitalised word alone is a name
    (``Max 34984854361``, ``Summer 0933…``), unless a key's mark follows (``Total:``,
    ``Max_tokens``, ``maxTokens``)."""
    match = _QUANTITY_BEFORE.search(before)
    if match is None:
        return False
    word = match.group(0).strip()
    if run is not None and _AT.fullmatch(word) and not _UNIX_TIME.fullmatch(run):
        return False
    titled = word[:1].isupper() and word[1:2].islower()
    return not titled or _KEY_MARK.search(word) is not None


_CURRENCY = frozenset("$€£¥₩")
_AMOUNT = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?|\d+(?:\.\d{1,2})?")


def glued_number(text: str) -> bool:
    """Whether *text* holds a number glued to a personal-data label, of a phone/card shape
    with any separators, or of a phone's shape glued to a code (:data:`GLUED_PHONE`,
    :data:`_SHAPED`, :data:`_CODE_GLUED_PHONE`)."""
    return (
        GLUED_PHONE.search(text) is not None
        or _SHAPED.search(text) is not None
        or _CODE_GLUED_PHONE.search(text) is not None
    )


def _glued_phone_spans(text: str, out: list[Span]) -> None:
    for match in GLUED_PHONE.finditer(text):
        if len(_NON_DIGIT.sub("", match.group(3))) >= 7:
            label = (match.group(1) or match.group(2)).lower()
            entity = _LABEL_ENTITY.get(label, "PHONE_NUMBER")
            out.append((match.start(3), match.end(3), entity))
    for match in _SHAPED.finditer(text):
        entity = "PHONE_NUMBER" if match.group(0).startswith("01") else "CREDIT_CARD"
        out.append((match.start(), match.end(), entity))
    for match in _CODE_GLUED_PHONE.finditer(text):
        code = match.group(1) or match.group(2)
        if code is None:
            start = match.start()
            before = _CODE_BEFORE.search(text, max(0, start - 32), start)
            if before is None or match.group(0).isdigit() or not _names_an_id(before[1]):
                out.append((start, match.end(), "PHONE_NUMBER"))  # not INV-010-1234-5678
        elif not _names_an_id(code):
            out.append((match.start(3), match.end(3), "PHONE_NUMBER"))


def _recent_date_first(run: str, digits: str) -> bool:
    """*run* starts with a date of the last dates.RECENT_YEARS years (or next year): an order or
    delivery number. Older dates are not (a Yugoslav JMBG starts with a birth date), nor
    later ones (a Polish PESEL of 2028-09-02 is a birth date written YYMMDD)."""
    match = (_DATE_PREFIX.fullmatch(digits) if digits == run else None) or _RECENT_YMD.match(run)
    return match is not None and dates.OLD_BEFORE <= int(run[:4]) <= dates.THIS_YEAR + 1


# A plain run of digits glued by "_", "." or "-" to a lower-case or capitalised word (a file
# name, a dotted key, a log token: report_4155550123.pdf, sms.447700900123.sent,
# u_07700900123_x, Report-4155550123.pdf). The digit-run rule keeps runs glued to a word, for
# ids written with a code (ORD-20260725-0001, DLV_…); a word is no such code, unless its last
# part names an id (order_, invoice., call_, run_, customer_id_: a card number is still found
# there) or a quantity (ts_1721900000).
_GLUED_RUN = re.compile(
    r"(?<![A-Za-z0-9])([A-Z]?[a-z]+(?:[-_.][A-Z]?[a-z]+)*)[-_.](\d{7,})(?![A-Za-z0-9]|-\d)"
)
_GLUE = re.compile(r"[-_.]")
_GLUED_ID_WORD = re.compile(
    rf"(?:{_PRODUCT_ID_WORDS}|{_PAYMENT_ID_WORDS}|ref|ticket|case|build|"
    r"commit|rev|version|v|id|seq|no|num|call|run|step|span|trace|job|task|req|event|evt|msg|"
    r"batch|chunk|page|part|shard|release|cart|coupon|bucket|ord|inv|dlv|trk|rma|po|so|tkt)s?$"
)


def _names_an_id(word: str) -> bool:
    """The glued word names an id by its last part (order_, build-, customer_id_), and no
    part names personal data (tel_no_)."""
    spaced = _GLUE.sub(" ", word.lower())
    last = spaced.rsplit(" ", 1)[-1]
    return _GLUED_ID_WORD.fullmatch(last) is not None and _PII_WORD.search(spaced) is None


def glued_run(text: str) -> bool:
    """Whether *text* holds a digit run glued to a lower-case or capitalised word (see
    ``_GLUED_RUN``)."""
    return _GLUED_RUN.search(text) is not None


def _glued_run_spans(text: str, out: list[Span]) -> None:
    for match in _GLUED_RUN.finditer(text):
        word, start = match.group(1), match.start(2)
        digits = match.group(2)
        if _names_an_id(word) and not (13 <= len(digits) <= 19 and _luhn(digits)):
            continue  # an id (call_1234567), unless it is a card number (run_5351…)
        if _recent_date_first(digits, digits) or _is_quantity(text, start, match.end(2), word):
            continue
        before = text[max(0, start - 24) : start]
        out.append((start, match.end(2), _digit_entity(digits, digits, before)))


# A bank account number that starts with letters (a UK, Dutch or Italian BBAN: a bank code,
# then digits) right after an account word; the digit rules keep runs glued to letters
_ACCOUNT_WORDS = (
    r"(?i:account|acct|a/c|iban|bban|계좌|은행|bank|konto|compte|cuenta|conta|conto|rekening|"
    r"pay to|paid to|transfer(?:red)? to|refund(?:ed)? to|wire(?:d)? to|payout to|"
    r"deposit(?:ed)? to|remit(?:ted)? to|credit(?:ed)? to|口座|账户|賬戶)"
)
_LETTERED_ACCOUNT = guard(
    re.compile(
        rf"{_ACCOUNT_WORDS}[^A-Za-z0-9\n]{{0,12}}"
        r"(?:(?i:no|number|num|nr|n°|番号|번호)\.?[^A-Za-z0-9\n]{0,4})?"
        r"([A-Za-z]{1,4}\d[\dA-Za-z]{9,30})(?![A-Za-z0-9])"
    )
)
# (the account words alone: the rule's alternation took ~12 us on each text with 7 digits)
_ACCOUNT_HINT = hints.hint("account word", compile_lowered(_ACCOUNT_WORDS))


def lettered_account_spans(text: str, out: list[Span]) -> None:
    for match in _LETTERED_ACCOUNT.finditer(text):
        if len(_NON_DIGIT.sub("", match.group(1))) >= 8:
            out.append((match.start(1), match.end(1), "BANK_ACCOUNT"))


def spans(text: str, out: list[Span], found: hints.Found | None = None) -> None:
    """Append the spans of the digit runs in *text* that are not known-safe ids (*found*: the
    hints of its lower-cased text, :func:`tracelake.scrub.hints.scan`)."""
    if not _HAS_DIGIT7.search(text):
        return
    if found is None:
        found = hints.scan(lowered(text))
    if _GLUED_HINT in found:
        _glued_phone_spans(text, out)
    for match in _DIGIT_RUN.finditer(text):
        _judge_run(text, match, out)
    _glued_run_spans(text, out)
    if _ACCOUNT_HINT in found:
        lettered_account_spans(text, out)


def _judge_run(text: str, match: re.Match[str], out: list[Span]) -> None:
    """One digit run: kept when it is a known-safe id or quantity, else a span."""
    run = match.group(0).rstrip(" -./")
    if len(run) < 7:
        return
    digits = _NON_DIGIT.sub("", run)
    if len(digits) < 7:
        return
    start = match.start()
    before = text[max(0, start - 24) : start]
    if _recent_date_first(run, digits) and not _CARD_BEFORE.search(before):
        # an id that starts with a recent date (20260725123, 20260725-001), unless a long
        # number follows the date (20240115 110-123-456789: a date, then an account), or a
        # card or account word is before it (card 2022103041285604: a card number)
        rest = _AFTER_DATE.match(run)
        if rest is not None and len(_NON_DIGIT.sub("", rest.group(1))) >= 7:
            start = match.start() + rest.start(1)
            out.append((start, start + len(rest.group(1)), "NUMBER"))
        return
    dashed = run.translate(_TO_DASH)
    if dates.DATE_SHAPE.fullmatch(dashed) or _YEAR_RANGE.fullmatch(dashed):
        return  # a date or timestamp (the date rule decides), or a range of years
    if _kept(text, run, digits, start, before):
        return
    out.append((start, start + len(run), _digit_entity(run, digits, before)))


def _kept(text: str, run: str, digits: str, start: int, before: str) -> bool:
    """An id after its label, a timestamp, a UUID, an amount or another quantity."""
    if (
        before
        and run[0] != "+"  # +44 161 ...: an international phone number, never an id
        and _ID_LABEL.search(before[-16:])
        and not _PII_WORD.search(before)
        and not _PERSONAL_SHAPE.fullmatch(run)
    ):
        return True
    if _TIMESTAMP.match(text, start) or _UUID_AT.match(text, start):
        return True  # 2026-07-21 13:34:28, a UUID whose first group is digits
    if before[-1:] in _CURRENCY and _AMOUNT.fullmatch(run):
        return True  # $96749.04, ₩1,250,000
    return run == digits and _is_quantity(text, start, start + len(run), before)
