"""An evaluation corpus nobody tuned to: fresh Faker values, planted in runner events.

``build_pii_corpus(runs, seed)`` draws personal data and credentials from Faker (a maintained
library, eight locales) and plants them in every field kind of both runner families:
graph-tool-call plan goals, tool arguments (flat, nested, in lists, as integers), outputs
(dicts and graph-tool-call's cut JSON text), error messages and ``trace_metadata``; agentlane
user messages, tool-call arguments (JSON strings), delegated tasks and final outputs; in
Korean and English sentence templates. It also plants the values a learner needs (order,
delivery, invoice, claim and goods numbers, SKUs, tool names, HTTP statuses, durations,
ttl/count numbers under token-ish keys, URL paths, Korean commerce words), recorded as
:class:`Safe` with where they must come back unchanged.

The values depend only on the seed; every caller draws a fresh seed per run and prints it.
"""

from __future__ import annotations

import json
import random
import string
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from faker import Faker

LOCALES = ("ko_KR", "en_US", "en_GB", "ja_JP", "zh_CN", "zh_TW", "de_DE", "fr_FR")
BANKS = [
    "KB국민은행",
    "신한은행",
    "우리은행",
    "하나은행",
    "카카오뱅크",
    "농협은행",
    "토스뱅크",
    "IBK기업은행",
    "SC제일은행",
]
ACCOUNT_SHAPES = [(6, 2, 6), (4, 3, 6), (3, 6, 5), (4, 2, 7), (3, 4, 4, 2), (3, 3, 6), (3, 2, 6)]
COMMERCE_WORDS = [
    "배송 조회",
    "환불 요청",
    "교환 신청",
    "주문 취소",
    "반품 접수",
    "결제 실패",
    "쿠폰 적용",
    "재고 확인",
]


@dataclass(frozen=True)
class Planted:
    category: str
    locale: str
    value: str  # as it must never appear in storage (digits only for integer plants)
    as_int: bool = False
    run: int = 0  # the run whose events carry it: PiiCorpus.runs[run]


@dataclass(frozen=True)
class Safe:
    kind: str
    value: str  # must appear unchanged in the scrubbed event it was planted in
    event: int  # index into PiiCorpus.events


@dataclass
class PiiCorpus:
    seed: int
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    planted: list[Planted] = field(default_factory=list)
    safe: list[Safe] = field(default_factory=list)
    goals: list[tuple[str, str]] = field(default_factory=list)  # (template id, goal)
    runs: list[range] = field(default_factory=list)  # event indices of each run


# -- romanised Korean names (Revised Romanization of the Hangul Faker draws) --------------------
_INITIAL = [
    "g",
    "kk",
    "n",
    "d",
    "tt",
    "r",
    "m",
    "b",
    "pp",
    "s",
    "ss",
    "",
    "j",
    "jj",
    "ch",
    "k",
    "t",
    "p",
    "h",
]
_MEDIAL = [
    "a",
    "ae",
    "ya",
    "yae",
    "eo",
    "e",
    "yeo",
    "ye",
    "o",
    "wa",
    "wae",
    "oe",
    "yo",
    "u",
    "wo",
    "we",
    "wi",
    "yu",
    "eu",
    "ui",
    "i",
]
_FINAL = [
    "",
    "k",
    "k",
    "k",
    "n",
    "n",
    "n",
    "t",
    "l",
    "k",
    "m",
    "l",
    "l",
    "l",
    "p",
    "l",
    "m",
    "p",
    "p",
    "t",
    "t",
    "ng",
    "t",
    "t",
    "k",
    "t",
    "p",
    "t",
]
_SURNAME_RR = {
    "김": "Kim",
    "이": "Lee",
    "박": "Park",
    "최": "Choi",
    "정": "Jung",
    "강": "Kang",
    "조": "Cho",
    "윤": "Yoon",
    "장": "Jang",
    "임": "Lim",
    "한": "Han",
    "오": "Oh",
    "서": "Seo",
    "신": "Shin",
    "권": "Kwon",
    "황": "Hwang",
    "안": "Ahn",
    "송": "Song",
    "류": "Ryu",
    "전": "Jeon",
    "홍": "Hong",
    "고": "Ko",
    "문": "Moon",
    "양": "Yang",
    "손": "Son",
    "배": "Bae",
    "백": "Baek",
    "허": "Heo",
    "노": "Noh",
    "심": "Shim",
}


def _romanise(syllables: str) -> str:
    out = []
    for ch in syllables:
        code = ord(ch) - 0xAC00
        if not 0 <= code < 11172:
            continue
        out.append(_INITIAL[code // 588] + _MEDIAL[(code % 588) // 28] + _FINAL[code % 28])
    return "".join(out)


def romanised_korean(hangul_name: str, rng: random.Random) -> str:
    surname = _SURNAME_RR.get(hangul_name[0]) or _romanise(hangul_name[0]).capitalize()
    given = hangul_name[1:]
    parts = [_romanise(c) for c in given]
    style = rng.randrange(3)
    if style == 0:
        return f"{surname} {'-'.join(parts).capitalize()}"  # Kim Min-jun
    if style == 1:
        return f"{''.join(parts).capitalize()} {surname}"  # Minjun Kim
    return f"{surname} {' '.join(p.capitalize() for p in parts)}"  # Kim Min Jun


# -- value generators ------------------------------------------------------------------------
def _luhn_fix(digits: str) -> str:
    total = 0
    for i, d in enumerate(reversed(digits[:-1] + "0")):
        v = int(d) * (2 if i % 2 else 1)
        total += v - 9 if v > 9 else v
    return digits[:-1] + str((10 - total % 10) % 10)


class _Gen:
    def __init__(self, seed: int) -> None:
        # not random.Random(seed): the first Faker is seeded with seed, and the two streams
        # drew the same digits (a goods number G135991921 held a planted passport 135991921)
        self.rng = random.Random(f"pii-corpus-{seed}")
        self.fakers = {loc: Faker(loc) for loc in LOCALES}
        for i, f in enumerate(self.fakers.values()):
            f.seed_instance(seed + i)

    def digits(self, n: int) -> str:
        return "".join(self.rng.choice(string.digits) for _ in range(n))

    def alnum(self, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def name(self, loc: str) -> tuple[str, str]:
        f = self.fakers[loc]
        if loc == "ko_KR" and self.rng.random() < 0.3:
            return "name_ko_romanised", romanised_korean(f.name(), self.rng)
        if loc in ("ja_JP", "zh_CN", "zh_TW") and self.rng.random() < 0.3:
            return f"name_{loc}_romanised", f.romanized_name()
        return f"name_{loc}", f.name()

    def address(self, loc: str) -> str:
        return str(self.fakers[loc].address()).replace("\n", self.rng.choice([", ", " "]))

    def phone(self, loc: str) -> str:
        return str(self.fakers[loc].phone_number())

    def kr_account(self) -> str:
        shape = self.rng.choice(ACCOUNT_SHAPES)
        return "-".join(self.digits(k) for k in shape)

    def iban(self, loc: str) -> str:
        value = str(self.fakers[loc].iban())
        if self.rng.random() < 0.4:
            value = " ".join(value[i : i + 4] for i in range(0, len(value), 4))
        return value

    def card(self, loc: str) -> str:
        raw = (
            str(self.fakers[loc].credit_card_number())
            if self.rng.random() < 0.5
            else self.digits(16)
        )
        if self.rng.random() < 0.7:
            raw = _luhn_fix(raw)
        if len(raw) == 16 and self.rng.random() < 0.6:
            sep = self.rng.choice(["-", " "])
            raw = sep.join(raw[i : i + 4] for i in range(0, 16, 4))
        return raw

    def rrn(self) -> tuple[str, str]:
        value = str(self.fakers["ko_KR"].ssn())
        if self.rng.random() < 0.3:  # a foreign registration number: gender digit 5-8
            value = value[:7] + self.rng.choice("5678") + value[8:]
            return "frn", value
        return "rrn", value

    def passport(self, loc: str) -> str:
        return str(self.fakers[loc].passport_number())

    def ip(self, loc: str) -> str:
        f = self.fakers[loc]
        return str(self.rng.choice([f.ipv4_public(), f.ipv6(), f.ipv4_public()]))

    def api_key(self) -> tuple[str, str]:
        kind = self.rng.choice(["aws", "github", "slack", "openai", "google", "stripe", "jwt"])
        up = string.ascii_uppercase + "234567"
        if kind == "aws":
            return kind, "AKIA" + self.alnum(16, up)
        if kind == "github":
            return kind, self.rng.choice(["ghp_", "gho_", "ghs_", "github_pat_"]) + self.alnum(36)
        if kind == "slack":
            return (
                kind,
                f"xox{self.rng.choice('bpa')}-{self.digits(12)}-{self.digits(12)}-{self.alnum(24)}",
            )
        if kind == "openai":
            return kind, self.rng.choice(["sk-", "sk-proj-"]) + self.alnum(48)
        if kind == "google":
            return kind, "AIza" + self.alnum(35, string.ascii_letters + string.digits + "_-")
        if kind == "stripe":
            return kind, self.rng.choice(["sk_live_", "sk_test_", "rk_live_"]) + self.alnum(24)
        b64 = string.ascii_letters + string.digits + "_-"
        return kind, f"eyJ{self.alnum(20, b64)}.eyJ{self.alnum(40, b64)}.{self.alnum(43, b64)}"

    def id_shaped_secret(self) -> tuple[str, str]:
        """A credential that looks like an id: an AWS secret key ("/" and "+" in it) or a
        provider key in lower case only."""
        if self.rng.random() < 0.5:
            while True:
                key = self.alnum(40, string.ascii_letters + string.digits + "/+")
                if sum(c.isupper() for c in key) >= 4 and sum(c.islower() for c in key) >= 4:
                    return "aws_secret", key
        prefix = self.rng.choice(["ghp_", "gho_", "sk-proj-", "sk_live_", "xoxb-", "glpat-"])
        return "api_key_lower", prefix + self.alnum(36, string.ascii_lowercase + string.digits)

    def dob(self, loc: str) -> str:
        d = self.fakers[loc].date_of_birth(minimum_age=18, maximum_age=90)
        return self.rng.choice(
            [
                d.isoformat(),
                d.strftime("%d/%m/%Y"),
                d.strftime("%B %d, %Y"),
                d.strftime("%Y.%m.%d"),
                f"{d.year}년 {d.month}월 {d.day}일",
                f"{d.year}年{d.month}月{d.day}日",
                d.strftime("%d.%m.%Y"),
            ]
        )


# -- the corpus ------------------------------------------------------------------------------
def _apart(make: Callable[[], str], planted: list[str]) -> str:
    """A value from *make* that holds none of the *planted* values (6+ characters)."""
    value = make()
    while any(v in value for v in planted if len(v) >= 6):
        value = make()
    return value


def build_pii_corpus(runs: int, seed: int) -> PiiCorpus:
    g = _Gen(seed)
    rng = g.rng
    corpus = PiiCorpus(seed=seed)

    def plant(category: str, loc: str, value: str, as_int: bool = False) -> str:
        corpus.planted.append(Planted(category, loc, value, as_int, len(corpus.runs)))
        return value

    for r in range(runs):
        first = len(corpus.events)
        loc = rng.choice(LOCALES)
        cat, name = g.name(loc)
        name = plant(cat, loc, name)
        kname = plant("name_ko_KR", "ko_KR", g.fakers["ko_KR"].name())
        phone = plant(f"phone_{loc}", loc, g.phone(loc))
        kphone = plant("phone_ko_KR", "ko_KR", g.phone("ko_KR"))
        phone_digits = "".join(c for c in g.phone(loc) if c.isdigit())
        phone_int = int(phone_digits) if len(phone_digits.lstrip("0")) >= 8 else None
        if phone_int is not None:
            plant(f"phone_{loc}", loc, str(phone_int), as_int=True)
        email = plant("email", loc, str(g.fakers[loc].email()))
        addr = plant(f"address_{loc}", loc, g.address(loc))
        kaddr = plant("address_ko_KR", "ko_KR", g.address("ko_KR"))
        acct = plant("bank_account_ko", "ko_KR", g.kr_account())
        iban = plant("iban", loc, g.iban(loc))
        card = plant("card", loc, g.card(loc))
        rrn_kind, rrn = g.rrn()
        rrn = plant(rrn_kind, "ko_KR", rrn)
        passport = plant("passport", loc, g.passport(loc))
        ip = plant("ip", loc, g.ip(loc))
        key_kind, key = g.api_key()
        key = plant("api_key", key_kind, key)
        bearer = plant("bearer", "-", g.alnum(40, string.ascii_letters + string.digits + "._-"))
        cookie = plant("cookie", "-", g.alnum(32))
        url_pw = plant("url_credential", "-", g.alnum(14) + "!")
        url_tok = plant("url_credential", "-", g.alnum(28))
        dob = plant("date_of_birth", loc, g.dob(loc))
        bank = rng.choice(BANKS)
        ssn = plant("us_ssn", "en_US", str(g.fakers["en_US"].ssn()))
        email_enc = plant("email_urlencoded", loc, email.replace("@", "%40"))
        id_secret_kind, id_secret = g.id_shaped_secret()
        id_secret = plant(id_secret_kind, "-", id_secret)
        # Personal values where an id belongs (a caller can put anything under request_id);
        # and ids that must come back as they are.
        under_ids = [name, kname, phone, email, email_enc, ssn, addr, card, rrn, id_secret]
        rng.shuffle(under_ids)
        safe_ids = {
            "trace_id": str(uuid.UUID(int=rng.getrandbits(128))),
            "span_id": _hex_span_id(rng),
            "correlation_id": f"corr-{seed}-{r}-{g.digits(6)}",
        }

        order = f"ORD-2026{rng.randrange(1, 13):02d}{rng.randrange(1, 29):02d}-{g.digits(4)}"
        # safe numbers that hold no planted value of this run
        run_values = [p.value for p in corpus.planted if p.run == len(corpus.runs)]
        dlv = _apart(lambda: "DLV" + g.digits(12), run_values)
        invoice = _apart(lambda: g.digits(12), run_values)
        goods = _apart(lambda: f"G{g.digits(9)}", run_values)
        claim = _apart(lambda: f"CLM{g.digits(10)}", run_values)
        sku = f"SKU-{g.alnum(2, string.ascii_uppercase)}-{g.digits(4)}"
        legacy = int("2026" + f"{rng.randrange(1, 13):02d}{rng.randrange(1, 29):02d}" + g.digits(5))
        tool = rng.choice(
            ["getOrderDetail", "refundOrder", "updateCustomer", "lookup_customer", "send_sms"]
        )
        status = rng.choice([400, 401, 403, 404, 409, 422, 429, 500, 502, 503])
        ttl = rng.choice([300, 900, 3600, 86400])
        duration = rng.randrange(5, 9000)
        path = f"/api/v1/orders/{order}/refund/{rng.choice(['items', 'status', 'history'])}"
        words = rng.choice(COMMERCE_WORDS)

        goal_templates = [
            ("ko_refund_honorific", f"{kname} 고객님께 환불 안내"),
            ("ko_refund_account", f"{kname}님 신한은행 {acct} 계좌로 환불"),
            ("en_invoice", f"Send the invoice to {name} at {addr}"),
            ("ko_orderer", f"주문자 {kname} ({kphone}) 배송 조회"),
            ("en_card", f"{name} ({email}) asked to update card {card}"),
            ("ko_address", f"{kaddr}로 배송 조회 요청, 연락처 {kphone}"),
            ("ko_dob", f"{kname} 고객 본인확인: 생년월일 {dob}, 여권 {passport}"),
            ("en_refund", f"Refund order {order} to {iban} for {name}, phone {phone}"),
        ]
        tid, goal = rng.choice(goal_templates)
        corpus.goals.append((tid, goal))
        pid = f"plan-{seed}-{r}"
        meta = {
            "collection_id": "pii-eval",
            "customer_email": email,
            "request_id": f"req-{r}",
            "notes": f"{name} / {kphone}",
            "contact": phone_int or 0,
            "case_id": under_ids[4],
        }
        note = rng.choice(
            [
                f"{kname} 고객 요청, 생년월일 {dob}",
                f"customer {name} born {dob}, passport no. {passport}",
                f"{kname}님 주민등록번호 {rrn}",
                f"call {phone} or {kphone}",
            ]
        )
        output = {
            "orderNo": order,
            "deliveryNo": dlv,
            "invoiceNo": invoice,
            "sku": sku,
            "goodsNo": goods,
            "claimNo": claim,
            "legacyOrderNo": legacy,
            "customer": {
                "displayName": name,
                "shipTo": addr,
                "iban": iban,
                "lastLogin": {"ip": ip},
                "memo": f"card {card} / RRN {rrn}",
                "tags": [kname, words, phone],
            },
            "history": [
                {"event": "delivered", "at": "2026-07-25T10:15:00+09:00", "by": name},
                {"event": "note", "text": f"{kname}님 {kaddr} 부재중"},
            ],
            "token_ttl_s": ttl,
            "tokenCount": rng.randrange(10, 5000),
            "refs": {
                **safe_ids,
                "request_id": under_ids[0],
                "run_id": under_ids[1],
                "id": under_ids[2],
                "message_id": under_ids[3],
                "callbackUrl": f"https://hooks.example.com/cb?email={email_enc}&v=2",
            },
        }
        base = len(corpus.events)
        gtc: list[dict[str, Any]] = [
            {
                "type": "plan.started",
                "plan_id": pid,
                "goal": goal,
                "step_count": 2,
                "stage": "runner",
                "trace_metadata": meta,
            },
            {
                "type": "step.started",
                "plan_id": pid,
                "step_id": "s1",
                "tool": tool,
                "index": 1,
                "total": 2,
                "stage": "runner",
                "trace_metadata": meta,
                "args_resolved": {
                    "customerName": name,
                    "contactPhone": phone,
                    "note": note,
                    "accountNo": acct,
                    "orderNo": order,
                    "contact": phone_int,
                    "recipients": [kname, email],
                    "requestId": under_ids[5],
                    "traceId": under_ids[6],
                    "aws_key_id": under_ids[7],
                    "profile": {"address": {"line1": addr}, "comment": f"{name} prefers SMS"},
                },
            },
            {
                "type": "step.completed",
                "plan_id": pid,
                "step_id": "s1",
                "tool": tool,
                "duration_ms": duration,
                "output_size": 512,
                "stage": "runner",
                "trace_metadata": meta,
                "output_preview": output
                if rng.random() < 0.6
                else {"_preview": json.dumps(output, ensure_ascii=False)[:512], "_truncated": True},
            },
            {
                "type": "step.failed",
                "plan_id": pid,
                "step_id": "s2",
                "tool": "chargeCard",
                "duration_ms": 40,
                "stage": "runner",
                "trace_metadata": meta,
                "error": {
                    "kind": "tool",
                    "exception_type": "HTTPError",
                    "message": f"HTTP {status} for {email} at {path}?page=2&access_token={url_tok} "
                    f"(Authorization: Bearer {bearer}; Cookie: sessionid={cookie}) from {ip}",
                },
            },
            {
                "type": "plan.aborted",
                "plan_id": pid,
                "failed_step": "s2",
                "total_duration_ms": duration + 40,
                "stage": "runner",
                "trace_steps": [],
                "error": {
                    "kind": "tool",
                    "exception_type": "HTTPError",
                    "message": f"HTTP {status}: https://svc:{url_pw}@api.example.com{path} key={key}",
                },
                "trace_metadata": meta,
            },
        ]
        for e in gtc:
            corpus.events.append(("graph_tool_call", e))
        for kind, value, offset in [
            ("goods_no", goods, 2),
            ("claim_no", claim, 2),
            ("order_no", order, 2),
            ("delivery_no", dlv, 2),
            ("invoice_no", invoice, 2),
            ("sku", sku, 2),
            ("tool", tool, 1),
            ("http_status", str(status), 3),
            ("url_path", path, 3),
            ("duration_ms", str(duration), 2),
            ("token_ttl", str(ttl), 2),
            ("legacy_order_no", str(legacy), 2),
            *(("safe_id", v, 2) for v in safe_ids.values()),
        ]:
            if kind in (
                "order_no",
                "delivery_no",
                "invoice_no",
                "sku",
                "token_ttl",
                "legacy_order_no",
                "safe_id",
            ) and ("_truncated" in gtc[2]["output_preview"]):
                continue  # a cut preview may drop the key
            corpus.safe.append(Safe(kind, value, base + offset))
        if tid in ("ko_address", "ko_orderer"):
            corpus.safe.append(Safe("commerce_words", "배송 조회", base))

        tid_al = f"pii:{seed}-{r}"
        common = {
            "task_name": "support",
            "task_id": under_ids[8] if rng.random() < 0.3 else tid_al,
            "parent_task_id": None,
            "is_root": True,
        }
        delegate = {
            "task": rng.choice(
                [
                    f"Write to {kname} <{email}> about {acct}",
                    f"Freeze card {card} for {name} (RRN {rrn}, phone {kphone})",
                    f"{kname} 고객에게 {bank} {acct} 환불 안내, 송장번호 {invoice}",
                ]
            ),
            "order": order,
        }
        agent: list[dict[str, Any]] = [
            {"type": "agent_start", "payload": {**common, "kind": "agent_start"}},
            {
                "type": "llm_start",
                "payload": {
                    **common,
                    "kind": "llm_start",
                    "messages": [
                        {"role": "system", "content": "You are a support agent."},
                        {
                            "role": "user",
                            "content": f"{name} ({phone}, {addr}) wants a refund to {iban}; card {card}. "
                            f"토큰 {key}",
                        },
                    ],
                },
            },
            {
                "type": "tool_start",
                "payload": {
                    **common,
                    "kind": "tool_start",
                    "tool_call": {
                        "id": under_ids[9] if rng.random() < 0.3 else f"call_{r}",
                        "type": "function",
                        "function": {
                            "name": "delegate",
                            "arguments": json.dumps(delegate, ensure_ascii=False),
                        },
                    },
                },
            },
            {
                "type": "agent_end",
                "payload": {
                    **common,
                    "kind": "agent_end",
                    "result": {
                        "final_output": f"{kname}님께 {kphone}로 재안내 필요합니다. 주문 {order} {words} 완료."
                    },
                },
            },
        ]
        base = len(corpus.events)
        for e in agent:
            corpus.events.append(("agentlane", e))
        corpus.safe.append(Safe("order_no", order, base + 2))
        corpus.safe.append(Safe("order_no", order, base + 3))
        corpus.safe.append(Safe("commerce_words", words, base + 3))
        corpus.runs.append(range(first, len(corpus.events)))
    return corpus


def leaked(planted: Planted, dumps: tuple[str, str]) -> bool:
    """Whether *planted* is in *dumps* (a JSON dump as UTF-8 text and \\u-escaped)."""
    import re

    value = planted.value
    raw, escaped = dumps
    if value.replace("-", "").replace(" ", "").isdigit():
        pattern = re.compile(r"(?<!\d)" + re.escape(value) + r"(?!\d)")
        return bool(pattern.search(raw) or pattern.search(escaped))
    forms = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    return any(f in raw or f in escaped for f in forms)


def _hex_span_id(rng: random.Random) -> str:
    """16 hex digits with a letter: 1 in ~1,800 draws is digits alone, which an id key reads as
    a card or phone number (pseudonymised, by design) and the check would call a lost id."""
    while True:
        value = f"{rng.getrandbits(64):016x}"
        if not value.isdigit():
            return value
