"""Each runner's field policy, resolved to the scrubber's rules.

A runner adapter (``tracelake.runners``) declares its field policy as data: rule names
(``runners.field_rules``) and nested tables. Here each name is resolved once, at import, to its
implementation (``scrub.policy``, ``scrub.preview`` and the two text rules below), giving one
scrub function per source: ``SOURCES``, the scrubber's lookup table, built from the registry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tracelake.runners import field_rules as r
from tracelake.runners.registry import ADAPTERS, SOURCE_UNKNOWN, UNKNOWN_POLICY
from tracelake.scrub import policy as p
from tracelake.scrub.preview import preview
from tracelake.scrub.walk import Walker

ScrubEvent = Callable[[Walker, dict[str, Any]], dict[str, Any]]


def _text(limit: int) -> p.Rule:
    def rule(w: Walker, value: Any, path: str) -> Any:
        if isinstance(value, str):
            if value[:1] in "{[":
                return w.json_text(value, path, limit=limit)
            return w.text(value, path, limit=limit)
        return w.value(value, path)

    return rule


def _length_only(w: Walker, value: Any, path: str) -> Any:
    if isinstance(value, str):
        w.act("length_only")
        return {"_chars": len(value)}
    return w.value(value, path)


NAMED: dict[str, p.Rule] = {
    r.KEEP: p.keep,
    r.SCRUB: p.scrub,
    r.DROP: p.drop,
    r.PREVIEW: preview,
    r.ERROR: p.error,
    r.GOAL: p.goal,
    r.TRACE_STEPS: p.trace_steps,
    r.TRACE_METADATA: p.trace_metadata,
    r.COERCION_CHANGES: p.coercion_changes,
    r.JSON_STRING: p.json_string,
    r.LENGTH_ONLY: _length_only,
}


def _nested(rules: dict[str, p.Rule], otherwise: p.Rule) -> p.Rule:
    def rule(w: Walker, value: Any, path: str) -> Any:
        if not isinstance(value, dict):
            return otherwise(w, value, path)
        return p.apply(w, value, rules, path)

    return rule


def resolve(rule: r.FieldRule) -> p.Rule:
    """The implementation of one declared rule (a name, a text limit, a nested table)."""
    if isinstance(rule, r.Text):
        return _text(rule.limit)
    if isinstance(rule, r.Fields):
        return _nested(resolve_all(rule.rules), resolve(rule.otherwise))
    return NAMED[rule]


def resolve_all(rules: r.Rules) -> dict[str, p.Rule]:
    return {name: resolve(rule) for name, rule in rules.items()}


def scrub_function(policy: r.FieldPolicy) -> ScrubEvent:
    """One event of a source scrubbed by its policy; unnamed fields get the generic walk."""
    rules = resolve_all(policy.fields)
    by_type = {etype: resolve_all(typed) for etype, typed in policy.by_type.items()}

    def scrub_event(w: Walker, event: dict[str, Any]) -> dict[str, Any]:
        kind = event.get("type")
        chosen = by_type.get(kind, rules) if by_type and isinstance(kind, str) else rules
        return p.apply(w, event, chosen)

    return scrub_event


SOURCES: dict[str, ScrubEvent] = {
    **{adapter.source: scrub_function(adapter.field_policy) for adapter in ADAPTERS},
    SOURCE_UNKNOWN: scrub_function(UNKNOWN_POLICY),
}
