// name: patient_studies
// purpose: A patient's studies in order with their prior study, the interval in days and what each holds.
// param: patient_id string   the patient
// columns: study_order, study_id, study_datetime, prior_study_id, days, images, reports, observations
MATCH (:Patient {patient_id: $patient_id})-[:HAS_STUDY]->(s:Study)
OPTIONAL MATCH (s)-[pr:PRIOR]->(ps:Study)
RETURN s.study_order AS study_order, s.study_id AS study_id, toString(s.study_datetime) AS study_datetime,
       ps.study_id AS prior_study_id, pr.days AS days,
       COUNT { (s)-[:HAS_IMAGE]->() } AS images, COUNT { (s)-[:HAS_REPORT]->() } AS reports,
       COUNT { (s)-[:HAS_OBSERVATION]->() } AS observations
ORDER BY study_order
