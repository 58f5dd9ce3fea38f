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

from tracelake.scrub.password_words import PASSWORD_WORDS
from tracelake.scrub.vocab import COMMON_WORDS


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
    r"authorization|cookie|token(?!iz)|apikey|secret|passw(?:or)?d|pwd$|pw$|(?<!by)(?<!com)pass$|"
    r"(?:encryption|signing|master|jwt|hmac|aes|api|access|client|private|license|openai|"
    r"anthropic|stripe|github|slack|aws|service|webhook|app|admin|root|account|storage|shared|"
    r"sas|subscription)key$|auth$|"
    r"passcode|passkey|passphrase|credential|"
    r"privatekey|accesskey|signature|^session$|^sess$|sessioncookie|sessiontoken|sessionkey|csrf|xsrf|"
    r"^otp$|otpcode|^pin$|pincode|^cvc$|^cvv$|securitycode|clientsecret|^auth$|^jwt$|"
    # one-time codes, PINs and card security codes (sms_code, card_pin, card_cvv, totp)
    r"(?:verification|verify|auth|mfa|twofa|tfa|sms|email|access|reset|recovery|confirmation|"
    r"confirm|onetime|login|signin|activation|backup|unlock|otp)code$|"
    r"otp$|totp|hotp|onetimepassword|(?<!s)pin$|pinnumber|pinno|cvv|cvc|^csc$|cardcsc|"
    # a URL signature (Azure SAS sig=) and the password in other languages (a seventh attack:
    # {"senha": "572233"}, {"비밀번호": "<uuid>"} were kept)
    r"^sig$|" + PASSWORD_WORDS
)
_PSEUDONYM = re.compile(
    r"^x?(?:user|usr|member|mbr|customer|cust|buyer|orderer|ordr|login|"
    r"session|visitor|device|client)(?:id|no|num|number|key|seq)$|^(?:account|acct)id$|^sid$|^uid$|"
    r"^(?:user|social|twitter|github|slack|telegram|instagram|tiktok|discord)?handle$|^screenname$"
)
# A credential key naming a property of it (token_type, cookie_path, signature_version,
# auth_method, secret_name, password_policy): its value is scanned as text.
_CREDENTIAL_PROPERTY = re.compile(
    r"(?:type|kind|method|scheme|alg|algorithm|version|format|name|path|domain|endpoint|url|uri|"
    r"provider|policy|header|mode|strategy|field|param|samesite|secure|httponly|source|status|"
    r"issuer|audience|scope|scopes|usage|enabled|required)$"
)
# Keys naming who did something (a person, or a service account written as an identifier)
_ROLE_WORDS = (
    r"assignee|assignedto|signedby|signer|author|reviewer|reviewedby|approver|approvedby|"
    r"createdby|updatedby|modifiedby|requester|requestedby|reporter|reportedby|submittedby|"
    r"submitter|handledby"
)
# Person-data keys. Entity name is the marker the value is replaced with.
_PERSON: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"e?mail"), "EMAIL_ADDRESS"),
    (
        re.compile(
            r"phone|mobile|^tel$|telno|telnum|^hp$|hpno|mblno|mobno|cellno|^cell$|fax|"
            r"^(?:emergency|customer|cust|buyer|user|orderer)?contact(?:no|num|number|tel)?$"
        ),
        "PHONE_NUMBER",
    ),
    (
        re.compile(
            r"rrn|ssn|residentregistration|jumin|birth|^dob$|brthdy|brthdt|birthday|^bday$|nationalid"
        ),
        "KR_RRN_OR_BIRTH",
    ),
    (re.compile(r"card(?:no|num|number)?$|cardno|pan$|cardnumber"), "CREDIT_CARD"),
    (
        re.compile(
            r"account(?:no|num|number)?$|acntno|acctno|acctnum|acntnum|accno|accnum|bankaccount|iban"
        ),
        "BANK_ACCOUNT",
    ),
    (
        re.compile(
            r"(?:license|licence)?plate(?:no|num|number)?$|carno|vehicleno|carnumber|^reg(?:no|num|"
            r"number)$|^(?:vehicle|car)?registration(?:no|num|number|plate)$|kennzeichen|^carreg$|"
            r"^vrn$|matricula|^targa$|kenteken"
        ),
        "VEHICLE_PLATE",
    ),
    (
        # an identity document's number (a "document_id" or "doc_id" names a stored document)
        re.compile(
            r"passport|driverlicen[cs]e|licen[cs]eno|licen[cs]enum|"
            r"^(?:id|identity|travel|national)?doc(?:ument)?(?:no|num|number)$|traveldoc|"
            r"iddocument|identitydocument|^id(?:no|num|number)$|identity(?:no|num|number|card)|"
            r"^(?:dni|nie|nif|cpf|curp|nino|pesel|bsn|mynumber)$|taxid|nationalinsurance|"
            r"socialsecurity|^vat(?:no|num|nr|code|reg|regno)$|vat(?:id|number)$|ustid|partitaiva|"
            r"umsatzsteuer|^piva$|^btw(?:nummer|nr|id)?$|taxnumber|taxno$|^tva|^nip$|^cif$|^mva$|"
            r"^moms(?:nr|nummer)?$|steuernummer|^vies|orgnumber|^orgnr$|(?:company|customer|seller)vat$"
        ),
        "ID_DOCUMENT",
    ),
    (re.compile(r"ipaddr|^ip$|clientip|remoteaddr|xforwardedfor|xrealip"), "IP_ADDRESS"),
    (
        re.compile(r"macaddr|^mac$|deviceimei|^imei$|^imsi$|^iccid$|^udid$|^idfa$|^gaid$"),
        "DEVICE_ID",
    ),
    (
        re.compile(
            r"^(?:geo|gps|home|delivery|dlv|user|cust)?(?:lat|lng|lon|latitude|longitude)$|"
            r"^(?:geo|gps)?(?:coords?|coordinates|location|position|latlng|latlon|point)$|^gps$|^geo$"
        ),
        "LOCATION",
    ),
    (
        re.compile(r"address|^addr|addr$|addr\d|zipcode|zipcd|postcode|postalcode|zip$|street"),
        "KR_ADDRESS",
    ),
    (
        re.compile(
            r"receiver|recipient|rcvr|rcver|addressee|^holder$|cardholder|accountholder|"
            rf"^(?:{_ROLE_WORDS}|contactperson)$"
        ),
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
# Keys naming a thing's id or number (orderNo, invoice_number, trackingNo, goodsCd, sku):
# the value is an id of a known kind, kept (checked only for clear personal data).
_THING_ID = re.compile(
    r"^(?:legacy|orig|original|parent|new|old|ext|external)?"
    r"(?:order|ord|invoice|inv|tracking|track|delivery|dlv|dlvr|shipment|shipping|ship|waybill|"
    r"parcel|claim|clm|refund|rfnd|return|rtn|exchange|exch|goods|gds|product|prod|prd|item|sku|"
    r"seller|store|shop|coupon|promo|promotion|cart|transaction|txn|approval|apprv|receipt|"
    r"ticket|job|batch|category|cat|brand|option|opt|warehouse|carrier|courier|stock|lot|"
    r"model|catalog|listing|offer|deal)"
    r"(?:id|no|num|number|seq|code|cd|key|ids|nos)$|^skus?$|"
    r"^(?:barcode|ean|ean13|gtin|gtin13|upc|isbn|isbn13|jancode)$"  # scalars (not orders: a list)
)
# Keys naming a thing (toolName, fileName, productName): not a person.
_THING_NAME = re.compile(
    r"(?:tool|task|file|host|field|model|agent|function|func|skill|product|prod|prd|goods|gds|item|"
    r"brand|category|cat|store|shop|mall|bank|event|type|class|table|column|col|key|service|svc|"
    r"app|method|op|operation|param|queue|topic|step|plan|node|stage|path|dir|domain|server|db|"
    r"schema|index|tag|label|template|status|state|code|kind|option|opt|carrier|courier|company|"
    r"corp|org|team|project|repo|branch|package|pkg|module|image|container|city|country|region|"
    r"campaign|coupon|promo|plan|tier|role|device|browser|os|channel|metric|header|cookie|"
    r"element|attr|attribute|property|prop|display)?(?:name|nm)s?$"
)
# A number under a credential-looking key is a quantity when the key says so (token_ttl_s).
QUANTITY = re.compile(
    r"ttl|ttls$|budget|views|revenue|seed|clicks|impressions|sales|stock|balance|"
    r"timeout|expires?in|expiry|expiration|maxage|age$|count|cnt$|size|length|len$|"
    r"limit|max|min|seconds?$|secs?$|ms$|millis|minutes?$|mins?$|hours?$|days?$|^n(?:items|rows|records|events|tokens|samples|steps|calls|retries|workers|threads|bytes|pages|results|chars|lines|files)$|num$|"
    r"retries|attempts|bytes|version|ver$|interval|window|remaining|used|total|rate|ttls$|"
    r"amount|amt$|price|cost|fee|qty|quantity|duration|elapsed|latency|offset|page|score|"
    r"weight|height|width|percent|ratio|step|index|idx$|level|priority|epoch|timestamp|ts$|"
    r"time|date|at$|since|until|expires|exp$|iat$|nbf$|deadline|created|updated|modified|"
    # token_quota, token_bucket_capacity, api_key_rotations, password_strength (a sixth attack)
    r"quota|threshold|misses|hits|capacity|rotations?|strength|usage|burst|refill"
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.:/-]{0,127}")
# The keys of _SAFE that name an identifier (the others name a label: type, status, reason).
_ID_KEYS = frozenset(
    [
        "id",
        "ids",
        "planid",
        "stepid",
        "newplanid",
        "oldplanid",
        "taskid",
        "parenttaskid",
        "agentid",
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
        "eventid",
        "correlationid",
        "messageid",
    ]
)


_NUMBERED = re.compile(r"(?<=[a-z])\d{1,2}$")


def normalize(key: str) -> str:
    """*key* lower-cased without separators, and without the number of a numbered field
    (hp1/hp2/hp3, card1..card4, addr2: the parts of one value)."""
    return _NUMBERED.sub("", _SEPARATORS.sub("", key).lower())


def _credential_class(norm: str) -> tuple[KeyClass, str]:
    # a key naming a property of a credential is not one (_CREDENTIAL_PROPERTY)
    if _CREDENTIAL_PROPERTY.search(norm) and not _CREDENTIAL.fullmatch(norm):
        return KeyClass.PLAIN, ""
    return KeyClass.CREDENTIAL, "CREDENTIAL"


@lru_cache(maxsize=8192)
def classify(key: str) -> tuple[KeyClass, str]:
    """``(KeyClass, entity)`` for *key*; entity is the marker used for PERSON/CREDENTIAL."""
    norm = normalize(key)
    if (norm in _SAFE and norm != "name") or norm in _ID_KEYS:
        return KeyClass.SAFE_ID, ""
    if _TOKEN_COUNTS.fullmatch(norm):
        return KeyClass.PLAIN, ""
    if _THING_ID.search(norm):
        return KeyClass.SAFE_ID, ""
    if _PSEUDONYM.search(norm):
        return KeyClass.PSEUDONYM, "PSEUDONYM"
    if _CREDENTIAL.search(norm):
        return _credential_class(norm)
    for pattern, entity in _PERSON:
        if pattern.search(norm):
            return KeyClass.PERSON, entity
    if (norm.endswith(("name", "nm", "names")) and not _THING_NAME.fullmatch(norm)) or (
        norm in ("displayname", "username", "holdername", "surname", "forename")
    ):
        return KeyClass.PERSON, "PERSON"
    if re.search(r"shipto|billto|deliverto|sendto|mailto|destination|location|residence", norm):
        return KeyClass.PERSON, "KR_ADDRESS"
    return KeyClass.PLAIN, ""


@lru_cache(maxsize=8192)
def is_identifier_key(key: str) -> bool:
    """Whether *key* names an identifier (``request_id``, ``orderNo``, ``tool_call.id``):
    its value is judged as an id (:mod:`tracelake.scrub.ids`), not as a label or text."""
    norm = normalize(key)
    return norm in _ID_KEYS or _THING_ID.search(norm) is not None


@lru_cache(maxsize=8192)
def is_number_key(key: str) -> bool:
    """Whether *key* names a thing's number (``orderNo``, ``invoice_number``, ``trackingNo``,
    ``sku``): digits alone are that number. Under any other id key (``request_id``,
    ``trace_id``, ``id``) eight digits or more may as well be a phone or a card number."""
    return _THING_ID.search(normalize(key)) is not None


# Labels whose values are the runner's vocabulary with capitals and spaces ("Fraud
# Escalation", "Claude Opus"): the names of agents, tasks, skills and models.
_VOCABULARY_NAMES = frozenset(
    ["targetname", "agentname", "taskname", "skillname", "model", "modelname", "object"]
)


@lru_cache(maxsize=8192)
def names_vocabulary(key: str) -> bool:
    """Whether *key* names an agent, a task, a skill or a model (capitalised words in it are
    names of things, not of people)."""
    return normalize(key) in _VOCABULARY_NAMES


@lru_cache(maxsize=8192)
def is_reason_key(key: str) -> bool:
    """Whether *key* names a reason (``reason``, ``failure_reason``, ``finish_reason``): a
    label that can be prose, written by a user or quoting one."""
    return "reason" in normalize(key)


_ROLE = re.compile(rf"^(?:{_ROLE_WORDS})$")


@lru_cache(maxsize=8192)
def is_role_key(key: str) -> bool:
    """Whether *key* names who did something (created_by, assignee, owner): a person, or a
    service account written as an identifier (``scheduler``, ``ci-bot``)."""
    return _ROLE.match(normalize(key)) is not None


@lru_cache(maxsize=8192)
def credential_quantity(key: str) -> bool:
    """Whether a credential *key* names a quantity of the credential: a quantity word after
    the credential's (token_ttl_s, password_min_length, access_key_age), not before it
    (one_time_password is a password)."""
    norm = normalize(key)
    end = 0
    for match in _CREDENTIAL.finditer(norm):
        end = match.end()
    return QUANTITY.search(norm, end) is not None


@lru_cache(maxsize=8192)
def is_quantity(key: str) -> bool:
    """Whether *key* names a quantity or a time (:data:`QUANTITY`), memoised per key."""
    return QUANTITY.search(normalize(key)) is not None


def _joined_capitalised(value: str) -> bool:
    """Capitalised words joined by hyphens, dots or apostrophes that are not all common words
    (Heinz-Walter is a name; Content-Type a header)."""
    parts = [p for p in re.split(r"[-.'’]", value) if p]
    return (
        bool(parts)
        and all(p[0].isupper() and (len(p) == 1 or p[1:].islower()) for p in parts)
        and not all(p.lower() in COMMON_WORDS for p in parts)
    )


def is_identifier_name(value: object) -> bool:
    """``name: "lookup_customer"`` names a thing; ``name: "Minjun Lee"``/``"이민준"`` a person.

    A bare ``name`` key is person data unless its value looks like a code identifier
    (snake_case, camelCase, dotted, with digits) rather than a capitalised word.
    """
    if not isinstance(value, str) or not _IDENTIFIER.fullmatch(value):
        return False
    if value[:1].isupper() and value[1:].islower():  # "Minjun": a capitalised word
        return False
    if _joined_capitalised(value):
        return False  # "Heinz-Walter", "Hans-J.", "O'Neil": capitalised words joined
    return (
        any(c in value for c in "_.:/-")
        or any(c.isdigit() for c in value)
        or value.islower()
        or any(c.isupper() for c in value[1:])
    )
