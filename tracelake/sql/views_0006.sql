-- Views that changed in migration 0006 (the learning loop, issue 9). Same SQL on both backends
-- (the -> / ->> operators exist on PostgreSQL jsonb and on SQLite >= 3.38).
--
-- promotion_status has one source of truth: the suggestion decisions in the log (table
-- suggestions, decided by the policy or an operator). Where no suggestion matches, a failed
-- run (or a successful one with no target) is 'not_eligible' and anything else is
-- 'unreviewed' (the promotion job has not looked at it yet: run `tracelake promote`).

DROP VIEW IF EXISTS v_learning_records;

CREATE VIEW v_learning_records AS
SELECT r.run_id, r.source, r.collection_id, r.plan_ids, r.goal, r.query_family,
       r.query_fingerprint, r.selected_target, r.plan_tools, r.success, r.failure_stage,
       r.failure_reason, r.failed_step, r.failed_tool, r.total_duration_ms, r.step_count,
       r.retry_count, r.skip_count, r.repair_count, r.coercion_count, r.binding_repair_count,
       r.engine_version, r.finished_at,
       COALESCE(s.status,
                CASE WHEN r.success AND r.selected_target IS NOT NULL THEN 'unreviewed'
                     ELSE 'not_eligible' END) AS promotion_status,
       s.id AS suggestion_id,
       r.position
FROM learning_records r
LEFT JOIN suggestions s
  ON s.type = 'target_preference'
 AND s.collection_id = COALESCE(r.collection_id, '')
 AND s.query_fingerprint = COALESCE(r.query_fingerprint, '')
 AND s.target = r.selected_target
 AND r.success;

DROP VIEW IF EXISTS v_failure_taxonomy;

CREATE VIEW v_failure_taxonomy AS
SELECT position, run_id, source, event_type, collection_id, plan_id, step_id, tool, stage,
       reason, retryable, operator_action, http_status, exception_type, error_kind,
       field_name, attempt, recorded_at, detail
FROM failure_taxonomy;

-- One row per binding.repaired event: the run's learning record gives the query family the
-- suggestion is scoped to, and a binding_repair suggestion is unique per (collection,
-- fingerprint, tool, field_name, recovered_path) (its id is a hash of exactly these).
DROP VIEW IF EXISTS v_binding_repair_evidence;

CREATE VIEW v_binding_repair_evidence AS
SELECT e.position, e.run_id, e.collection_id, e.plan_id, e.step_id, e.tool, e.field_name,
       e.recovered_path, e.value_preview, e.low_confidence, e.run_completed, e.recorded_at,
       c.observations AS candidate_observations, c.successes AS candidate_successes,
       COALESCE(s.status,
                CASE WHEN e.run_completed = FALSE THEN 'not_eligible'
                     ELSE 'unreviewed' END) AS promotion_status,
       s.id AS suggestion_id,
       r.query_family, r.query_fingerprint
FROM binding_repair_evidence e
LEFT JOIN learning_records r ON r.run_id = e.run_id
LEFT JOIN binding_repair_candidates c
  ON c.collection_id = COALESCE(e.collection_id, '')
 AND c.tool = COALESCE(e.tool, '')
 AND c.field_name = COALESCE(e.field_name, '')
 AND c.recovered_path = COALESCE(e.recovered_path, '')
LEFT JOIN suggestions s
  ON s.type = 'binding_repair'
 AND s.collection_id = COALESCE(r.collection_id, '')
 AND s.query_fingerprint = COALESCE(r.query_fingerprint, '')
 AND s.target = e.tool
 AND (s.document -> 'evidence') ->> 'field_name' = e.field_name
 AND (s.document -> 'evidence') ->> 'recovered_path' = e.recovered_path;
