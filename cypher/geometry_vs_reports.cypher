// name: geometry_vs_reports
// purpose: Studies where the anatomy-box geometry and the reports disagree on a finding the geometry decides:
//          task heart (default: CheXStruct's cardiomegaly, the cardiothoracic ratio against its threshold for
//          the view; the finding enlarged cardiac silhouette) or mediastinum (mediastinal widening, the
//          mediastinal width ratio). stated no (default): the geometry decides the finding present and no
//          report source states it (no Observation of the finding, or of a more specific one, present or
//          uncertain anywhere in the study); report_state then says whether a report states it absent or
//          nothing (not_mentioned). stated yes: a report source states it present or uncertain and the
//          geometry decides it absent. One row per study, from its GeometryObservation (the study's
//          measured image, docs/measurements.md), with the sources behind report_state; for one patient or,
//          with patient_id "", every patient.
// param: task {heart|mediastinum}=heart  heart: cardiomegaly; mediastinum: mediastinal widening
// param: stated {no|yes}=no   no: the geometry's finding no report states; yes: a stated one the geometry denies
// param: patient_id string   the patient, or "" for all patients
// columns: patient_id, study_id, study_datetime, image_id, view, measurement, value, threshold, geometry, report_state, sources
WITH CASE $task WHEN 'heart' THEN 'enlarged cardiac silhouette' ELSE 'mediastinal widening' END AS finding
WITH finding, [finding] + COLLECT { MATCH (f:Finding)-[:IS_A*1..]->(:Finding {name: finding}) RETURN DISTINCT f.name }
     AS names, CASE $stated WHEN 'no' THEN 'present' ELSE 'absent' END AS geometry
CALL (finding, geometry) {
  MATCH (g:GeometryObservation {finding: finding, state: geometry})
  WHERE $patient_id = ''
  RETURN g
  UNION
  MATCH (:Patient {patient_id: $patient_id})-[:HAS_STUDY]->(:Study)-[:HAS_GEOMETRY_OBSERVATION]->(g:GeometryObservation)
  WHERE g.finding = finding AND g.state = geometry
  RETURN g
}
MATCH (s:Study {study_id: g.study_id})
WITH g, COLLECT { MATCH (s)-[:HAS_OBSERVATION]->(o:Observation) WHERE o.finding IN names RETURN o } AS said
WITH g, said, [o IN said WHERE o.state IN ['present', 'uncertain']] AS stated
WHERE (size(stated) > 0) = ($stated = 'yes')
WITH g, CASE WHEN size(stated) > 0 THEN stated ELSE [o IN said WHERE o.state = 'absent'] END AS behind
WITH g, behind, CASE WHEN any(o IN behind WHERE o.state = 'present') THEN 'present'
                     WHEN any(o IN behind WHERE o.state = 'uncertain') THEN 'uncertain'
                     WHEN size(behind) > 0 THEN 'absent' ELSE 'not_mentioned' END AS report_state
OPTIONAL MATCH (g)-[:FROM_MEASUREMENT]->(m:Measurement)
RETURN g.patient_id AS patient_id, g.study_id AS study_id, toString(g.study_datetime) AS study_datetime,
       g.image_id AS image_id, m.view AS view, g.measurement AS measurement, g.value AS value,
       g.threshold AS threshold, g.state AS geometry, report_state,
       COLLECT { UNWIND behind AS o UNWIND coalesce(o.sources, []) AS x WITH DISTINCT x ORDER BY x RETURN x } AS sources
ORDER BY patient_id, g.study_datetime, study_id
