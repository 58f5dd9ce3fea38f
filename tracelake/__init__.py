"""tracelake: an append-only, scrubbed event store for AI-agent runner events."""

from __future__ import annotations

__version__ = "0.1.0"
