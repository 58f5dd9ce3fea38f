"""A sixth fresh-context attack (2026-12-03, session 13): secrets in name/value objects and in
command lines given as lists, one-time codes in more forms, and digit groups joined by more
separators. Fresh Faker values every run; the seed is in every assertion message."""

from __future__ import annotations

import json
import random
import secrets
from typing import Any

import pytest
from faker import Faker

from tracelake.scrub import Scrubber


@pytest.fixture()
def seed() -> int:
    return random.SystemRandom().randrange(1, 2**31)


def _step(args: Any = None, output: Any = None) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "step.completed", "plan_id": "p", "step_id": "s", "tool": "t"}
    if args is not None:
        event["args_resolved"] = args
    if output is not None:
        event["output_preview"] = output
    return event


def _none_left(scrubber: Scrubber, seed: int, form: str, values: list[str], name: str) -> None:
    """Each value planted in *form* (as ``{name}``) is gone from the scrubbed text."""
    for value in values:
        text = form.format(**{name: value})
        out = scrubber.scrub_text(text)
        assert value not in out, (seed, text, out)


def _dump(scrubber: Scrubber, event: dict[str, Any]) -> str:
    out = scrubber.scrub_event("graph_tool_call", event["type"], event).payload
    return json.dumps(out, ensure_ascii=False) + json.dumps(out)


# (name key, value key) of the name/value objects of HAR, Kubernetes, Postman, CloudFormation
PAIR_SHAPES = [
    ("name", "value"),
    ("Name", "Value"),
    ("key", "value"),
    ("ParameterKey", "ParameterValue"),
    ("OptionName", "OptionValue"),
]
SECRET_NAMES = [
    "DB_PASSWORD",
    "Authorization",
    "Cookie",
    "X-Api-Key",
    "otp",
    "client_secret",
    "AWS_SECRET_ACCESS_KEY",
    "session_token",
]


def test_name_value_objects_are_judged_by_their_name(scrubber: Scrubber, seed: int) -> None:
    rng = random.Random(seed)
    fake = Faker(["en_US", "ko_KR", "de_DE"])
    fake.seed_instance(seed)
    for _ in range(40):
        name_key, value_key = rng.choice(PAIR_SHAPES)
        secret = rng.choice(
            [fake.password(length=12), secrets.token_urlsafe(12), fake.numerify("######")]
        )
        pair = {name_key: rng.choice(SECRET_NAMES), value_key: secret}
        person = {name_key: "customer_name", value_key: fake.name()}
        plain = {name_key: "LOG_LEVEL", value_key: "debug"}
        env = [plain, pair, person]
        for event in (_step(args={"env": env}), _step(output={"headers": env})):
            dump = _dump(scrubber, event)
            assert secret not in dump, (seed, pair, dump)
            assert person[value_key] not in dump, (seed, person, dump)
            assert '"debug"' in dump and pair[name_key] in dump, (seed, dump)


@pytest.mark.parametrize(
    "argv",
    [
        ["psql", "--password", "{p}"],
        ["mysql", "-u", "root", "-p{p}"],
        ["redis-cli", "-a", "{p}"],
        ["sshpass", "-p", "{p}", "ssh", "host"],
        ["app", "--api-token={p}"],
        ["curl", "-u", "admin:{p}", "https://example.com"],
    ],
)
def test_command_lines_given_as_lists(scrubber: Scrubber, seed: int, argv: list[str]) -> None:
    fake = Faker()
    fake.seed_instance(seed)
    for _ in range(5):
        password = fake.password(length=14)
        items = [a.format(p=password) for a in argv]
        for event in (_step(args={"argv": items}), _step(output={"cmd": items})):
            dump = _dump(scrubber, event)
            assert password not in dump, (seed, items, dump)
            assert json.dumps(items[0]) in dump  # the program's name stays


@pytest.mark.parametrize(
    "argv",
    [["ssh", "-p", "2222", "host"], ["ls", "-la", "/tmp"], ["docker", "run", "-p", "8080:80"]],
)
def test_command_lines_without_a_password_stay(scrubber: Scrubber, argv: list[str]) -> None:
    out = scrubber.scrub_event("graph_tool_call", "step.completed", _step(args={"argv": argv}))
    assert out.payload["args_resolved"]["argv"] == argv


@pytest.mark.parametrize(
    "form",
    [
        "{v} is your verification code",
        "G-{v} is your Google verification code.",
        "Use {v} to verify your account",
        "Your code is {v}",
        "Code: {v}",
        "Votre code : {v}",
        "Tu código es {v}",
        "Seu código é {v}",
        "Ihr Code lautet {v}",
        "Bestätigungscode: {v}",
        "Twój kod to {v}",
        "Doğrulama kodunuz {v}",
        "인증번호 [{v}]를 입력해주세요",
        "인증번호({v})",
        "확인코드 {v}",
    ],
)
def test_one_time_codes_in_more_forms(scrubber: Scrubber, seed: int, form: str) -> None:
    fake = Faker()
    fake.seed_instance(seed)
    shortest = 5 if form.startswith("Use") else 4  # "use 8080 to log in via the proxy": a port
    values = [fake.numerify("#" * fake.random_int(shortest, 8)) for _ in range(4)]
    _none_left(scrubber, seed, form, values, "v")


@pytest.mark.parametrize(
    "text",
    [
        "error code 10061",
        "status code: 5003",
        "exit code 1234",
        "ERROR 1062 (23000): Duplicate entry",
        "the code is in src/app.py line 1234",
        "1000+2000+3000",
        "issue #123 and #456",
    ],
)
def test_codes_that_are_no_secret_stay(scrubber: Scrubber, text: str) -> None:
    assert scrubber.scrub_text(text) == text


SEPARATORS = ["#", "\\", "\u2022", "\uff5e", "\u301c", "\u3161", "\u2043", "\ufe63", "\u2024"]


def test_digit_groups_joined_by_more_separators(scrubber: Scrubber, seed: int) -> None:
    rng = random.Random(seed)
    fake = Faker()
    fake.seed_instance(seed)
    for _ in range(40):
        sep = rng.choice(SEPARATORS)
        groups = rng.choice(
            [
                ["010", fake.numerify("####"), fake.numerify("####")],
                [fake.numerify("####") for _ in range(4)],
                [fake.numerify("###"), fake.numerify("###"), fake.numerify("####")],
            ]
        )
        value = sep.join(groups)
        text = rng.choice(["연락처 {v} 입니다", "card {v}", "call {v} today", "{v}"]).format(
            v=value
        )
        out = scrubber.scrub_text(text)
        assert groups[-2] + sep + groups[-1] not in out, (seed, text, out)


@pytest.mark.parametrize(
    "form",
    ["주문자 {l} {f}", "수령인: {f} {l}", "Dear {l} {f},", "고객 {l} {f} 님", "name: {l} {f}"],
)
def test_hangul_names_written_apart_after_a_label(scrubber: Scrubber, seed: int, form: str) -> None:
    from tracelake.scrub import hangul
    from tracelake.scrub.vocab import KO_SURNAMES_1

    fake = Faker("ko_KR")
    fake.seed_instance(seed)
    words = hangul.words_lexicon()
    tried = 0
    while tried < 10:
        last, first = fake.last_name(), fake.first_name()
        if last not in KO_SURNAMES_1 or len(first) != 2 or first in words:
            continue  # one-syllable surnames, two-syllable given names the lexicon lacks
        tried += 1
        text = form.format(l=last, f=first)
        out = scrubber.scrub_text(text)
        assert first not in out, (seed, text, out)


@pytest.mark.parametrize(
    "form",
    [
        "https://app.example.com/reset-password/{t}",
        "GET /magic/{t} 200",
        "https://maker.ifttt.com/trigger/x/with/key/{t}",
        "open https://example.com/invite/{t}?utm=mail now",
        "/unsubscribe/{t}",
    ],
)
def test_capability_tokens_in_url_paths(scrubber: Scrubber, seed: int, form: str) -> None:
    rng = random.Random(seed)
    for _ in range(10):
        token = rng.choice([secrets.token_urlsafe(rng.randint(12, 17)), secrets.token_hex(8)])
        if not (any(c.isdigit() for c in token) and any(c.isalpha() for c in token)):
            continue
        text = form.format(t=token)
        out = scrubber.scrub_text(text)
        assert token not in out, (seed, text, out)


@pytest.mark.parametrize(
    "text", ["/api/v1/keys/list", "/share/quarterly-report", "/verify/email", "/tokens/refresh"]
)
def test_url_paths_without_a_token_stay(scrubber: Scrubber, text: str) -> None:
    assert scrubber.scrub_text(text) == text


def test_a_url_encoded_in_a_url_query(scrubber: Scrubber, seed: int) -> None:
    """?next=%2Faccount%3Femail%3D<e-mail>, encoded once, twice; a phone after %3D."""
    from urllib.parse import quote

    fake = Faker(["en_US", "ko_KR", "de_DE"])
    fake.seed_instance(seed)
    for _ in range(20):
        email, phone = fake.email(), fake.numerify("010-####-####")
        inner = f"/account?email={email}&to={phone}"
        once = quote(inner, safe="")
        for encoded in (once, quote(once, safe="")):
            text = f"redirect to https://app.example.com/login?next={encoded} failed"
            out = scrubber.scrub_text(text)
            assert email not in out and phone not in out, (seed, text, out)
            assert quote(email, safe="") not in out and phone[4:] not in out, (seed, text, out)


@pytest.mark.parametrize(
    "form",
    [
        "<user><password>{p}</password><customerName>{n}</customerName></user>",
        '<ns:sessionToken id="1">{p}</ns:sessionToken><ns:holderName>{n}</ns:holderName>',
        "{{&quot;password&quot;: &quot;{p}&quot;, &quot;customer_name&quot;: &quot;{n}&quot;}}",
        '{{\\"password\\": \\"{p}\\", \\"customer_name\\": \\"{n}\\"}}',
        "password='{p}' name='{n}'",
        "{{'api_key': '{p}', 'name': '{n}'}}",
    ],
)
def test_key_rules_in_xml_escaped_json_and_quoted_pairs(
    scrubber: Scrubber, seed: int, form: str
) -> None:
    fake = Faker(["en_US", "de_DE", "es_ES"])
    fake.seed_instance(seed)
    for _ in range(5):
        password = fake.password(length=12, special_chars=False)
        name = f"{fake.first_name()} {fake.last_name()}".lower()
        text = form.format(p=password, n=name)
        out = scrubber.scrub_text(text)
        assert password not in out and name not in out, (seed, text, out)


@pytest.mark.parametrize(
    "text",
    [
        "<status>ok</status><name>lookup_customer</name>",
        "<token_ttl_s>3600</token_ttl_s>",
        "'name': 'getOrderDetail'",
    ],
)
def test_xml_and_quoted_pairs_that_hold_nothing_stay(scrubber: Scrubber, text: str) -> None:
    assert scrubber.scrub_text(text) == text


@pytest.mark.parametrize("locale", ["en_GB", "nl_NL", "it_IT"])
def test_bank_accounts_that_start_with_letters_after_an_account_word(
    scrubber: Scrubber, seed: int, locale: str
) -> None:
    fake = Faker(locale)
    fake.seed_instance(seed)
    forms = (
        "account {v}",
        "계좌 {v} 로 환불",
        "refund to account no. {v} today",
        "bank account: {v}",
    )
    for i in range(12):
        value = fake.bban()
        text = forms[i % len(forms)].format(v=value)
        out = scrubber.scrub_text(text)
        assert value not in out, (seed, text, out)


@pytest.mark.parametrize(
    "form",
    ["smsTo{v}", "VM{v}", "toPhone{v}.log", "SMS-{v}x123", "IMG_{v}.jpg"],
)
def test_phone_shapes_glued_to_letters(scrubber: Scrubber, seed: int, form: str) -> None:
    fake = Faker()
    fake.seed_instance(seed)
    shapes = ("010-####-####", "###-###-####", "0%.##.##.##.##", "07### ######")
    values = [fake.numerify(shapes[i % len(shapes)]) for i in range(12)]
    _none_left(scrubber, seed, form, values, "v")


@pytest.mark.parametrize(
    "text",
    [
        "request req_011CPzq8Qhz9ZvyjvrXhY7Lk failed",
        "msg_01XFDUDYJgAACzvnptvVoYEL",
        "tool call toolu_01A09q90qw90lq917835lq9 returned",
        "chatcmpl-AbC123dEf456GhI789jKl012",
        "GET /login HTTP/1.1",
    ],
)
def test_api_object_ids_and_request_lines_stay(scrubber: Scrubber, text: str) -> None:
    assert scrubber.scrub_text(text) == text


def test_provider_secret_keys_are_still_found(scrubber: Scrubber) -> None:
    for prefix in ("sk_live_", "sk-proj-", "whsec_", "rk_live_"):
        key = prefix + secrets.token_urlsafe(24).replace("-", "a").replace("_", "b")
        assert key not in scrubber.scrub_text(f"using {key} now")


@pytest.mark.parametrize(
    "key",
    ["token_quota", "token_threshold", "token_cache_misses", "token_bucket_capacity",
     "api_key_rotations", "password_strength"],
)  # fmt: skip
def test_quantities_under_credential_words_stay(scrubber: Scrubber, key: str) -> None:
    out = scrubber.scrub_event("graph_tool_call", "step.completed", _step(args={key: 1500}))
    assert out.payload["args_resolved"][key] == 1500


# -- a seventh fresh-context attack (2026-12-03, session 13) on the sixth's fixes ------------


@pytest.mark.parametrize("prefix", ["pi_", "sub_", "run_", "ch_", "evt_", "call_", "msg_"])
def test_a_secret_behind_an_object_id_prefix_is_found(
    scrubber: Scrubber, seed: int, prefix: str
) -> None:
    rng = random.Random(seed)
    for _ in range(5):
        body = "".join(rng.choice("abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
                       for _ in range(rng.choice((24, 32, 40))))  # fmt: skip
        if not any(c.isdigit() for c in body):
            continue  # a token of letters only is no secret's shape (an old limit, README)
        token = prefix + body
        for text in (f"my stripe_key is {token}", f"session cookie {token}", token):
            out = scrubber.scrub_text(text)
            assert body not in out, (seed, text, out)


@pytest.mark.parametrize(
    "text",
    [
        "code=10061",
        "Your order code is 482913",
        "your postal code is 06236",
        "Use 8080 to log in via the proxy port",
        "The code is 1024 lines long",
        "INV-010-1234-5678",
        "ORD-010-2024-0001",
        "2024ㅡ07ㅡ25",
        "2024～2025",
        "2019-2024 season",
        "/verify/ORD-2024-0001",
        "/share/report2024Q3",
        "/invite/team-alpha-2024",
        "/api/keys/12345",
        '<add key="LogLevel" value="debug"/>',
    ],
)
def test_learner_data_the_seventh_attack_saw_replaced_stays(scrubber: Scrubber, text: str) -> None:
    assert scrubber.scrub_text(text) == text


@pytest.mark.parametrize(
    "form",
    [
        '<add key="DbPassword" value="{p}"/>',
        '<property name="db.password" value="{p}"/>',
        '<param name="password">{p}</param>',
        "<password><![CDATA[{p}]]></password>",
        "&lt;password&gt;{p}&lt;/password&gt;",
        "https://x.com/cb?state=%7B%22password%22%3A%20%22{p}%22%7D",
        "Authorization: Bearer {p}",
        "java -Djavax.net.ssl.keyStorePassword={p} -jar app.jar",
        "smbclient //srv/share -U bob%{p}",
    ],
)
def test_credentials_in_the_seventh_attacks_forms(scrubber: Scrubber, seed: int, form: str) -> None:
    fake = Faker()
    fake.seed_instance(seed)
    values = [fake.password(length=12, special_chars=False) for _ in range(4)]
    _none_left(scrubber, seed, form, values, "p")


@pytest.mark.parametrize(
    "form",
    [
        "주문자 {l} {f}",
        "신청자 {l} {f}",
        "예약자: {l} {f}",
        "주문자명 {l} {f}",
        "피보험자 {l} {f}",
        "주문자 {l}.{f}",
        "주문자 {l}*{f}",
        "주문자는 {l} {f}입니다",
    ],
)
def test_hangul_names_after_more_labels_and_marks(scrubber: Scrubber, seed: int, form: str) -> None:
    from tracelake.scrub.vocab import KO_SURNAMES_1

    fake = Faker("ko_KR")
    fake.seed_instance(seed)
    tried = 0
    while tried < 10:
        last, first = fake.last_name(), fake.first_name()
        if last not in KO_SURNAMES_1 or len(first) != 2:
            continue  # dictionary words too: these labels announce a name
        tried += 1
        text = form.format(l=last, f=first)
        out = scrubber.scrub_text(text)
        assert first not in out, (seed, text, out)


@pytest.mark.parametrize(
    ("name_key", "value_key"),
    [("field", "v"), ("k", "v"), ("id", "defaultValue"), ("label", "default")],
)
def test_more_name_value_shapes(
    scrubber: Scrubber, seed: int, name_key: str, value_key: str
) -> None:
    fake = Faker()
    fake.seed_instance(seed)
    secret = fake.password(length=14)
    event = _step(args={"vars": [{name_key: "DB_PASSWORD", value_key: secret}]})
    assert secret not in _dump(scrubber, event), seed


def test_lettered_accounts_after_words_of_other_languages(scrubber: Scrubber, seed: int) -> None:
    fake = Faker("en_GB")
    fake.seed_instance(seed)
    for word in ("Konto", "compte", "cuenta", "pay to", "account"):
        value = fake.bban()
        for shown in (value, value.lower()):
            out = scrubber.scrub_text(f"{word} {shown} bitte")
            assert shown not in out, (seed, word, out)
