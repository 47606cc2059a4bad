// name: finding_timeline
// purpose: A finding's course for one patient: per study and anatomy its polarity, severity and changes
//          (stated or derived) relative to the prior study; the finding given by name or synonym,
//          hierarchy-aware.
// param: patient_id string   the patient
// param: finding string      finding name or synonym
// columns: study_order, study_id, study_datetime, anatomy, finding, polarity, severity, changes, sources
MATCH (q:Finding) WHERE q.name = toLower($finding) OR toLower($finding) IN q.synonyms
MATCH (f:Finding)-[:IS_A*0..]->(q)
WITH collect(DISTINCT f.name) AS names
MATCH (:Patient {patient_id: $patient_id})-[:HAS_STUDY]->(s:Study)-[:HAS_OBSERVATION]->(o:Observation)
WHERE o.finding IN names
RETURN s.study_order AS study_order, s.study_id AS study_id, toString(s.study_datetime) AS study_datetime,
       o.anatomy AS anatomy, o.finding AS finding, o.polarity AS polarity, o.severity AS severity,
       COLLECT { MATCH (o)-[r:PROGRESSION]->() RETURN DISTINCT r.change + ' (' + r.source + ')' AS c ORDER BY c } AS changes,
       o.sources AS sources
ORDER BY study_order, anatomy, finding
