"""Strategies shared by the property tests."""

from __future__ import annotations

from hypothesis import strategies as st

# JSON text as it reaches the store: no lone surrogates and no NUL (the pipeline replaces both
# before storing; see contracts/jsonsafe.py and codec.loads_line).
STORABLE_CHARS = st.characters(exclude_categories=["Cs"], exclude_characters="\x00")


def storable_text(max_size: int) -> st.SearchStrategy[str]:
    return st.text(STORABLE_CHARS, max_size=max_size)
