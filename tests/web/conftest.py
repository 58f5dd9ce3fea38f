from __future__ import annotations

import pytest

from tests.web import helpers
from tracelake.store import Store


@pytest.fixture
def loaded(store: Store, request: pytest.FixtureRequest) -> Store:
    """The store with a projected, promoted corpus; the seed is printed on failure."""
    seed = helpers.load(store, ("orders-api", "claims-api"), days=2)
    request.node.user_properties.append(("corpus_seed", seed))
    print(f"corpus seed {seed}")
    return store
