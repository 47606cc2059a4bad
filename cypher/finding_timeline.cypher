// name: finding_timeline
// purpose: A finding's course for one patient, the finding given by name or synonym. level study
//          (default): every study of the patient with the finding's state there (present, uncertain,
//          absent, or not_mentioned when no source said anything; a more specific finding counts) and
//          the events against the prior study; level anatomy: per study and region that has a state,
//          with the more specific findings. basis filters the events: stated, derived or any.
// param: patient_id string              the patient
// param: finding string                 finding name or synonym
// param: level {study|anatomy}=study    study: anywhere in the study; anatomy: per region
// param: basis {any|stated|derived}=any  which events to list
// columns: study_order, study_id, study_datetime, anatomy, finding, state, severity, changes, sources
MATCH (q:Finding) WHERE q.name = toLower($finding) OR toLower($finding) IN q.synonyms
MATCH (f:Finding)-[:IS_A*0..]->(q)
WITH q, collect(DISTINCT f.name) AS names
MATCH (:Patient {patient_id: $patient_id})-[:HAS_STUDY]->(s:Study)
CALL (s, q, names) {
  WITH s, q WHERE $level = 'study'
  OPTIONAL MATCH (s)-[:HAS_STUDY_FINDING]->(n:StudyFinding {finding: q.name})
  WITH s, q, n, COLLECT { MATCH (s)-[:HAS_OBSERVATION]->(o:Observation)
                          WHERE o.finding IN names AND o.polarity IS NOT NULL RETURN o } AS stated
  RETURN null AS anatomy, q.name AS finding, coalesce(n.state, 'not_mentioned') AS state,
         reduce(top = null, o IN stated | CASE WHEN o.severity_score > coalesce(top.severity_score, 0)
                                               THEN o ELSE top END).severity AS severity,
         COLLECT { MATCH (n)-[r:PROGRESSION]->() WHERE $basis = 'any' OR r.basis = $basis
                   RETURN DISTINCT r.change + ' (' + r.source + ')' AS c ORDER BY c } AS changes,
         COLLECT { UNWIND stated AS o UNWIND o.sources AS x WITH DISTINCT x ORDER BY x RETURN x } AS sources
  UNION ALL
  WITH s WHERE $level = 'anatomy'
  MATCH (s)-[:HAS_OBSERVATION]->(o:Observation)
  WHERE o.finding IN names
  RETURN o.anatomy AS anatomy, o.finding AS finding, o.state AS state, o.severity AS severity,
         COLLECT { MATCH (o)-[r:PROGRESSION]->() WHERE r.source <> 'gnn' AND ($basis = 'any' OR r.basis = $basis)
                   RETURN DISTINCT r.change + ' (' + r.source + ')' AS c ORDER BY c } AS changes,
         coalesce(o.sources, []) AS sources
}
RETURN s.study_order AS study_order, s.study_id AS study_id, toString(s.study_datetime) AS study_datetime,
       anatomy, finding, state, severity, changes, sources
ORDER BY study_order, anatomy, finding
