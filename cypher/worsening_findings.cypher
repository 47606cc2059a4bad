// name: worsening_findings
// purpose: Every stated worsening of a finding for one patient, the finding given by name or synonym
//          and including its more specific findings (IS_A). level study (default): one row per study
//          pair, anatomy null; level anatomy: one row per study pair and region. Worsening is only
//          stated (Chest ImaGenome comparisons, RadGraph2 CHAN-CON-WOR): basis derived returns nothing.
// param: patient_id string              the patient
// param: finding string                 finding name or synonym, e.g. "pleural effusion", "effusions"
// param: level {study|anatomy}=study    study: anywhere in the study; anatomy: per region
// param: basis {any|stated|derived}=any  which changes count
// columns: study_id, study_datetime, prior_study_id, days, anatomy, finding, sources, evidence
MATCH (q:Finding) WHERE q.name = toLower($finding) OR toLower($finding) IN q.synonyms
MATCH (f:Finding)-[:IS_A*0..]->(q)
WITH collect(DISTINCT f.name) AS names
MATCH (:Patient {patient_id: $patient_id})-[:HAS_STUDY]->(s:Study)
CALL (s, names) {
  WITH s WHERE $level = 'study'
  MATCH (s)-[:HAS_STUDY_FINDING]->(n:StudyFinding)-[r:PROGRESSION {change: 'worsened'}]->(pn:StudyFinding)
  WHERE n.finding IN names AND ($basis = 'any' OR r.basis = $basis)
  RETURN null AS anatomy, n.finding AS finding, pn.study_id AS prior_id, r
  UNION ALL
  WITH s WHERE $level = 'anatomy'
  MATCH (s)-[:HAS_OBSERVATION]->(n:Observation)-[r:PROGRESSION {change: 'worsened'}]->(pn:Observation)
  WHERE n.finding IN names AND ($basis = 'any' OR r.basis = $basis)
  RETURN n.anatomy AS anatomy, n.finding AS finding, pn.study_id AS prior_id, r
}
MATCH (ps:Study {study_id: prior_id})
WITH s, ps, anatomy, finding, r ORDER BY r.source
WITH s, ps, anatomy, finding, collect(DISTINCT r.source) AS sources, collect(r.evidence[0]) AS evidence
RETURN s.study_id AS study_id, toString(s.study_datetime) AS study_datetime, ps.study_id AS prior_study_id,
       duration.inDays(ps.study_datetime, s.study_datetime).days AS days,
       anatomy, finding, sources, evidence[0] AS evidence
ORDER BY s.study_datetime, anatomy, finding
