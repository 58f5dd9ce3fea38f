"""Key rules: what a dict key says about its value (case- and separator-insensitive).

Modelled on Sentry Relay's default PII key list plus the seed's list (tokens, cookies, emails,
phone numbers, raw user ids) and the abbreviated field names of Korean commerce APIs
(custNm, rcvrNm, mbrId, custNo, addr, telNo, hpNo, ...).

A key is normalised by lower-casing it and removing ``-``, ``_``, ``.`` and spaces, so
``X-User-Id``, ``x_user_id`` and ``xUserId`` are one key.
"""

from __future__ import annotations

import re
from enum import Enum
from functools import lru_cache


class KeyClass(Enum):
    CREDENTIAL = "credential"  # value dropped
    PERSON = "person"  # value replaced by a typed marker
    PSEUDONYM = "pseudonym"  # value replaced by a keyed HMAC pseudonym
    SAFE_ID = "safe_id"  # ids, names of tools/tasks/fields: kept, checked only for clear PII
    PLAIN = "plain"  # no opinion: the value is scanned


_SEPARATORS = re.compile(r"[-_.\s]")

# LLM usage counters (prompt_tokens, completion_tokens_details, max_tokens) are counts.
_TOKEN_COUNTS = re.compile(r".*tokens(?:details)?$|^maxtokens?$|^tokencount$|^numtokens$")
_CREDENTIAL = re.compile(
    r"authorization|cookie|token|apikey|secret|passw(?:or)?d|^pwd$|passphrase|credential|"
    r"privatekey|accesskey|signature|^session$|sessioncookie|sessiontoken|sessionkey|csrf|xsrf|"
    r"^otp$|otpcode|^pin$|pincode|^cvc$|^cvv$|securitycode|clientsecret|^auth$|^jwt$"
)
_PSEUDONYM = re.compile(
    r"^x?(?:user|usr|member|mbr|customer|cust|buyer|orderer|ordr|login|"
    r"session|visitor|device|client)(?:id|no|num|number|key|seq)$|^(?:account|acct)id$|^sid$|^uid$"
)
# Person-data keys. Entity name is the marker the value is replaced with.
_PERSON: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"e?mail"), "EMAIL_ADDRESS"),
    (
        re.compile(r"phone|mobile|^tel$|telno|telnum|^hp$|hpno|mblno|mobno|cellno|^cell$|fax"),
        "PHONE_NUMBER",
    ),
    (
        re.compile(r"rrn|ssn|residentregistration|jumin|birth|^dob$|brthdy|brthdt|birthday"),
        "KR_RRN_OR_BIRTH",
    ),
    (re.compile(r"card(?:no|num|number)?$|cardno|pan$|cardnumber"), "CREDIT_CARD"),
    (re.compile(r"account(?:no|num|number)?$|acntno|acctno|bankaccount|iban"), "BANK_ACCOUNT"),
    (re.compile(r"passport|driverlicen[cs]e|licenseno"), "ID_DOCUMENT"),
    (re.compile(r"ipaddr|^ip$|clientip|remoteaddr|xforwardedfor|xrealip"), "IP_ADDRESS"),
    (
        re.compile(r"address|^addr|addr$|addr\d|zipcode|zipcd|postcode|postalcode|zip$|street"),
        "KR_ADDRESS",
    ),
    (
        re.compile(r"receiver|recipient|rcvr|rcver|addressee|^holder$|cardholder|accountholder"),
        "PERSON",
    ),
    (
        re.compile(
            r"^(?:cust|rcvr|rcv|mbr|ordr|ord|user|usr|buyer|sndr|sender|member|customer|"
            r"orderer|first|last|full|given|family|real|nick|kor|eng)?(?:nm|name)(?:en|ko|kr)?$"
        ),
        "PERSON",
    ),
)
# Keys whose value is an identifier or a name of a thing, never a person's data.
_SAFE = frozenset(
    [
        "type",
        "kind",
        "stage",
        "id",
        "planid",
        "stepid",
        "newplanid",
        "oldplanid",
        "failedstep",
        "tool",
        "tools",
        "toolname",
        "taskname",
        "taskid",
        "parenttaskid",
        "targetname",
        "fieldname",
        "agentname",
        "agentid",
        "functionname",
        "name",
        "model",
        "modelname",
        "object",
        "status",
        "finishreason",
        "role",
        "callid",
        "itemid",
        "toolcallid",
        "requestid",
        "runid",
        "responseid",
        "traceid",
        "spanid",
        "collectionid",
        "caseid",
        "qualitycaseid",
        "graphtoolcallversion",
        "boundary",
        "providereventtype",
        "operation",
        "skillname",
        "recoveredpath",
        "reason",
        "reasoncode",
        "failurereason",
        "exceptiontype",
        "errorkind",
        "eventtype",
        "version",
        "object",
    ]
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.:/-]{0,127}")


def normalize(key: str) -> str:
    return _SEPARATORS.sub("", key).lower()


@lru_cache(maxsize=8192)
def classify(key: str) -> tuple[KeyClass, str]:
    """``(KeyClass, entity)`` for *key*; entity is the marker used for PERSON/CREDENTIAL."""
    norm = normalize(key)
    if norm in _SAFE and norm != "name":
        return KeyClass.SAFE_ID, ""
    if _TOKEN_COUNTS.fullmatch(norm):
        return KeyClass.PLAIN, ""
    if _PSEUDONYM.search(norm):
        return KeyClass.PSEUDONYM, "PSEUDONYM"
    if _CREDENTIAL.search(norm):
        return KeyClass.CREDENTIAL, "CREDENTIAL"
    for pattern, entity in _PERSON:
        if pattern.search(norm):
            return KeyClass.PERSON, entity
    return KeyClass.PLAIN, ""


def is_identifier_name(value: object) -> bool:
    """``name: "lookup_customer"`` names a thing; ``name: "Minjun Lee"``/``"이민준"`` a person.

    A bare ``name`` key is person data unless its value looks like a code identifier
    (snake_case, camelCase, dotted, with digits) rather than a capitalised word.
    """
    if not isinstance(value, str) or not _IDENTIFIER.fullmatch(value):
        return False
    if value[:1].isupper() and value[1:].islower():  # "Minjun": a capitalised word
        return False
    return (
        any(c in value for c in "_.:/-")
        or any(c.isdigit() for c in value)
        or value.islower()
        or any(c.isupper() for c in value[1:])
    )
