"""Projections: read models derived from the scrubbed event log, rebuildable from it.

``ProjectionEngine`` (``runner.py``) keeps one checkpoint per projection and writes rows and
checkpoint in one transaction. One module per projection (named after its table); ``fold.py``
folds one run through its runner adapter's handlers (``tracelake.runners``); ``explain.py``
explains one run. Failures are classified by ``runners.failure_reasons``.
"""

from __future__ import annotations

from tracelake.projections.runner import CatchUp, Projection, ProjectionEngine


def default_projections() -> list[Projection]:
    from tracelake.projections.binding_repair_evidence import BindingRepairEvidenceProjection
    from tracelake.projections.coercion_evidence import CoercionEvidenceProjection
    from tracelake.projections.data_flow_evidence import DataFlowEvidenceProjection
    from tracelake.projections.failure_taxonomy import FailureTaxonomyProjection
    from tracelake.projections.learning_records import LearningRecordsProjection
    from tracelake.projections.run_status import RunsProjection
    from tracelake.projections.suggestion_states import SuggestionsProjection
    from tracelake.projections.tool_calls import ToolCallsProjection

    return [
        RunsProjection(),
        LearningRecordsProjection(),
        FailureTaxonomyProjection(),
        ToolCallsProjection(),
        BindingRepairEvidenceProjection(),
        CoercionEvidenceProjection(),
        DataFlowEvidenceProjection(),
        SuggestionsProjection(),
    ]


__all__ = ["CatchUp", "Projection", "ProjectionEngine", "default_projections"]
