"""Values written so that a pattern misses them but a reader does not (issue 14, fourth
attack): JSON escapes left in text, percent-encoded separators, spelt-out e-mail addresses,
phone numbers glued to their label, national ids with letters, credentials on command lines
and under keys that do not say "password" in full; and the safe values next to them.

Values are fresh Faker values every run; each assertion message shows the input and the
scrubbed output, so a failure is reproducible from the message alone.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from faker import Faker

from tracelake.scrub import Scrubber
from tracelake.scrub.keys import KeyClass, classify
from tracelake.scrub.national_ids import spans as national_id_spans


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


@pytest.fixture()
def fake() -> Faker:
    return Faker(["en_US", "en_GB", "ko_KR", "de_DE", "ja_JP"])


def test_json_escaped_email_is_found(scrubber: Scrubber, fake: Faker) -> None:
    for _ in range(20):
        user, domain = fake.user_name(), fake.domain_name()
        text = f"contact {user}\\u0040{domain} about the refund"
        out = scrubber.scrub_text(text)
        assert user not in out and "[EMAIL_ADDRESS]" in out, (text, out)


def test_percent_encoded_phone_is_found(scrubber: Scrubber, fake: Faker) -> None:
    for _ in range(20):
        local = fake.numerify("##########")
        text = f"GET /callback?to=%2B82%20{local[:2]}%20{local[2:6]}%20{local[6:]}"
        out = scrubber.scrub_text(text)
        assert local[2:6] not in out and local[6:] not in out, (text, out)


@pytest.mark.parametrize(
    "form",
    [
        "{u} at {d} dot {t}",
        "{u} (at) {d} (dot) {t}",
        "{u}[at]{d}.{t}",
        "{u} {{at}} {d} {{dot}} {t}",
    ],
)
def test_spelt_out_email_is_found(scrubber: Scrubber, fake: Faker, form: str) -> None:
    for _ in range(10):
        user, word, tld = fake.user_name(), fake.domain_word(), fake.tld()
        text = "please write to " + form.format(u=user, d=word, t=tld) + " today"
        out = scrubber.scrub_text(text)
        assert out == "please write to [EMAIL_ADDRESS] today", (text, out)


def test_spelt_out_at_alone_is_prose(scrubber: Scrubber) -> None:
    for text in ("meet at api.example.com", "we arrive at 10 dot 30", "retry at noon"):
        assert scrubber.scrub_text(text) == text


@pytest.mark.parametrize("label", ["HP.", "Tel:", "No.", "Mobile-", "T/", "fax:"])
def test_phone_glued_to_its_label_is_found(scrubber: Scrubber, fake: Faker, label: str) -> None:
    for number in (fake.numerify("010-####-####"), "+44 " + fake.numerify("20 #### ####")):
        text = f"{label}{number}"
        out = scrubber.scrub_text(text)
        assert _digits(number)[-8:] not in _digits(out), (text, out)


def test_ids_glued_to_a_prefix_stay(scrubber: Scrubber) -> None:
    for text in ("ORD-20260725-0001", "order DLV240513871715", "v1.2.3", "ORD-0101234567"):
        assert scrubber.scrub_text(text) == text


@pytest.mark.parametrize(
    ("what", "value"),
    [
        ("UK NINO", "AB123456C"),
        ("UK NINO, spaced, test prefix", "ZZ 51 53 19 T"),
        ("codice fiscale", "RSSMRA85T10A562S"),
        ("Taiwan id", "A123456789"),
        ("Chinese id with X", "11010119900307457X"),
        ("Spanish DNI", "12345678Z"),
        ("Spanish NIE", "X1234567L"),
        ("Singapore NRIC", "S1234567D"),
        ("Hong Kong id", "A123456(7)"),
        ("Indian PAN", "ABCPE1234F"),
        ("Finnish HETU", "290766-538R"),
        ("French NIR, Corsica", "208022A00442831"),
    ],
)
def test_national_ids_with_letters(scrubber: Scrubber, what: str, value: str) -> None:
    for text in (f"id {value} ok", f"고객 신분증 {value} 확인", f"身份证 {value}"):
        out = scrubber.scrub_text(text)
        assert value not in out and value.replace(" ", "") not in out.replace(" ", ""), (
            what,
            text,
            out,
        )


def test_faker_national_ids_of_every_locale(scrubber: Scrubber) -> None:
    """Every Faker locale with an ``ssn`` provider, after a national-id word."""
    from faker.config import AVAILABLE_LOCALES

    missed: list[tuple[str, str, str]] = []
    for locale in AVAILABLE_LOCALES:
        if locale in ("fr_QC",):  # deprecated alias of fr_CA, warns
            continue
        fake = Faker(locale)
        try:
            fake.ssn()
        except AttributeError:
            continue
        for _ in range(5):
            value = str(fake.ssn())
            out = scrubber.scrub_text(f"customer national id: {value}")
            core = re.sub(r"[\s\-./]", "", value)
            if value in out or core in re.sub(r"[\s\-./]", "", out):
                missed.append((locale, value, out))
    assert not missed, missed


def test_thing_ids_after_an_id_label_stay() -> None:
    out: list[tuple[int, int, str]] = []
    national_id_spans("the id number ORD-20260725-0001 is an order", out)
    assert out == []


@pytest.mark.parametrize(
    ("command", "secret"),
    [
        ("mysql -uroot -p{} shop", "S3cret{}"),
        ("sshpass -p {} ssh deploy@host", "Pw{}x"),
        ("psql --password={} -h db", "p{}w"),
        ("curl -u admin:{} https://api.example.com", "pw{}"),
        ("redis-cli -u redis://:{}@cache:6379/0", "h{}pw"),
    ],
)
def test_command_line_passwords(scrubber: Scrubber, fake: Faker, command: str, secret: str) -> None:
    value = secret.format(fake.password(length=10, special_chars=False))
    out = scrubber.scrub_text(command.format(value))
    assert value not in out, out


def test_ports_and_flags_stay(scrubber: Scrubber) -> None:
    for text in ("docker run -p8080:80 nginx", "run -p 8080", "pg_dump -U app -W shop"):
        assert scrubber.scrub_text(text) == text


def test_upper_case_provider_keys(scrubber: Scrubber, fake: Faker) -> None:
    body = fake.pystr(min_chars=20, max_chars=20)
    for key in (f"GLPAT-{body}", f"GHP_{body}1234", f"SK-PROJ-{body}"):
        out = scrubber.scrub_text(f"deploy key {key} rotated")
        assert body not in out, out


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("pass: {}", "hunter22"),
        ("DB_PASS={}", "hunter22x"),
        ("api key: {}", "3f2b1c9e-1a2b-4c3d-9e8f-0a1b2c3d4e5f"),
        ("refresh token is {}", "r8f7a6s5d4"),
        ("API-Key: {}", "12ab34cd"),
    ],
)
def test_secrets_announced_in_text(scrubber: Scrubber, text: str, value: str) -> None:
    assert value not in scrubber.scrub_text(text.format(value))


@pytest.mark.parametrize(
    "key",
    ["token_type", "tokenizer", "cookie_path", "signature_version", "auth_method", "secretName"],
)
def test_properties_of_a_credential_are_not_the_credential(key: str) -> None:
    assert classify(key)[0] is KeyClass.PLAIN


@pytest.mark.parametrize("key", ["password", "db_pass", "PGPASS", "passkey", "token", "cookie"])
def test_credential_keys(key: str) -> None:
    assert classify(key)[0] is KeyClass.CREDENTIAL


def test_credential_property_values_are_kept_and_scanned(scrubber: Scrubber) -> None:
    event: dict[str, Any] = {
        "type": "tool.called",
        "args": {
            "token_type": "bearer",
            "tokenizer": "cl100k_base",
            "cookie_path": "/",
            "signature_version": "v4",
            "token_url": "https://auth.example.com/oauth?client_secret=Zq8xLm3Np",
        },
    }
    args = scrubber.scrub_event("graph_tool_call", "tool.called", event).payload["args"]
    assert args["token_type"] == "bearer"
    assert args["tokenizer"] == "cl100k_base"
    assert args["cookie_path"] == "/"
    assert args["signature_version"] == "v4"
    assert "Zq8xLm3Np" not in json.dumps(args)


def test_set_cookie_attributes_stay(scrubber: Scrubber) -> None:
    text = "Set-Cookie: sid=abcdef123; Path=/; Domain=example.com; HttpOnly; Max-Age=3600"
    out = scrubber.scrub_text(text)
    assert "abcdef123" not in out
    assert out.endswith("Path=/; Domain=example.com; HttpOnly; Max-Age=3600"), out


def test_uuid_in_text_is_an_id(scrubber: Scrubber, fake: Faker) -> None:
    """Thousands, so that the rare ones come up: groups of digits only (17992642-0659-4835),
    a group starting with a label's letters (cc16, 7e8cc6019270), letters then 12 digits."""
    for i in range(3000):
        uuid = fake.uuid4() if i % 2 else fake.uuid4().upper()
        text = f"request {uuid} failed"
        assert scrubber.scrub_text(text) == text


def test_json_document_inside_a_text_gets_the_key_rules(scrubber: Scrubber, fake: Faker) -> None:
    password, otp, user = fake.password(length=12), fake.numerify("######"), fake.user_name()
    body = json.dumps({"password": password, "otp": otp, "user_id": user})
    event: dict[str, Any] = {
        "type": "tool.failed",
        "args": {"body": body},
        "error": {"message": f"400 Bad Request: {body}"},
        "goal": f"retry {body} please",
    }
    dump = json.dumps(scrubber.scrub_event("graph_tool_call", "tool.failed", event).payload)
    for value in (password, otp, user):
        assert value not in dump, (value, dump)
    assert (
        json.loads(
            scrubber.scrub_event("graph_tool_call", "tool.failed", event).payload["args"]["body"]
        )["password"]
        == "[CREDENTIAL]"
    )


@pytest.mark.parametrize(
    "form", ["user_id={}", "memberId: {}", "username={}&page=2", "customer_name={} missing"]
)
def test_person_keys_as_key_value_in_text(scrubber: Scrubber, fake: Faker, form: str) -> None:
    value = fake.user_name() + "7"
    out = scrubber.scrub_text(form.format(value) + " not found")
    assert value not in out, out


@pytest.mark.parametrize("text", ["name=lookup_customer", "Location: /orders/1", "step:3"])
def test_thing_keys_as_key_value_stay(scrubber: Scrubber, text: str) -> None:
    assert scrubber.scrub_text(text) == text


@pytest.mark.parametrize("form", ["password:{}", "otp:{}", "api_key:{}"])
def test_credential_pair_without_spaces(scrubber: Scrubber, fake: Faker, form: str) -> None:
    value = fake.password(length=10, special_chars=False)
    assert value not in scrubber.scrub_text(form.format(value))


@pytest.mark.parametrize(
    "form",
    [
        'DB_PASSWORD="{v}"',
        "SECRET_KEY='{v}'",
        'export API_TOKEN="{v}"',
        'password: "{v}"',
        'db_pass = "{v}"',
        "PGPASSWORD={v} psql -h db",
        'deploy --db-password "{v}" --host db',
        "tool --token='{v}'",
        "DB_PASSWORD={v} ./run",
    ],
)
def test_quoted_and_symbol_led_credential_values(
    scrubber: Scrubber, fake: Faker, form: str
) -> None:
    """.env and YAML lines quote their values; a password may start with a symbol."""
    for _ in range(12):
        value = fake.password(length=14, special_chars=True)
        if form.startswith(("PGPASSWORD", "DB_PASSWORD=")):
            value = "&" + value  # a symbol first: the unquoted form reads it too
        text = form.format(v=value)
        out = scrubber.scrub_text(text)
        assert value not in out and "[CREDENTIAL]" in out, (text, out)
    for kept in ('token_ttl_s="3600"', 'token_type: "bearer"', 'status: "ok"'):
        assert scrubber.scrub_text(kept) == kept


@pytest.mark.parametrize(
    "key",
    [
        "verification_code",
        "sms_code",
        "mfa_code",
        "totp",
        "access_code",
        "reset_code",
        "card_pin",
        "pin_number",
        "card_cvv",
        "card_cvc",
        "one_time_password",
        "AccountKey",
    ],
)
def test_one_time_codes_pins_and_card_codes_under_their_keys(
    scrubber: Scrubber, fake: Faker, key: str
) -> None:
    assert classify(key)[0] is KeyClass.CREDENTIAL
    code = fake.numerify("#" * fake.random_int(3, 8))
    payloads: list[dict[str, Any]] = [
        {key: code},
        {key: int("1" + code)},
        {"body": json.dumps({key: code})},
    ]
    for payload in payloads:
        event: dict[str, Any] = {"type": "step.started", "plan_id": "p", "step_id": "s"}
        event["args"] = payload
        out = scrubber.scrub_event("graph_tool_call", "step.started", event).payload
        planted = str(next(iter(payload.values())))
        assert planted not in json.dumps(out["args"]), (payload, out["args"])
    for safe in ("status_code", "error_code", "country_code", "reason_code", "product_code"):
        assert classify(safe)[0] is not KeyClass.CREDENTIAL, safe


@pytest.mark.parametrize(
    "key",
    [
        "document_number",
        "doc_no",
        "travel_doc",
        "id_document",
        "idNumber",
        "id_no",
        "dni",
        "tax_id",
    ],
)
def test_identity_document_numbers_under_their_keys(
    scrubber: Scrubber, fake: Faker, key: str
) -> None:
    for _ in range(5):
        number = fake["en_US"].passport_number()
        event: dict[str, Any] = {"type": "step.started", "plan_id": "p", "step_id": "s"}
        event["args"] = {key: number, "document_id": "doc-42", "doc_id": "kb-article-7"}
        args = scrubber.scrub_event("graph_tool_call", "step.started", event).payload["args"]
        assert number not in json.dumps(args), (key, number, args)
        assert args["document_id"] == "doc-42" and args["doc_id"] == "kb-article-7"
