// name: new_finding_patients
// purpose: Patients in whom a finding appeared (a `new` progression, stated or derived) in a date range;
//          the finding given by name or synonym, hierarchy-aware.
// param: finding string      finding name or synonym
// param: start_date string   first day, ISO (2150-01-01)
// param: end_date string     last day, ISO, inclusive
// columns: patient_id, study_id, study_datetime, anatomy, finding, sources
MATCH (q:Finding) WHERE q.name = toLower($finding) OR toLower($finding) IN q.synonyms
MATCH (f:Finding)-[:IS_A*0..]->(q)
WITH collect(DISTINCT f.name) AS names
MATCH (o:Observation)-[r:PROGRESSION {change: 'new'}]->()
WHERE o.finding IN names
MATCH (p:Patient)-[:HAS_STUDY]->(s:Study {study_id: o.study_id})
WHERE date(s.study_datetime) >= date($start_date) AND date(s.study_datetime) <= date($end_date)
RETURN p.patient_id AS patient_id, s.study_id AS study_id, toString(s.study_datetime) AS study_datetime,
       o.anatomy AS anatomy, o.finding AS finding, collect(DISTINCT r.source) AS sources
ORDER BY study_datetime, patient_id, anatomy
