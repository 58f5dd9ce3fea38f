"""Failure actions once per reason: ``failure_taxonomy.operator_action`` moves to ``failure_actions``.

The operator action is a function of the failure reason (``runners.failure_reasons``), yet every
failure row held its ~85-byte sentence (~12 bytes per stored event on realistic runs).
``failure_actions`` holds it once per reason (written by the failure_taxonomy projection), and
``v_failure_taxonomy`` joins it back: the view's columns and values do not change.

Upgrade keeps the projected rows (their actions are copied into ``failure_actions``);
downgrade puts the column back, filled from ``failure_actions``, and restores 0006's view.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

VIEW = """
CREATE VIEW v_failure_taxonomy AS
SELECT f.position, f.run_id, f.source, f.event_type, f.collection_id, f.plan_id, f.step_id,
       f.tool, f.stage, f.reason, f.retryable, a.operator_action, f.http_status,
       f.exception_type, f.error_kind, f.field_name, f.attempt, f.recorded_at, f.detail
FROM failure_taxonomy f
LEFT JOIN failure_actions a ON a.reason = f.reason
"""
# frozen copy of views_0006.sql's definition
VIEW_0006 = """
CREATE VIEW v_failure_taxonomy AS
SELECT position, run_id, source, event_type, collection_id, plan_id, step_id, tool, stage,
       reason, retryable, operator_action, http_status, exception_type, error_kind,
       field_name, attempt, recorded_at, detail
FROM failure_taxonomy
"""


def upgrade() -> None:
    op.execute("DROP VIEW IF EXISTS v_failure_taxonomy")
    op.create_table(
        "failure_actions",
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("operator_action", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("reason", name="pk_failure_actions"),
    )
    op.execute(
        "INSERT INTO failure_actions (reason, operator_action)"
        " SELECT reason, max(operator_action) FROM failure_taxonomy GROUP BY reason"
    )
    with op.batch_alter_table("failure_taxonomy") as batch:
        batch.drop_column("operator_action")
    op.execute(VIEW)


def downgrade() -> None:
    op.execute("DROP VIEW IF EXISTS v_failure_taxonomy")
    with op.batch_alter_table("failure_taxonomy") as batch:
        batch.add_column(sa.Column("operator_action", sa.Text(), nullable=False, server_default=""))
    op.execute(
        "UPDATE failure_taxonomy SET operator_action = COALESCE((SELECT a.operator_action"
        " FROM failure_actions a WHERE a.reason = failure_taxonomy.reason), '')"
    )
    with op.batch_alter_table("failure_taxonomy") as batch:
        batch.alter_column("operator_action", server_default=None)
    op.drop_table("failure_actions")
    op.execute(VIEW_0006)
