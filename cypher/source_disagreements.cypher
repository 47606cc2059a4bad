// name: source_disagreements
// purpose: Comparisons on which the sources disagree: the same current and prior observation with
//          different changes stated by Chest ImaGenome and by the report extraction (RadGraph2 change
//          entities), or derived from presence; optionally for one patient. Starts from the
//          observations the ingest's link step marks with source_conflict (an index).
// param: patient_id string   the patient, or "" for all patients
// columns: patient_id, study_id, prior_study_id, anatomy, finding, changes
CALL () {
  MATCH (o:Observation {source_conflict: true})
  WHERE $patient_id = ''
  RETURN o
  UNION
  MATCH (:Patient {patient_id: $patient_id})-[:HAS_STUDY]->(:Study)-[:HAS_OBSERVATION]->(o:Observation)
  WHERE o.source_conflict
  RETURN o
}
MATCH (o)-[r:PROGRESSION]->(po:Observation)
WHERE r.source <> 'gnn'
WITH o, po, collect(DISTINCT r.change) AS kinds
WHERE size(kinds) > 1
WITH o, po, COLLECT { MATCH (o)-[r:PROGRESSION]->(po) WHERE r.source <> 'gnn'
                      RETURN DISTINCT r.change + ' (' + r.source + ')' AS c ORDER BY c } AS changes
MATCH (s:Study {study_id: o.study_id})
RETURN s.patient_id AS patient_id, s.study_id AS study_id, po.study_id AS prior_study_id,
       o.anatomy AS anatomy, o.finding AS finding, changes
ORDER BY patient_id, study_id, anatomy, finding
LIMIT 1000
