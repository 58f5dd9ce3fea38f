"""Demo plans driven through graph-tool-call's real ``PlanRunner``.

Used by ``tracelake demo`` (the README's first command) and by the tests as a corpus of real
runner events. Each scenario is a small Korean e-commerce plan whose tools answer from an
in-memory backend; failures are raised the way an HTTP adapter would raise them. Together they
cover every event type of seeds 000/002: success, binding failure, 401/403, 429, 5xx, timeout,
network error, retry, skip, repair, coercion and binding repair.

graph-tool-call is an optional dependency (``pip install tracelake[demo]``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any


class HTTPStatusError(Exception):
    """What an HTTP adapter raises for a non-2xx answer."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status} {message}")
        self.status = status


ORDERS = {
    "ORD-20260725-0001": {
        "orderNo": "ORD-20260725-0001",
        "status": "SHIPPED",
        "amount": 45900,
        "orderedAt": "2026-07-25T10:31:00+09:00",
        "receiver": {
            "rcvrNm": "김서연",
            "telNo": "010-2233-4455",
            "addr": "서울특별시 강남구 테헤란로 152",
        },
        "items": [{"sku": "SKU-1001", "qty": 2}, {"sku": "SKU-2002", "qty": 1}],
    },
    "ORD-20260725-0002": {
        "orderNo": "ORD-20260725-0002",
        "status": "PAID",
        "amount": 12000,
        "orderedAt": "2026-07-25T11:02:00+09:00",
        "receiver": {
            "rcvrNm": "박지훈",
            "telNo": "010-9988-7766",
            "addr": "부산광역시 해운대구 센텀중앙로 79",
        },
        "items": [{"sku": "SKU-3003", "qty": 1}],
    },
}


@dataclass
class Backend:
    """Tool implementations; ``failures`` maps a tool name to exceptions to raise, in order."""

    failures: dict[str, list[Exception]] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def __call__(self, tool: str, args: dict[str, Any]) -> Any:
        self.calls.append((tool, dict(args)))
        queue = self.failures.get(tool)
        if queue:
            raise queue.pop(0)
        if tool == "searchOrders":
            return {
                "orders": [{"orderNo": no, "status": o["status"]} for no, o in ORDERS.items()],
                "total": len(ORDERS),
            }
        if tool == "getOrderDetail":
            return ORDERS[args["orderNo"]]
        if tool == "getShipment":
            return {
                "orderNo": args["orderNo"],
                "carrier": "CJ",
                "trackingNo": "6890-1234-5678",
                "status": "IN_TRANSIT",
            }
        if tool == "getCustomer":
            return {
                "custNo": "C-778812",
                "custNm": "김서연",
                "email": "seoyeon.kim@example.co.kr",
                "hpNo": "010-2233-4455",
                "grade": "VIP",
            }
        if tool == "recommendCoupons":
            return {"coupons": [{"couponId": "CPN-10", "rate": 10}]}
        if tool == "listClaims":
            return {
                "data": {"claims": [{"claimNo": "CLM-5501", "state": args.get("state")}]},
                "page": int(args.get("page", 1)),
            }
        if tool == "getLegacyOrder":
            return {"result": {"order": {"orderNo": "ORD-20260725-0001", "status": "SHIPPED"}}}
        raise HTTPStatusError(404, f"no such tool {tool}")


@dataclass
class Scenario:
    name: str
    goal: str
    steps: list[dict[str, Any]]
    runner: dict[str, Any] = field(default_factory=dict)
    failures: Callable[[], dict[str, list[Exception]]] = dict
    input_context: dict[str, Any] = field(default_factory=dict)
    output_binding: str | None = None


def _steps_detail(first: str = "${s1.orders[0].orderNo}") -> list[dict[str, Any]]:
    return [
        {"id": "s1", "tool": "searchOrders", "args": {"period": "7d"}},
        {"id": "s2", "tool": "getOrderDetail", "args": {"orderNo": first}, "retryable": True},
    ]


def scenarios() -> list[Scenario]:
    """The demo corpus: one scenario per behaviour the store and projections must handle."""
    retry = {"on_error": "retry", "retry": {"max_attempts": 3, "retry_all": True}}
    return [
        Scenario("order_detail", "최근 주문 상세 보여줘", _steps_detail()),
        Scenario(
            "shipment",
            "주문 ORD-20260725-0001 배송 조회",
            [{"id": "s1", "tool": "getShipment", "args": {"orderNo": "${input.orderNo}"}}],
            input_context={"orderNo": "ORD-20260725-0001"},
        ),
        Scenario("binding_missing", "최근 주문 상세 보여줘", _steps_detail("${s1.order.orderNo}")),
        Scenario(
            "auth_403",
            "고객 정보 조회",
            [{"id": "s1", "tool": "getCustomer", "args": {"custNo": "C-778812"}}],
            failures=lambda: {"getCustomer": [HTTPStatusError(403, "Forbidden: token expired")]},
        ),
        Scenario(
            "auth_401",
            "고객 정보 조회",
            [{"id": "s1", "tool": "getCustomer", "args": {"custNo": "C-778812"}}],
            failures=lambda: {"getCustomer": [HTTPStatusError(401, "Unauthorized")]},
        ),
        Scenario(
            "rate_limited_429",
            "최근 주문 상세 보여줘",
            _steps_detail(),
            failures=lambda: {"searchOrders": [HTTPStatusError(429, "Too Many Requests")]},
        ),
        Scenario(
            "server_503_retried",
            "최근 주문 상세 보여줘",
            _steps_detail(),
            runner=retry,
            failures=lambda: {"getOrderDetail": [HTTPStatusError(503, "Service Unavailable")] * 2},
        ),
        Scenario(
            "server_500_exhausted",
            "최근 주문 상세 보여줘",
            _steps_detail(),
            runner=retry,
            failures=lambda: {
                "getOrderDetail": [HTTPStatusError(500, "Internal Server Error")] * 3
            },
        ),
        Scenario(
            "timeout",
            "주문 ORD-20260725-0002 배송 조회",
            [{"id": "s1", "tool": "getShipment", "args": {"orderNo": "ORD-20260725-0002"}}],
            failures=lambda: {"getShipment": [TimeoutError("read timed out after 5000 ms")]},
        ),
        Scenario(
            "network_error",
            "주문 ORD-20260725-0002 배송 조회",
            [{"id": "s1", "tool": "getShipment", "args": {"orderNo": "ORD-20260725-0002"}}],
            failures=lambda: {
                "getShipment": [ConnectionError("connection refused by api.shop.local")]
            },
        ),
        Scenario(
            "skip_unconsumed",
            "최근 주문과 쿠폰",
            [
                *_steps_detail(),
                {"id": "s3", "tool": "recommendCoupons", "args": {"grade": "VIP"}},
                {"id": "s4", "tool": "getShipment", "args": {"orderNo": "${s2.orderNo}"}},
            ],
            runner={"on_error": "recover"},
            failures=lambda: {"recommendCoupons": [HTTPStatusError(502, "Bad Gateway")]},
        ),
        Scenario(
            "repaired",
            "최근 주문 상세 보여줘",
            _steps_detail(),
            runner={"on_error": "recover", "repair": True},
            output_binding="${s2.status}",
            failures=lambda: {"getOrderDetail": [HTTPStatusError(500, "Internal Server Error")]},
        ),
        Scenario(
            "coerced",
            "진행중 클레임 목록",
            [{"id": "s1", "tool": "listClaims", "args": {"state": "IN PROGRESS", "page": "2"}}],
            runner={"coerce": True},
        ),
        Scenario(
            "binding_repaired",
            "레거시 주문 배송 조회",
            [
                {"id": "s1", "tool": "getLegacyOrder", "args": {}},
                {"id": "s2", "tool": "getShipment", "args": {"orderNo": "${s1.order.orderNo}"}},
            ],
            runner={"binding_recovery": True},
        ),
    ]


def run_scenario(
    scenario: Scenario, trace_metadata: dict[str, Any] | None = None, plan_id: str | None = None
) -> Iterator[Any]:
    """Yield the real PlanRunner's event objects for one scenario."""
    from graph_tool_call.core.tool import ToolParameter, ToolSchema
    from graph_tool_call.plan import Plan, PlanRunner, PlanStep, RetryPolicy
    from graph_tool_call.plan.repair import PlanRepairer, RepairResult

    class _SwapRepairer(PlanRepairer):
        """Swaps the failed getOrderDetail for the legacy endpoint (no synthesizer needed)."""

        def __init__(self) -> None:
            self.max_repairs = 1

        def repair(
            self,
            plan: Any,
            failed_step_id: str,
            error: Any,
            completed: Any,
            *,
            already_excluded: Any = None,
        ) -> Any:
            new = Plan(
                id=plan.id + "-r1",
                goal=plan.goal,
                steps=[PlanStep(id="s1", tool="getLegacyOrder", args={})],
            )
            return RepairResult(plan=new, excluded_tools={"getOrderDetail"})

    cfg = scenario.runner
    kwargs: dict[str, Any] = {"on_error": cfg.get("on_error", "abort")}
    if "retry" in cfg:
        kwargs["retry_policy"] = RetryPolicy(backoff_base_ms=0, **cfg["retry"])
    if cfg.get("repair"):
        kwargs["repairer"] = _SwapRepairer()
    if cfg.get("coerce"):
        kwargs["validate_args"] = "coerce"
        kwargs["tools"] = {
            "listClaims": ToolSchema(
                name="listClaims",
                parameters=[
                    ToolParameter(
                        name="state", type="string", enum=["open", "in_progress", "closed"]
                    ),
                    ToolParameter(name="page", type="integer"),
                ],
            )
        }
    if cfg.get("binding_recovery"):
        kwargs["binding_recovery"] = True
    plan = Plan(
        id=plan_id or f"plan-{scenario.name}",
        goal=scenario.goal,
        steps=[PlanStep(**s) for s in scenario.steps],
        output_binding=scenario.output_binding,
    )
    runner = PlanRunner(Backend(failures=scenario.failures()), **kwargs)
    meta = {"collection_id": "orders-api", "case_id": f"case-{scenario.name}"}
    meta.update(trace_metadata or {})
    yield from runner.run_stream(
        plan, input_context=scenario.input_context or None, trace_metadata=meta
    )
