"""The sink adapter for production runners: never blocks, never loses, never leaks."""

from __future__ import annotations

from tracelake.sink.sink import TraceSink

__all__ = ["TraceSink"]
