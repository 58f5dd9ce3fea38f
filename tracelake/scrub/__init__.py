"""Scrubbing: no personal data or credential reaches disk, only compact previews.

    key = load_pseudonym_key(database_url)
    out = get_scrubber(key).scrub_event("graph_tool_call", event["type"], event)
    out.payload   # a new JSON-compatible dict, safe to store
    out.report    # {"entities": {...}, "paths": {...}, "actions": {...}}: counts only
    outs = get_scrubber(key).scrub_events([(source, event_type, event), ...])  # a batch

Modules: ``keys`` (key rules), ``detect`` (prefilter + cache), ``analyzer`` (presidio, offline),
``walk`` (recursive scrub + report), ``preview``, ``policy`` (field rules), ``sources``
(per-runner tables), ``pseudonym`` (HMAC + key loading), ``scrubber`` (the public API).
"""

from __future__ import annotations

from tracelake.scrub.pseudonym import load_pseudonym_key
from tracelake.scrub.scrubber import ScrubbedEvent, Scrubber, get_scrubber

__all__ = ["ScrubbedEvent", "Scrubber", "get_scrubber", "load_pseudonym_key"]
