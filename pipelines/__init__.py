"""Batch jobs on polars over the scrubbed log (promotion, exports)."""
