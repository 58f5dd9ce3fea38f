"""Running test code in a new Python interpreter (fresh imports, no test-process threads)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping

from tests.conftest import REPO


def run_python(code: str, *args: str, env: Mapping[str, str], timeout: float = 300) -> str:
    """Run *code* with *args* in a new interpreter from the repository's root; its stdout.
    Fails the test with the end of its stderr when it exits non-zero."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=REPO,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout
