"""Issue 15 case 7: the real agentlane 0.22 runtime streamed through ``sink.atap()``.

``DefaultAgent.run_events()`` with a scripted model (agentlane's own ``Model`` interface, the
way agentlane's tests script one): tool calls, lineage, approvals, handoffs, and an event whose
``to_dict()`` raises. agentlane needs Python 3.12; the main 3.11 run skips this module (loudly),
and ``.ci/agentlane.sh`` runs it in a 3.12 venv with ``TRACELAKE_REQUIRE_AGENTLANE=1``.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from faker import Faker

from tracelake.sink import TraceSink
from tracelake.store import Store

pytestmark = pytest.mark.agentlane

try:
    from agentlane.harness import (
        AgentDescriptor,
        RunEvent,
        RunHandoffEndEvent,
        RunHandoffStartEvent,
        RunToolApprovalEvent,
        RunToolEndEvent,
        RunToolStartEvent,
    )
    from agentlane.harness._handoff import normalize_delegation_tool_name
    from agentlane.harness.agents import DefaultAgent
    from agentlane.harness.tools import (
        ToolApprovalBroker,
        ToolApprovalStatus,
        ToolPermissionDecision,
        ToolPermissionRequest,
        read_tool,
    )
    from agentlane.models import (
        MessageDict,
        Model,
        ModelResponse,
        ModelStreamEvent,
        ModelStreamEventKind,
        ToolCall,
        Tools,
        get_content_or_none,
    )
except ImportError as exc:  # Python 3.11, or agentlane not installed
    if os.environ.get("TRACELAKE_REQUIRE_AGENTLANE") == "1":
        raise
    pytest.skip(
        f"SKIPPING AGENTLANE TESTS: agentlane 0.22 is not importable here ({exc}); it needs "
        "Python 3.12 - run .ci/agentlane.sh",
        allow_module_level=True,
    )

SEED = random.randrange(1 << 30)


def _response(content: str | None, tool_calls: list[ToolCall] | None = None) -> ModelResponse:
    return ModelResponse.model_validate(
        {
            "id": "chatcmpl_scripted",
            "object": "chat.completion",
            "created": 1,
            "model": "scripted",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": content, "tool_calls": tool_calls},
                }
            ],
        }
    )


def _call(tool_id: str, name: str, arguments: str) -> ToolCall:
    return ToolCall.model_validate(
        {"id": tool_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    )


class ScriptedModel(Model[ModelResponse]):
    """Streams the scripted responses in order (text in a few deltas, then COMPLETED)."""

    def __init__(self, outcomes: list[ModelResponse]) -> None:
        self._outcomes = list(outcomes)

    async def get_response(self, messages: list[MessageDict], **kwargs: Any) -> ModelResponse:
        return self._outcomes.pop(0)

    def stream_response(
        self, messages: list[MessageDict], **kwargs: Any
    ) -> AsyncIterator[ModelStreamEvent]:
        async def _stream() -> AsyncIterator[ModelStreamEvent]:
            response = self._outcomes.pop(0)
            content = get_content_or_none(response) or ""
            for i in range(0, len(content), 7):
                yield ModelStreamEvent(
                    kind=ModelStreamEventKind.TEXT_DELTA, text=content[i : i + 7]
                )
            yield ModelStreamEvent(kind=ModelStreamEventKind.COMPLETED, response=response)

        return _stream()


async def _run(sink: TraceSink, stream: Any, run_id: str, **on_event: Any) -> list[RunEvent]:
    seen: list[RunEvent] = []
    async for event in sink.atap(stream, run_id=run_id):
        seen.append(event)
        hook = on_event.get(type(event).__name__)
        if hook is not None:
            await hook(event)
    await stream.result()
    return seen


def _stored(store: Store, run_id: str) -> list[Any]:
    return store.run_events(run_id)


def _assert_stored_like_to_dict(store: Store, run_id: str, seen: list[RunEvent]) -> None:
    stored = _stored(store, run_id)
    assert len(stored) == len(seen), f"seed {SEED}"
    assert [e.type for e in stored] == [ev.to_dict()["type"] for ev in seen]
    assert [e.seq for e in stored] == list(range(1, len(seen) + 1))


@pytest.fixture
def sink(db_url: str, tmp_path: Path) -> Any:
    s = TraceSink(db_url, spool_dir=tmp_path / "spool", flush_interval=0.01)
    yield s
    s.close()


def test_tool_runs_with_lineage_are_stored_not_quarantined(sink: TraceSink, store: Store) -> None:
    fake = Faker(["en_US", "ko_KR", "fr_FR"])
    Faker.seed(SEED)

    async def echo(text: str) -> str:
        """Echo text."""
        return f"echo:{text}"

    async def scenario() -> dict[str, list[RunEvent]]:
        runs: dict[str, list[RunEvent]] = {}
        for r in range(6):
            arg = fake.sentence().replace('"', "'")
            model = ScriptedModel(
                [
                    _response(None, [_call(f"call_{r}", "echo", f'{{"text":"{arg}"}}')]),
                    _response(fake.paragraph()),
                ]
            )
            agent = DefaultAgent(
                descriptor=AgentDescriptor(name="Echoer", model=model, tools=Tools(tools=[echo]))
            )
            stream = await agent.run_events(fake.sentence())
            runs[f"al-{r}"] = await _run(sink, stream, f"al-{r}")
        return runs

    runs = asyncio.run(scenario())
    sink.close()
    assert sink.stats()["quarantined"] == 0, f"seed {SEED}"
    for run_id, seen in runs.items():
        _assert_stored_like_to_dict(store, run_id, seen)
        stored = _stored(store, run_id)
        tool_events = [
            (s, ev)
            for s, ev in zip(stored, seen, strict=True)
            if isinstance(ev, (RunToolStartEvent, RunToolEndEvent))
        ]
        assert tool_events
        for row, ev in tool_events:  # lineage survives as agentlane wrote it
            wire = ev.to_dict()
            for key in ("task_id", "parent_task_id", "is_root"):
                if key in wire:
                    assert row.payload.get(key) == wire[key], (key, row.payload)


def test_approvals_are_stored(sink: TraceSink, store: Store, tmp_path: Path) -> None:
    class RequireApproval:
        def check(self, request: ToolPermissionRequest) -> ToolPermissionDecision:
            return ToolPermissionDecision.require_approval()

    (tmp_path / "notes.txt").write_text("approved notes", encoding="utf-8")

    async def scenario() -> list[RunEvent]:
        broker = ToolApprovalBroker()
        read = read_tool(
            cwd=tmp_path, permissions=RequireApproval(), approval_callback=broker.callback
        )
        model = ScriptedModel(
            [
                _response(None, [_call("approval_1", "read", '{"path":"notes.txt"}')]),
                _response("read complete"),
            ]
        )
        agent = DefaultAgent(
            descriptor=AgentDescriptor(name="Approver", model=model, tools=Tools(tools=[read.tool]))
        )
        stream = await agent.run_events("read the note", approval_events=broker.events())

        async def approve(event: RunToolApprovalEvent) -> None:
            if event.event.status == ToolApprovalStatus.PENDING:
                assert await broker.resolve(event.event.request_id, ToolPermissionDecision.allow())

        return await _run(sink, stream, "al-approval", RunToolApprovalEvent=approve)

    seen = asyncio.run(scenario())
    sink.close()
    assert any(isinstance(e, RunToolApprovalEvent) for e in seen)
    _assert_stored_like_to_dict(store, "al-approval", seen)
    types = Counter(e.type for e in _stored(store, "al-approval"))
    assert types["tool_approval"] == 2


def test_handoffs_are_stored(sink: TraceSink, store: Store) -> None:
    async def scenario() -> list[RunEvent]:
        child = AgentDescriptor(
            name="Returns Specialist",
            model=ScriptedModel([_response("handled by returns")]),
            instructions="You handle returns.",
        )
        target = normalize_delegation_tool_name(child.name)
        parent = ScriptedModel(
            [_response(None, [_call("handoff_1", target, '{"task":"Take over."}')])]
        )
        agent = DefaultAgent(
            descriptor=AgentDescriptor(name="Frontline", model=parent, handoffs=(child,))
        )
        stream = await agent.run_events("Can I return this order?")
        return await _run(sink, stream, "al-handoff")

    seen = asyncio.run(scenario())
    sink.close()
    assert any(isinstance(e, RunHandoffStartEvent) for e in seen)
    assert any(isinstance(e, RunHandoffEndEvent) for e in seen)
    _assert_stored_like_to_dict(store, "al-handoff", seen)


def test_an_event_whose_to_dict_raises_is_quarantined_alone(
    sink: TraceSink, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: Any) -> dict[str, Any]:
        raise RuntimeError("to_dict exploded")

    monkeypatch.setattr(RunToolEndEvent, "to_dict", broken)

    async def echo(text: str) -> str:
        """Echo text."""
        return text

    async def scenario() -> list[RunEvent]:
        model = ScriptedModel(
            [_response(None, [_call("c1", "echo", '{"text":"x"}')]), _response("done")]
        )
        agent = DefaultAgent(
            descriptor=AgentDescriptor(name="Breaks", model=model, tools=Tools(tools=[echo]))
        )
        stream = await agent.run_events("go")
        return await _run(sink, stream, "al-broken")

    seen = asyncio.run(scenario())
    sink.close()
    broken_count = sum(isinstance(e, RunToolEndEvent) for e in seen)
    assert broken_count == 1
    stats = sink.stats()
    assert (stats["written"], stats["quarantined"]) == (len(seen) - 1, 1)
    assert store.stats()["quarantined_by_reason"] == {"unreadable_event": 1}
    assert [e.seq for e in _stored(store, "al-broken")] == list(range(1, len(seen)))
