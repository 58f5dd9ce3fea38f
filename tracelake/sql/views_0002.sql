-- Stable analytics views over the projection tables (issue 4), created by migration 0002.
-- Portable SQL: the same names and columns on SQLite and PostgreSQL. A view that must change
-- gets a new file and a new migration; these definitions are never edited in place.

CREATE VIEW v_runs AS
SELECT run_id, source, collection_id, status, finished, success, plan_ids,
       started_at, ended_at, last_event_type, event_count, step_count, retry_count,
       skip_count, repair_count, coercion_count, binding_repair_count, total_duration_ms
FROM runs;

CREATE VIEW v_learning_records AS
SELECT run_id, source, collection_id, plan_ids, goal, query_family, query_fingerprint,
       selected_target, plan_tools, success, failure_stage, failure_reason, failed_step,
       failed_tool, total_duration_ms, step_count, retry_count, skip_count, repair_count,
       coercion_count, binding_repair_count, engine_version, finished_at, promotion_status
FROM learning_records;

CREATE VIEW v_failure_taxonomy AS
SELECT position, run_id, source, event_type, collection_id, plan_id, step_id, tool, stage,
       reason, retryable, operator_action, http_status, exception_type, error_kind,
       field_name, attempt, recorded_at
FROM failure_taxonomy;

CREATE VIEW v_binding_repair_evidence AS
SELECT e.position, e.run_id, e.collection_id, e.plan_id, e.step_id, e.tool, e.field_name,
       e.recovered_path, e.value_preview, e.low_confidence, e.run_completed, e.recorded_at,
       c.observations AS candidate_observations, c.successes AS candidate_successes,
       c.status AS promotion_status
FROM binding_repair_evidence e
LEFT JOIN binding_repair_candidates c
  ON c.collection_id = COALESCE(e.collection_id, '')
 AND c.tool = COALESCE(e.tool, '')
 AND c.field_name = COALESCE(e.field_name, '')
 AND c.recovered_path = COALESCE(e.recovered_path, '');

-- Nearest-rank percentiles with window functions (SQLite has no percentile_cont): the p-th
-- percentile is the smallest duration whose rank is >= p * n.
CREATE VIEW v_tool_latency AS
WITH ranked AS (
    SELECT tool, duration_ms,
           ROW_NUMBER() OVER (PARTITION BY tool ORDER BY duration_ms) AS rn,
           COUNT(*) OVER (PARTITION BY tool) AS n
    FROM tool_calls
    WHERE duration_ms IS NOT NULL
), pct AS (
    SELECT tool,
           MIN(CASE WHEN rn >= 0.50 * n THEN duration_ms END) AS p50_ms,
           MIN(CASE WHEN rn >= 0.95 * n THEN duration_ms END) AS p95_ms,
           MIN(CASE WHEN rn >= 0.99 * n THEN duration_ms END) AS p99_ms
    FROM ranked
    GROUP BY tool
), counts AS (
    SELECT tool, COUNT(*) AS calls,
           SUM(CASE WHEN ok THEN 0 ELSE 1 END) AS failures,
           COUNT(duration_ms) AS timed_calls
    FROM tool_calls
    GROUP BY tool
)
SELECT c.tool, c.calls, c.failures, c.timed_calls, p.p50_ms, p.p95_ms, p.p99_ms
FROM counts c
LEFT JOIN pct p ON p.tool = c.tool;
