// name: worsening_findings
// purpose: Every worsening of a finding for one patient: the finding given by name or synonym, including
//          its more specific findings (IS_A hierarchy), one row per study, anatomy and finding.
// param: patient_id string   the patient
// param: finding string      finding name or synonym, e.g. "pleural effusion", "effusions"
// columns: study_id, study_datetime, prior_study_id, days, anatomy, finding, sources, evidence
MATCH (q:Finding) WHERE q.name = toLower($finding) OR toLower($finding) IN q.synonyms
MATCH (f:Finding)-[:IS_A*0..]->(q)
WITH collect(DISTINCT f.name) AS names
MATCH (:Patient {patient_id: $patient_id})-[:HAS_STUDY]->(s:Study)-[:HAS_OBSERVATION]->(o:Observation)
      -[r:PROGRESSION {change: 'worsened'}]->(po:Observation)
WHERE o.finding IN names
MATCH (ps:Study {study_id: po.study_id})
WITH s, ps, o, r ORDER BY r.source
WITH s, ps, o, collect(DISTINCT r.source) AS sources, collect(r.evidence[0]) AS evidence
RETURN s.study_id AS study_id, toString(s.study_datetime) AS study_datetime, ps.study_id AS prior_study_id,
       duration.inDays(ps.study_datetime, s.study_datetime).days AS days,
       o.anatomy AS anatomy, o.finding AS finding, sources, evidence[0] AS evidence
ORDER BY s.study_datetime, anatomy, finding
