// name: new_finding_patients
// purpose: Patients in whom a finding appeared (a `new` progression, stated or derived) in a date range;
//          the finding given by name or synonym, hierarchy-aware. Uses the observation_onset index
//          (finding, onset_datetime) and the onset_sources that the ingest's link step maintains.
// param: finding string      finding name or synonym
// param: start_date string   first day, ISO (2150-01-01)
// param: end_date string     last day, ISO, inclusive
// columns: patient_id, study_id, study_datetime, anatomy, finding, sources
MATCH (q:Finding) WHERE q.name = toLower($finding) OR toLower($finding) IN q.synonyms
MATCH (f:Finding)-[:IS_A*0..]->(q)
WITH collect(DISTINCT f.name) AS names
MATCH (o:Observation)
WHERE o.finding IN names
  AND o.onset_datetime >= localdatetime({date: date($start_date)})
  AND o.onset_datetime < localdatetime({date: date($end_date) + duration({days: 1})})
MATCH (s:Study {study_id: o.study_id})
RETURN s.patient_id AS patient_id, s.study_id AS study_id, toString(s.study_datetime) AS study_datetime,
       o.anatomy AS anatomy, o.finding AS finding, o.onset_sources AS sources
ORDER BY study_datetime, patient_id, anatomy
