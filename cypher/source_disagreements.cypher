// name: source_disagreements
// purpose: Observations on which the sources disagree, optionally for one patient. kind change: a
//          current and prior observation whose stated changes disagree (Chest ImaGenome against a
//          RadGraph2 change entity), or a stated change that contradicts the derived one (stated "no
//          change" where the finding was stated absent before), under the compatibility the event rules
//          use: an appearing finding "worsened" (Chest ImaGenome's convention) agrees with "new",
//          "improved" with "resolved"; changes lists every change on the pair. kind polarity: one source
//          states the finding present and another absent in the same study (NIH text-mined labels
//          against the radiologist-adjudicated ones). Starts from the observations the ingest's link
//          step marks with source_conflict (an index). At most max_rows rows, in order; truncated is true
//          on every row when more disagreements exist.
// param: patient_id string   the patient, or "" for all patients
// param: max_rows int=1000   the most rows returned
// columns: patient_id, study_id, prior_study_id, anatomy, finding, kind, changes, truncated
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
  UNWIND o.conflict_priors AS prior_id
  MATCH (o)-[:PROGRESSION]->(po:Observation {study_id: prior_id})
  WITH DISTINCT o, po
  RETURN 'change' AS kind, po.study_id AS prior_study_id,
         COLLECT { MATCH (o)-[x:PROGRESSION]->(po) WHERE x.source <> 'gnn'
                   RETURN DISTINCT x.change + ' (' + x.source + ')' AS c ORDER BY c } AS changes
  UNION ALL
  WITH o WHERE 'polarity' IN o.conflict_kinds
  RETURN 'polarity' AS kind, null AS prior_study_id,
         COLLECT { MATCH (o)-[:HAS_MENTION]->(m:Mention) WHERE m.polarity IS NOT NULL
                   RETURN DISTINCT m.polarity + ' (' + m.source + ')' AS c ORDER BY c } AS changes
}
WITH o.patient_id AS patient_id, o.study_id AS study_id, prior_study_id, o.anatomy AS anatomy,
     o.finding AS finding, kind, changes
ORDER BY patient_id, study_id, anatomy, finding, kind, prior_study_id
WITH collect([patient_id, study_id, prior_study_id, anatomy, finding, kind, changes]) AS rows
UNWIND rows[..$max_rows] AS r
RETURN r[0] AS patient_id, r[1] AS study_id, r[2] AS prior_study_id, r[3] AS anatomy, r[4] AS finding,
       r[5] AS kind, r[6] AS changes, size(rows) > $max_rows AS truncated
