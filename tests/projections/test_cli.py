"""``tracelake project`` and ``tracelake explain`` end to end (thin commands over the engine)."""

from __future__ import annotations

from typer.testing import CliRunner

from tests.projections.helpers import load_corpus
from tracelake.cli import app
from tracelake.store import Store


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, " ".join(result.output.split())  # rich wraps at 80 columns


def test_project_then_explain(store: Store, db_url: str) -> None:
    load_corpus(store, agentlane=False)
    code, out = invoke("project", "--database-url", db_url)
    assert code == 0, out
    top = str(store.max_position())
    assert "learning_records" in out and top in out
    code, out = invoke("project", "--rebuild", "--name", "runs", "--database-url", db_url)
    assert code == 0 and "rebuilt" in out, out

    code, out = invoke("explain", "run-binding_missing", "--database-url", db_url)
    assert code == 0, out
    assert "plan.aborted with kind=binding" in out
    assert "a required producer value is missing" in out
    assert "binding_failed" in out

    code, out = invoke("explain", "run-auth_403", "--database-url", db_url)
    assert "step.failed with kind=tool" in out and "auth_failed" in out
    assert "inspect HTTP status, auth readiness, and executor logs" in out

    code, out = invoke("explain", "run-timeout", "--database-url", db_url)
    assert "retries never happen" in out and "RetryPolicy(retry_all=True)" in out

    code, _ = invoke("explain", "no-such-run", "--database-url", db_url)
    assert code == 1
