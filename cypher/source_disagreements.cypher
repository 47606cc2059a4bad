// name: source_disagreements
// purpose: Observations on which the sources disagree, optionally for one patient. kind change: the
//          same current and prior observation with stated changes that differ (Chest ImaGenome against a
//          RadGraph2 change entity), or a stated change that contradicts the derived one (stated "no
//          change" where the finding was stated absent before); changes lists every change on the pair.
//          kind polarity: one source states the finding present and another absent in the same study
//          (NIH text-mined labels against the radiologist-adjudicated ones). Starts from the
//          observations the ingest's link step marks with source_conflict (an index).
// param: patient_id string   the patient, or "" for all patients
// columns: patient_id, study_id, prior_study_id, anatomy, finding, kind, changes
CALL () {
  MATCH (o:Observation {source_conflict: true})
  WHERE $patient_id = ''
  RETURN o
  UNION
  MATCH (:Patient {patient_id: $patient_id})-[:HAS_STUDY]->(:Study)-[:HAS_OBSERVATION]->(o:Observation)
  WHERE o.source_conflict
  RETURN o
}
CALL (o) {
  WITH o WHERE 'change' IN o.conflict_kinds
  MATCH (o)-[r:PROGRESSION]->(po:Observation)
  WHERE r.source <> 'gnn'
  WITH po, collect(DISTINCT r.change) AS kinds,
       COLLECT { MATCH (o)-[x:PROGRESSION]->(po) WHERE x.source <> 'gnn'
                 RETURN DISTINCT x.change + ' (' + x.source + ')' AS c ORDER BY c } AS changes
  WHERE size(kinds) > 1
  RETURN 'change' AS kind, po.study_id AS prior_study_id, changes
  UNION ALL
  WITH o WHERE 'polarity' IN o.conflict_kinds
  RETURN 'polarity' AS kind, null AS prior_study_id,
         COLLECT { MATCH (o)-[:HAS_MENTION]->(m:Mention) WHERE m.polarity IS NOT NULL
                   RETURN DISTINCT m.polarity + ' (' + m.source + ')' AS c ORDER BY c } AS changes
}
MATCH (s:Study {study_id: o.study_id})
RETURN s.patient_id AS patient_id, s.study_id AS study_id, prior_study_id, o.anatomy AS anatomy,
       o.finding AS finding, kind, changes
ORDER BY patient_id, study_id, anatomy, finding, kind
LIMIT 1000
