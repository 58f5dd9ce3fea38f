"""Module locks that a forked child gets anew.

A lock held by another thread at ``fork()`` stays held forever in the child, where that thread
does not exist (an attack forked a runner while the sink's writer was building the presidio
analyzer: the child's first scrub waited on that lock for good). Modules name their locks
here once; the child replaces them before it runs any code of its own.
"""

from __future__ import annotations

import os
import threading
from typing import Any


def renew_locks_after_fork(namespace: dict[str, Any], *names: str) -> None:
    """In a forked child, replace each named lock of *namespace* (a module's ``globals()``)
    with a new one of the same kind."""

    def renew() -> None:
        for name in names:
            old = namespace[name]
            namespace[name] = (
                threading.RLock() if "RLock" in type(old).__name__ else threading.Lock()
            )

    os.register_at_fork(after_in_child=renew)
