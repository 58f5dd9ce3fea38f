"""``detail``: a stable snake_case sub-code under a failure ``reason``.

Binding failures all used to read ``binding_failed``, though graph-tool-call's messages
(``graph_tool_call/plan/binding.py`` ``_lookup`` and ``plan/runner.py``, 0.47) tell the causes
apart. The stored message is the scrubbed one; every pattern below matches only the fixed
leading words of the message, which the scrubber leaves alone. A binding expression whose head
is ``input`` / ``user_input`` reads the run's input context: those failures are input-side
(reason ``unsatisfied_field``: seed 002's "a required input could not be filled"); the others
read an upstream step's output (reason ``binding_failed``).

============================== ====================== =============================================
detail                         reason                 graph-tool-call message (``kind``)
============================== ====================== =============================================
``no_input_context``           unsatisfied_field      ``unknown source 'input' in binding ${...}:
                                                      context has [...]`` (binding)
``input_key_missing``          unsatisfied_field      ``key 'X' not found in binding 'input.X'``
``input_index_out_of_range``   unsatisfied_field      ``index N out of range in binding 'input...'``
``input_shape_mismatch``       unsatisfied_field      ``cannot descend into .X on non-dict type
                                                      ...`` / ``indexing [N] on non-list type ...``
                                                      / ``wildcard on ...`` under ``input``
``upstream_step_missing``      binding_failed         ``unknown source 'sN' in binding ${...}``
``upstream_field_missing``     binding_failed         ``key 'X' not found in binding 'sN...'``
``upstream_index_out_of_range`` binding_failed        ``index N out of range in binding 'sN...'``
                                                      (an empty or short upstream list)
``upstream_empty``             binding_failed         ``wildcard on empty dict|list in binding``
``upstream_shape_mismatch``    binding_failed         ``cannot descend into .X on non-dict type``,
                                                      ``indexing [N] on non-list type``,
                                                      ``wildcard on non-container type``
``invalid_binding_expression`` binding_failed         ``empty binding expression``, ``non-numeric
                                                      array index``, ``unclosed '['``
``terminal_step_no_output``    output_binding_failed  ``terminal step 'sN' produced no output
                                                      (skipped or failed)`` (output_binding)
``output_field_missing``       output_binding_failed  ``key 'X' not found in binding ...``
                                                      (output_binding)
``output_binding_unresolved``  output_binding_failed  any other output_binding message
``missing_required_argument``  missing_required_arg.  ``missing required argument|field|param``
``binding_unresolved``         binding_failed         any other binding message
============================== ====================== =============================================

Other reasons: ``http_<status>`` for an HTTP status (``http_429``, ``http_503``), else the
reason itself (``timeout``, ``network_error``, ``auth_context_required``, ``unknown``, ...).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

INPUT_HEADS = ("input", "user_input")

_UNKNOWN_SOURCE = re.compile(r"^unknown source '([^']*)' in binding")
_KEY_MISSING = re.compile(r"^key '([^']*)' not found in binding '([^']*)'")
_INDEX_RANGE = re.compile(r"^index -?\d+ out of range in binding '([^']*)'")
_SHAPE = re.compile(
    r"^(?:cannot descend into \.\S+ on non-dict type|indexing \S+ on non-list type"
    r"|wildcard on non-container type)[^(]*\(expr='([^']*)'\)"
)
_WILDCARD_EMPTY = re.compile(r"^wildcard on empty (?:dict|list) in binding '([^']*)'")
_INVALID = re.compile(r"^(?:empty binding expression|non-numeric array index|unclosed '\[')")
_TERMINAL = re.compile(r"^terminal step '[^']*' produced no output")
_MISSING_ARG = re.compile(r"(?i)missing (?:a )?required (?:argument|field|parameter)")


@dataclass(frozen=True, slots=True)
class BindingCause:
    reason: str
    detail: str
    field_name: str | None = None  # the key that was missing, when the message names it


def _head(expr: str) -> str:
    return re.split(r"[.\[]", expr.strip().lstrip("${").strip(), maxsplit=1)[0]


def binding_cause(kind: str, message: str) -> BindingCause:
    """The cause of a ``binding`` / ``output_binding`` failure from its (scrubbed) message."""
    text = message.strip()
    if kind == "output_binding":
        return _output_binding_cause(text)
    if _MISSING_ARG.search(text):
        return BindingCause("missing_required_argument", "missing_required_argument")
    source = _UNKNOWN_SOURCE.search(text)
    if source:
        if source.group(1) in INPUT_HEADS:
            return BindingCause("unsatisfied_field", "no_input_context")
        return BindingCause("binding_failed", "upstream_step_missing")
    key = _KEY_MISSING.search(text)
    if key:
        side = "input" if _head(key.group(2)) in INPUT_HEADS else "upstream"
        detail = "input_key_missing" if side == "input" else "upstream_field_missing"
        return BindingCause(_reason(side), detail, key.group(1))
    return _path_cause(text)


def _output_binding_cause(text: str) -> BindingCause:
    if _TERMINAL.search(text):
        return BindingCause("output_binding_failed", "terminal_step_no_output")
    key = _KEY_MISSING.search(text)
    if key:
        return BindingCause("output_binding_failed", "output_field_missing", key.group(1))
    return BindingCause("output_binding_failed", "output_binding_unresolved")


def _path_cause(text: str) -> BindingCause:
    """An index, wildcard or shape failure along a binding path, or an invalid expression."""
    for pattern, suffix in (
        (_INDEX_RANGE, "index_out_of_range"),
        (_WILDCARD_EMPTY, "empty"),
        (_SHAPE, "shape_mismatch"),
    ):
        found = pattern.search(text)
        if found:
            side = "input" if _head(found.group(1)) in INPUT_HEADS else "upstream"
            if side == "input" and suffix == "empty":
                suffix = "shape_mismatch"
            return BindingCause(_reason(side), f"{side}_{suffix}")
    if _INVALID.search(text):
        return BindingCause("binding_failed", "invalid_binding_expression")
    return BindingCause("binding_failed", "binding_unresolved")


def _reason(side: str) -> str:
    return "unsatisfied_field" if side == "input" else "binding_failed"


def detail_of(reason: str, http_status: int | None) -> str:
    """The detail of a failure that is not a binding failure."""
    if http_status is not None and reason in ("auth_failed", "http_4xx", "http_5xx"):
        return f"http_{http_status}"
    return reason
