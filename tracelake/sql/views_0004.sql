-- Views that changed in migration 0004: the promotion status an analyst sees is the
-- event-sourced one (table suggestions, decided by policy or operator) wherever a suggestion
-- exists, and the evidence-only status of the projections otherwise. Same SQL on both
-- backends (the -> / ->> operators exist on PostgreSQL jsonb and on SQLite >= 3.38).

DROP VIEW IF EXISTS v_learning_records;

CREATE VIEW v_learning_records AS
SELECT r.run_id, r.source, r.collection_id, r.plan_ids, r.goal, r.query_family,
       r.query_fingerprint, r.selected_target, r.plan_tools, r.success, r.failure_stage,
       r.failure_reason, r.failed_step, r.failed_tool, r.total_duration_ms, r.step_count,
       r.retry_count, r.skip_count, r.repair_count, r.coercion_count, r.binding_repair_count,
       r.engine_version, r.finished_at,
       COALESCE(s.status, r.promotion_status) AS promotion_status,
       s.id AS suggestion_id
FROM learning_records r
LEFT JOIN suggestions s
  ON s.type = 'target_preference'
 AND s.collection_id = COALESCE(r.collection_id, '')
 AND s.query_fingerprint = r.query_fingerprint
 AND s.target = r.selected_target;

DROP VIEW IF EXISTS v_binding_repair_evidence;

CREATE VIEW v_binding_repair_evidence AS
SELECT e.position, e.run_id, e.collection_id, e.plan_id, e.step_id, e.tool, e.field_name,
       e.recovered_path, e.value_preview, e.low_confidence, e.run_completed, e.recorded_at,
       c.observations AS candidate_observations, c.successes AS candidate_successes,
       COALESCE(s.status, c.status) AS promotion_status,
       s.id AS suggestion_id
FROM binding_repair_evidence e
LEFT JOIN binding_repair_candidates c
  ON c.collection_id = COALESCE(e.collection_id, '')
 AND c.tool = COALESCE(e.tool, '')
 AND c.field_name = COALESCE(e.field_name, '')
 AND c.recovered_path = COALESCE(e.recovered_path, '')
LEFT JOIN suggestions s
  ON s.type = 'binding_repair'
 AND s.collection_id = COALESCE(e.collection_id, '')
 AND s.target = e.tool
 AND (s.document -> 'evidence') ->> 'field_name' = e.field_name
 AND (s.document -> 'evidence') ->> 'recovered_path' = e.recovered_path;
