"""graph-tool-call's troubleshooting table (seed 000, "Troubleshooting") for ``explain``.

Each hint comes with the test that says it applies to a folded run and the set of its event
types; ``troubleshoot`` returns the hints that apply, in the seed's order.
"""

from __future__ import annotations

from collections.abc import Callable

from tracelake.runners.run_model import Hint, RunFold

BINDING = Hint(
    "plan.aborted with kind=binding",
    "a required producer value is missing",
    "inspect PlanStep.args bindings and upstream output_preview",
)
TOOL = Hint(
    "step.failed with kind=tool",
    "adapter executor raised",
    "inspect HTTP status, auth readiness, and executor logs",
)
NO_OUTPUT = Hint(
    "no step.completed events",
    "first step failed before output",
    "check step.failed.error and failed_step",
)
NO_COERCION = Hint(
    "args.coerced missing",
    "validate_args is off or tools map is absent",
    'configure PlanRunner(..., tools=..., validate_args="coerce")',
)
NO_RETRY = Hint(
    "retries never happen",
    "step is not retryable or no RetryPolicy is configured",
    "set PlanStep.retryable=True or RetryPolicy(retry_all=True)",
)


def _aborted_on_binding(run: RunFold, types: frozenset[str]) -> bool:
    return (
        "plan.aborted" in types and run.outcome is not None and run.outcome.error_kind == "binding"
    )


def _tool_raised(run: RunFold, types: frozenset[str]) -> bool:
    return "step.failed" in types and any(
        f.classification.error_kind == "tool" for f in run.failures
    )


def _failed_before_output(run: RunFold, types: frozenset[str]) -> bool:
    return run.finished and not run.success and "step.completed" not in types


def _never_retried(run: RunFold, types: frozenset[str]) -> bool:
    outcome = run.outcome
    return outcome is not None and outcome.retryable and run.retry_count == 0 and not run.success


def _not_coerced(run: RunFold, types: frozenset[str]) -> bool:
    outcome = run.outcome
    if run.coercion_count or outcome is None:
        return False
    return outcome.reason == "missing_required_argument" or outcome.http_status in (400, 422)


_TABLE: tuple[tuple[Hint, Callable[[RunFold, frozenset[str]], bool]], ...] = (
    (BINDING, _aborted_on_binding),
    (TOOL, _tool_raised),
    (NO_OUTPUT, _failed_before_output),
    (NO_RETRY, _never_retried),
    (NO_COERCION, _not_coerced),
)


def troubleshoot(run: RunFold, types: frozenset[str]) -> list[Hint]:
    return [hint for hint, applies in _TABLE if applies(run, types)]
