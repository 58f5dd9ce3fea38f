"""Runner adapters: one module per runner family, listed once in ``registry``.

A family's module holds its contract models, its field policy (``field_rules``: what the
scrubber does with each field), its indexed-column extraction and its fold handlers keyed by
event type (``run_model``: what a run is). ``inbound`` recognises and checks an incoming event;
``normalize`` turns any runner object into a fresh JSON-compatible tree. This package imports
nothing from the scrubber, the store or the projections: they import it.
"""

from __future__ import annotations

from tracelake.runners.agentlane import SOURCE as SOURCE_AGENTLANE
from tracelake.runners.graph_tool_call import SOURCE as SOURCE_GRAPH_TOOL_CALL
from tracelake.runners.inbound import InboundEvent, classify, classify_object
from tracelake.runners.normalize import to_jsonable
from tracelake.runners.registry import SOURCE_UNKNOWN

__all__ = [
    "SOURCE_AGENTLANE",
    "SOURCE_GRAPH_TOOL_CALL",
    "SOURCE_UNKNOWN",
    "InboundEvent",
    "classify",
    "classify_object",
    "to_jsonable",
]
