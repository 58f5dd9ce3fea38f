"""A planted-secret corpus from the REAL graph-tool-call PlanRunner (Korean e-commerce tools).

``build_gtc_corpus(runs=..., seed=...)`` drives ``PlanRunner.run_stream`` through success,
abort, retry, argument coercion (``tools=`` + ``validate_args="coerce"``), binding recovery
(``binding_recovery=True``) and recover-mode skip, with personal data and credentials in
arguments, outputs, exception messages, goals and ``trace_metadata``. It returns
``(events, planted)``: events as ``dataclasses.asdict`` dicts, and the planted values by
kind. Deterministic for a seed, fast (no sleeps), reusable by store and sink tests.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import asdict
from typing import Any

from graph_tool_call.core.tool import ToolParameter, ToolSchema
from graph_tool_call.plan import Plan, PlanRunner, PlanStep, RetryPolicy

Event = dict[str, Any]
Planted = dict[str, list[str]]

SURNAMES = "김이박최정강조윤장임한오서신권황"
GIVEN = [
    "민준",
    "서연",
    "도윤",
    "하은",
    "지호",
    "수아",
    "예준",
    "지민",
    "현우",
    "채원",
    "시우",
    "다은",
]
ROADS = [
    ("서울특별시", "강남구", "테헤란로"),
    ("부산광역시", "해운대구", "센텀중앙로"),
    ("경기도", "성남시", "판교역로"),
    ("대전광역시", "유성구", "대학로"),
]
# Values that must survive scrubbing unchanged (ids, codes, dates, amounts, tool names).
SAFE_VALUES = [
    "ORD-20260725-0001",
    "2026072512345",
    "2026-07-25",
    "2026-07-25T10:15:00+09:00",
    "getMember",
    "getOrderDetail",
    "getDeliveryStatus",
    "sendNotification",
    "refundOrder",
    "plan-commerce-",
    "s1",
    "s2",
    "s3",
    "129000",
    "PAID",
    "auth_failed",
    "orders-api",
]
TOOLS = {
    "sendNotification": ToolSchema(
        name="sendNotification",
        parameters=[
            ToolParameter(name="contact", type="integer", required=True),
            ToolParameter(name="rcvrTelNo", type="integer"),
            ToolParameter(name="channel", type="string", enum=["sms", "kakao", "email"]),
            ToolParameter(name="orderNo", type="string"),
        ],
    )
}


def _luhn_card(rng: random.Random) -> str:
    digits = [4] + [rng.randrange(10) for _ in range(14)]
    total = 0
    for i, d in enumerate(reversed(digits)):
        d2 = d * 2 if i % 2 == 0 else d
        total += d2 - 9 if d2 > 9 else d2
    digits.append((10 - total % 10) % 10)
    s = "".join(map(str, digits))
    return f"{s[:4]}-{s[4:8]}-{s[8:12]}-{s[12:]}"


def _rrn(rng: random.Random) -> str:
    body = f"{rng.randrange(60, 99)}{rng.randrange(1, 13):02d}{rng.randrange(1, 29):02d}"
    body += str(rng.choice([1, 2])) + "".join(str(rng.randrange(10)) for _ in range(5))
    weights = [2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5]
    check = (11 - sum(int(c) * w for c, w in zip(body, weights, strict=True)) % 11) % 10
    return f"{body[:6]}-{body[6:]}{check}"


def _token(rng: random.Random, n: int, alphabet: str) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _person(rng: random.Random, i: int) -> dict[str, str]:
    name = rng.choice(SURNAMES) + rng.choice(GIVEN)
    mid = f"{rng.randrange(1000, 9999)}"
    last = f"{rng.randrange(1000, 9999)}"
    city, gu, road = rng.choice(ROADS)
    aws = "AKIA" + _token(rng, 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
    return {
        "name": name,
        "phone": f"010-{mid}-{last}",
        "phone_digits": f"010{mid}{last}",
        "phone_int": str(int(f"010{mid}{last}")),
        "email": f"user{i}.{rng.randrange(100, 999)}@example-mail.co.kr",
        "address": f"{city} {gu} {road} {rng.randrange(1, 400)}, {rng.randrange(100, 2000)}호",
        "rrn": _rrn(rng),
        "card": _luhn_card(rng),
        "member_id": f"M{rng.randrange(10**9, 10**10)}",
        "session": _token(rng, 24, _B64),
        "bearer": "sat_" + _token(rng, 36, _B64),
        "opaque": "pk_" + _token(rng, 32, _B64),
        "aws": aws,
        "ip": f"203.0.113.{rng.randrange(2, 250)}",
        "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ"
        + _token(rng, 24, _B64)
        + "."
        + _token(rng, 43, _B64),
    }


PLANTED_KINDS = {
    "korean_name": ["name"],
    "phone": ["phone", "phone_digits", "phone_int"],
    "email": ["email"],
    "address": ["address"],
    "rrn": ["rrn"],
    "card": ["card"],
    "raw_user_id": ["member_id"],
    "spring_session": ["session"],
    "bearer_token": ["bearer"],
    "opaque_token": ["opaque"],
    "aws_access_key": ["aws"],
    "ip_address": ["ip"],
    "jwt": ["jwt"],
}


def _dispatch(
    tools: dict[str, Callable[[dict[str, Any]], Any]],
) -> Callable[[str, dict[str, Any]], Any]:
    """PlanRunner's tool callback: call the named tool with its arguments."""

    def call(name: str, args: dict[str, Any]) -> Any:
        return tools[name](args)

    return call


def _tools(p: dict[str, str], order_no: str) -> dict[str, Callable[[dict[str, Any]], Any]]:
    order = {
        "orderNo": order_no,
        "ordDt": "2026-07-25",
        "orderedAt": "2026-07-25T10:15:00+09:00",
        "totalAmt": 129000,
        "status": "PAID",
        "legacyOrderNo": 2026072512345,
        "receiver": {"rcvrNm": p["name"], "rcvrTelNo": p["phone"], "rcvrAddr": p["address"]},
        "payment": {"method": "CARD", "cardNo": p["card"], "approvedAt": "2026-07-25"},
        "memo": f"배송 전 {p['name']}님께 {p['phone']}로 연락 바랍니다",
        "items": [{"goodsNo": f"G{k:05d}", "goodsNm": "무선 이어폰", "qty": 1} for k in range(8)],
    }
    member = {
        "mbrId": p["member_id"],
        "custNm": p["name"],
        "email": p["email"],
        "hpNo": p["phone"],
        "addr": p["address"],
        "rrn": p["rrn"],
        "grade": "VIP",
        "joinedAt": "2024-01-02",
        "authToken": p["jwt"],
        "lastLoginIp": p["ip"],
    }

    def delivery(args: dict[str, Any]) -> Any:
        raise RuntimeError(
            f"DeliveryAPI HTTP 404 Not Found: no shipment for {p['name']} {p['phone']} at "
            f"{p['address']} (client {p['ip']}) reason=unsatisfied_field"
        )

    def refund(args: dict[str, Any]) -> Any:
        raise PermissionError(
            f"auth_failed: HTTP 401 from refund API; sent Cookie SESSION={p['session']}, "
            f"partner key {p['opaque']}, token {p['jwt']}, S3 key {p['aws']}, "
            f"Authorization: Bearer {p['bearer']}, card {p['card']}, RRN {p['rrn']}"
        )

    return {
        "getMember": lambda args: member,
        "getOrderDetail": lambda args: order,
        "getDeliveryStatus": delivery,
        "sendNotification": lambda args: {"sent": True, "to": args.get("contact"), "id": "N-1"},
        "refundOrder": refund,
        "getReceiver": lambda args: {"order": {"receiver": {"rcvrTelNo": p["phone"]}}},
    }


def _plans(p: dict[str, str], i: int, order_no: str) -> list[tuple[str, Plan, dict[str, Any]]]:
    goal = f"{p['name']} 고객({p['phone']}, {p['email']}) 주문 {order_no} 배송 조회"
    pid = f"plan-commerce-{i:04d}"
    return [
        (
            "success",
            Plan(
                id=pid + "-ok",
                goal=goal,
                steps=[
                    PlanStep(id="s1", tool="getMember", args={"mbrId": "${input.mbrId}"}),
                    PlanStep(
                        id="s2",
                        tool="getOrderDetail",
                        args={"orderNo": order_no, "custNm": "${s1.custNm}", "hpNo": "${s1.hpNo}"},
                    ),
                    PlanStep(
                        id="s3",
                        tool="sendNotification",
                        args={
                            "contact": p["phone_digits"],
                            "rcvrTelNo": p["phone_digits"],
                            "channel": "SMS ",
                            "orderNo": "${s2.orderNo}",
                            "message": f"{p['name']}님 주문 {order_no} 배송 시작 ({p['address']})",
                        },
                    ),
                ],
            ),
            {"validate_args": "coerce", "tools": TOOLS},
        ),
        (
            "abort",
            Plan(
                id=pid + "-abort",
                goal=goal,
                steps=[
                    PlanStep(id="s1", tool="getOrderDetail", args={"orderNo": order_no}),
                    PlanStep(
                        id="s2",
                        tool="getDeliveryStatus",
                        args={"orderNo": "${s1.orderNo}", "hpNo": p["phone"]},
                    ),
                ],
            ),
            {},
        ),
        (
            "retry",
            Plan(
                id=pid + "-retry",
                goal=goal,
                steps=[
                    PlanStep(
                        id="s1",
                        tool="refundOrder",
                        retryable=True,
                        args={"orderNo": order_no, "email": p["email"]},
                    ),
                ],
            ),
            {"on_error": "retry", "retry_policy": RetryPolicy(max_attempts=3, backoff_base_ms=0)},
        ),
        (
            "binding",
            Plan(
                id=pid + "-binding",
                goal=goal,
                steps=[
                    PlanStep(id="s1", tool="getReceiver", args={"orderNo": order_no}),
                    PlanStep(
                        id="s2",
                        tool="sendNotification",
                        args={"contact": "${s1.rcvrTelNo}", "orderNo": order_no},
                    ),
                ],
            ),
            {"binding_recovery": True},
        ),
        (
            "skip",
            Plan(
                id=pid + "-skip",
                goal=goal,
                steps=[
                    PlanStep(id="s1", tool="getDeliveryStatus", args={"orderNo": order_no}),
                    PlanStep(id="s2", tool="getOrderDetail", args={"orderNo": order_no}),
                ],
            ),
            {"on_error": "recover"},
        ),
    ]


def iter_gtc_runs(
    runs: int = 2,
    seed: int = 7,
    person: Callable[[random.Random, int], dict[str, str]] | None = None,
) -> Iterator[tuple[str, PlanRunner, Plan, dict[str, Any], dict[str, Any], dict[str, str]]]:
    """``(scenario, runner, plan, input_context, trace_metadata, person)`` for each run.

    *person* makes customer *i*'s personal data (default: the fixed Korean name pools);
    ``tests/corpora/realistic.py`` passes a Faker-based one."""
    rng = random.Random(seed)
    make_person = person or _person
    for i in range(runs):
        p = make_person(rng, i)
        order_no = f"ORD-20260725-{i + 1:04d}"
        tools = _tools(p, order_no)
        meta = {
            "collection_id": "orders-api",
            "case_id": f"case-{i:03d}",
            "request_id": f"req-{i:06d}",
            "auth_readiness": {"has_token": True, "header_names": ["Authorization", "Cookie"]},
            "user_id": p["member_id"],
            "client_ip": p["ip"],
            "operator_email": p["email"],
            "debug_cookie": f"SESSION={p['session']}",
        }
        for scenario, plan, opts in _plans(p, i, order_no):
            runner = PlanRunner(_dispatch(tools), _sleep=lambda _s: None, **opts)
            yield scenario, runner, plan, {"mbrId": p["member_id"]}, meta, p


def build_gtc_corpus(runs: int = 2, seed: int = 7) -> tuple[list[Event], Planted]:
    """Run every scenario for *runs* customers; ``(events, planted values by kind)``."""
    events: list[Event] = []
    planted: Planted = {kind: [] for kind in PLANTED_KINDS}
    for _scenario, runner, plan, ctx, meta, person in iter_gtc_runs(runs, seed):
        for event in runner.run_stream(plan, input_context=ctx, trace_metadata=meta):
            events.append(asdict(event))
        for kind, fields in PLANTED_KINDS.items():
            for f in fields:
                if person[f] not in planted[kind]:
                    planted[kind].append(person[f])
    return events, planted


def all_planted(planted: Planted) -> list[str]:
    return sorted({v for values in planted.values() for v in values})
