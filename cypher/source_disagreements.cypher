// name: source_disagreements
// purpose: Comparisons on which the sources disagree: the same current and prior observation with
//          different changes stated by Chest ImaGenome and by the report extraction (RadGraph2 change
//          entities), or derived from presence; optionally for one patient.
// param: patient_id string   the patient, or "" for all patients
// columns: patient_id, study_id, prior_study_id, anatomy, finding, changes
MATCH (o:Observation)-[r:PROGRESSION]->(po:Observation)
WHERE r.source <> 'gnn'
WITH o, po, collect(DISTINCT r.change + ' (' + r.source + ')') AS changes, collect(DISTINCT r.change) AS kinds
WHERE size(kinds) > 1
MATCH (p:Patient)-[:HAS_STUDY]->(s:Study {study_id: o.study_id})
WHERE $patient_id = '' OR p.patient_id = $patient_id
RETURN p.patient_id AS patient_id, s.study_id AS study_id, po.study_id AS prior_study_id,
       o.anatomy AS anatomy, o.finding AS finding, changes
ORDER BY patient_id, study_id, anatomy, finding
LIMIT 1000
