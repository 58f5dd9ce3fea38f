"""Values under id keys: kept when they look like an id and hold nothing personal.

Ids are opaque by design: long digit runs, codes, random tokens. So the free-text rules that
fail closed (digit runs, capitalised words, the long-token rule) would replace most of them,
and the learner needs them to join and group. But a caller can put anything under
``request_id`` or ``run_id``: a name, a social security number, an e-mail, a secret key. An id
is therefore kept only when it has an id's shape **and** no recognizer finds anything in it:

* ASCII, without whitespace (a name, an address or a sentence is not an id; nor is Han,
  kana or Hangul text);
* not seven digits or more in phone punctuation alone (``123-45-6789``, ``(0161)4960072``,
  ``513.639.7459x66884``) unless they start with a recent date (``2026-07-25``,
  ``20260725-0001``); under a key that does not name a thing's number (``request_id``, not
  ``orderNo``), not eight digits or more alone either (a card or a phone number);
* no credential shape (:func:`tracelake.scrub.credentials.credential_shaped`: provider keys,
  mixed-case tokens, AWS secret keys);
* nothing detected by the id pass of :func:`tracelake.scrub.detect.detect` (e-mails, phone
  numbers, cards, resident numbers, IBANs, IPs, Hangul names), neither as written nor with its
  separators read as spaces (``req-010-1234-5678`` hides a phone number).

UUIDs, ULIDs and hex digests are kept at once, and so is a UUID behind a word prefix
(``req-<uuid>``, ``run_<uuid>``) when the prefix is a common word or an id abbreviation
(an allow-list: ``req``, ``run``, ``trace``, ...; never ``token`` or ``password``) and its
digits cannot hold a number (:func:`uuid_id`; new ids of this shape took 5.7% of an ingest
worker's time).
Anything else is replaced by the caller with a
keyed pseudonym: stable, so runs still group and joins still match.
"""

from __future__ import annotations

import re

from tracelake.scrub import national_ids, registrations
from tracelake.scrub.credentials import credential_shaped
from tracelake.scrub.detect import detect, luhn_ok, recent_date_digits
from tracelake.scrub.keys import KeyClass, classify

MAX_ID = 256
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_OPAQUE = re.compile(
    _UUID
    # hex digests and ULIDs, with a letter (a run of digits alone may be a phone number)
    + r"|(?=[0-9]*[a-f])[0-9a-f]{8,64}|(?=[0-9]*[A-F])[0-9A-F]{8,64}"
    r"|(?=[0-9]*[A-HJKMNP-TV-Z])[0-7][0-9A-HJKMNP-TV-Z]{25}"
)
_WORD_UUID = re.compile(rf"(?:([A-Za-z]{{1,16}})[-_:.])?({_UUID})")
# seven digits in a row once the hyphens are gone: a phone number or a card may be hidden
# in a UUID's groups (call_5b12a070-6300-9065-…: 070-6300-9065); ~30% of random UUIDs
_DIGITS7_ROW = re.compile(r"\d{7}")
# Words an id is prefixed with (an allow-list: never a credential word such as "token" or
# "password", whose value a UUID can be, nor a name)
_ID_WORDS = frozenset([
    "req", "request", "run", "trace", "span", "evt", "event", "msg", "message", "job", "task",
    "call", "tool", "plan", "step", "conv", "conversation", "chat", "thread", "turn", "resp",
    "response", "op", "operation", "obj", "txn", "tx", "order", "item", "doc", "file", "batch",
    "agent", "org", "proj", "project", "user", "cus", "ch", "pi", "pm", "in", "ii", "sub",
    "inv", "acct", "ord", "wh", "ws", "conn", "ctx", "corr", "cid", "rid", "tid", "uid", "trc",
    "cmpl", "chatcmpl", "asst", "thr", "src", "node", "edge", "flow", "graph", "case", "test",
    "stage", "query", "result",
])  # fmt: skip
# An IBAN of a country whose code is hex letters and whose account is digits (DE, BE, AE):
# all hex, so it looked like an upper-case digest and skipped the id pass
_IBAN_SHAPED = re.compile(r"[A-Za-z]{2}\d{12,32}")
# an international number glued into an id: "+", then eight digits or more in phone punctuation
# A bank account's domestic number by its shape: 4 letters then 14 digits (UK, Ireland) or
# 10 (Netherlands), Italy's check letter then 22 characters, Brazil's 23 digits and 2 letters
_BBAN = re.compile(r"[A-Z]{4}\d{14}|[A-Z]{4}\d{10}|[A-Z]\d{10}[0-9A-Z]{12}|\d{23}[A-Z]{2}")
_PLUS_PHONE = re.compile(r"\+[(]?\d(?:[\d().\-/]?\d){7,}")
_WHITESPACE = re.compile(r"\s")
# digits in phone punctuation, an extension allowed: +44(0)289018125, 874.655.7385x4073
_PHONE_SHAPED = re.compile(r"[+(]*\d[\d().+/-]*(?:(?:x|ext\.?)\d{1,6})?")
_ALL_DIGITS8 = re.compile(r"\d{8,}")
_SEPARATORS = re.compile(r"[-_:/|.]")
_EMAIL_IN_ID = re.compile(
    r"(?:@|%40)[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)*"
    r"\.(?:xn--[A-Za-z0-9-]+|[A-Za-z]{2,24})(?![A-Za-z])"
)
# a card's four groups behind any separators (+ , ; = %20 --): not a thing's id
_ANY_CARD_GROUPS = re.compile(r"(?<!\d)(?:\d{4}(?:[^A-Za-z0-9]|%20){1,3}){3}\d{4}(?!\d)")
_NON_DIGITS = re.compile(r"\D")
_DATE_LAYOUT = re.compile(
    r"20[0-3]\d(?:[-./](?:0?[1-9]|1[0-2])[-./](?:0?[1-9]|[12]\d|3[01])|"
    r"(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01]))(?!\d)"
)
_CARD_RUN = re.compile(r"(?<!\d)\d{13,19}(?!\d)")
_CARD_GROUPS = re.compile(
    r"(?<!\d)(?:\d{4}[-_:/|. ]){3}\d{4}(?!\d)|(?<!\d)\d{4}[-_:/|. ]\d{6}[-_:/|. ]\d{5}(?!\d)"
)
_DIGITS7 = re.compile(r"(?:\d\D*){7}")
# A MAC address (a device's, so a person's): six hex pairs. Free text marks it DEVICE_ID; an
# attack stored it under request_id, id and task_id, where ids are kept.
_MAC = re.compile(
    r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}([:-]))(?:[0-9A-Fa-f]{2}\1){4}[0-9A-Fa-f]{2}(?![0-9A-Fa-f])"
)
_KEPT: set[str] = set()  # values judged kept (a pure function of the value), bounded
_KEPT_MAX = 65_536


def kept_as_id(value: str, *, number: bool = False) -> bool:
    """Whether *value*, found under an id key, may be stored as it is (see the module doc);
    *number*: the key names a thing's number (:func:`tracelake.scrub.keys.is_number_key`)."""
    if not number and _ALL_DIGITS8.fullmatch(value) and not recent_date_digits(value):
        return False
    if value in _KEPT or (number and value in _KEPT_AS_NUMBER):
        return True
    if not _judge(value):
        return False
    kept = _KEPT
    if national_ids.checked_shape(value):
        # a DNI or NIE, a Taiwanese id (their check character holds), also
        # as upper-case hex (43464097F): not kept as an id, but as a thing's number a
        # product code of that shape is (goods_no: G100734599)
        if not number:
            return False
        kept = _KEPT_AS_NUMBER
    if len(kept) >= _KEPT_MAX:
        kept.clear()
    kept.add(value)
    return True


_KEPT_AS_NUMBER: set[str] = set()  # kept under a key that names a thing's number only


def _judge(value: str) -> bool:
    if not value or len(value) > MAX_ID:
        return False
    if _OPAQUE.fullmatch(value) and not _IBAN_SHAPED.fullmatch(value):
        # 220514A5054: a HETU is hex too, and so is an Italian bank account (C5273742797…)
        return not (
            national_ids.distinct_shape(value)
            or _BBAN.fullmatch(value)
            or registrations.shaped(value)
        )
    if uuid_id(value):
        return True
    if _credential_uuid(value):
        return False
    many_digits = _DIGITS7.search(value) is not None
    return _id_shaped(value, many_digits) and _nothing_found(value, many_digits)


def uuid_id(value: str) -> bool:
    """A UUID, bare or behind an id word (``req-<uuid>``, ``run_<uuid>``: :data:`_ID_WORDS`),
    whose digits cannot hold a number: no seven digits in a row once its hyphens are removed
    (a phone number, a card). Nothing else can be in it: the id pass and the free-text rules
    are skipped (~130 us a new id)."""
    found = _WORD_UUID.fullmatch(value)
    if found is None:
        return False
    word, uuid = found.group(1), found.group(2)
    if word is not None and word.lower() not in _ID_WORDS:
        return False
    return _DIGITS7_ROW.search(uuid.replace("-", "")) is None


def _credential_uuid(value: str) -> bool:
    """A UUID beside a credential's word (``session_<uuid>``, ``auth:<uuid>``, ``sess~<uuid>``,
    ``session<uuid without dashes>``, ``<uuid>_session``): a session or a capability token,
    never kept as an id (session 16's and 17's attacks)."""
    found = _CREDENTIAL_UUID.fullmatch(value)
    if found is None:
        return False
    return any(
        word is not None
        and (word.lower() in _CREDENTIAL_WORDS or classify(word)[0] is KeyClass.CREDENTIAL)
        for word in (found.group(1), found.group(2))
    )


_ANY_UUID = r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}"
_CREDENTIAL_UUID = re.compile(
    rf"(?:([A-Za-z]{{1,16}})[-_:./+|~#]{{0,2}})?{_ANY_UUID}(?:[-_:./+|~#]{{1,2}}([A-Za-z]{{1,16}}))?"
)


_CREDENTIAL_WORDS = frozenset([
    "sess", "otp", "pw", "pwd", "pass", "bearer", "jwt", "refresh", "access", "magic",
    "reset", "invite", "sig", "hmac", "priv", "key", "apikey", "csrf", "xsrf", "cookie", "login",
    "tok", "sso", "ticket", "phpsessid", "jsessionid", "sk", "pat", "sessionid", "sessid",
])  # fmt: skip


def _id_shaped(value: str, many_digits: bool) -> bool:
    """ASCII without whitespace, not a phone number's digits, not a credential's shape."""
    if not value.isascii() or _WHITESPACE.search(value) or _MAC.search(value):
        return False
    if national_ids.distinct_shape(value) or registrations.shaped(value):
        return False  # a codice fiscale, a HETU, a NINO, a VAT number as the id
    if _BBAN.fullmatch(value) and not recent_date_digits(
        value.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    ):
        return False  # a bank account: DJDF75701234423146 (not ORDR2026072512, a dated id)
    # id+33(0)634827465_1, cb+1-938-660-0518 (not pkg+20260725)
    plus_phone = "+" in value and any(
        not _dated(m.group(0)[1:]) for m in _PLUS_PHONE.finditer(value)
    )
    if plus_phone:
        return False
    if many_digits and not value.isdigit() and _PHONE_SHAPED.fullmatch(value) and not _dated(value):
        return False
    return not credential_shaped(value)


def _nothing_found(value: str, many_digits: bool) -> bool:
    """The id pass of detect() finds nothing, as written or with separators as spaces."""
    if detect(value, False)[1]:
        return False
    # an e-mail glued to the rest of the id (jane.doe@acme-corp.com-<uuid>): the recognizers
    # want a boundary after the domain, and reading "." as a space below breaks the address
    if _EMAIL_IN_ID.search(value):
        return False
    # a card's grouping glued to letters (req-cdff4107-5323-8087-4988-…): no word boundary
    # for the card recognizer, as written or with separators as spaces
    if any(
        luhn_ok(_NON_DIGITS.sub("", m.replace("%20", ""))) for m in _ANY_CARD_GROUPS.findall(value)
    ):
        return False
    if not (many_digits and _SEPARATORS.search(value)):
        return True
    found = {entity for entity, _ in detect(_SEPARATORS.sub(" ", value), False)[1]}
    # digit groups of an id read together can pass a card's checksum by chance: a card
    # counts here only in a card's grouping (4-4-4-4, 4-6-5) or as one Luhn-valid run of
    # 13-19 digits (cc_4416616205945101, run_5351095494134822: a card glued to a prefix)
    if "CREDIT_CARD" in found and not (_CARD_GROUPS.search(value) or _card_run(value)):
        found.discard("CREDIT_CARD")
    return not found


def _card_run(value: str) -> bool:
    return any(luhn_ok(run) for run in _CARD_RUN.findall(value))


def _dated(value: str) -> bool:
    """Digits that start with a recent date in a date's layout: 2026-07-25, 20260725-0001
    (not 200004-2668902, a resident number whose digits read as 2000-04-26)."""
    return _DATE_LAYOUT.match(value) is not None
