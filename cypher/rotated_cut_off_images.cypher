// name: rotated_cut_off_images
// purpose: Images whose anatomy boxes say the film is rotated (CheXStruct's rotation ratio, the nearer over
//          the farther clavicle's medial edge from the spine's centre, under 0.4) or cut off (an apex, a lung's
//          side or a costophrenic angle at or past the image's border: inclusion cut off), per patient in
//          study order: one row per image, for one patient or, with patient_id "", every patient. cut_off_parts
//          names the excluded parts (apex_right, side_left, bottom_right ...); a film with only a mixed bottom
//          (0.03 to 0.09 of the height below the angle) is not cut off. Reads the (task, decision) index.
// param: patient_id string   the patient, or "" for all patients
// columns: patient_id, study_id, study_datetime, image_id, view, rotated, rotation_ratio, cut_off, cut_off_parts
CALL () {
  MATCH (m:Measurement)
  WHERE $patient_id = '' AND ((m.task = 'rotation' AND m.decision = 'yes') OR (m.task = 'inclusion' AND m.decision = 'cut off'))
  RETURN DISTINCT m.image_id AS image_id
  UNION
  MATCH (:Patient {patient_id: $patient_id})-[:HAS_STUDY]->(:Study)-[:HAS_IMAGE]->(:Image)-[:HAS_MEASUREMENT]->(m:Measurement)
  WHERE (m.task = 'rotation' AND m.decision = 'yes') OR (m.task = 'inclusion' AND m.decision = 'cut off')
  RETURN DISTINCT m.image_id AS image_id
}
MATCH (s:Study)-[:HAS_IMAGE]->(i:Image {image_id: image_id})
WITH s, i, COLLECT { MATCH (i)-[:HAS_MEASUREMENT]->(m:Measurement) WHERE m.task IN ['rotation', 'inclusion'] RETURN m
                     ORDER BY m.name } AS ms
WITH s, i, [m IN ms WHERE m.name = 'rotation_ratio'][0] AS rot, [m IN ms WHERE m.name = 'inclusion'][0] AS inc,
     [m IN ms WHERE m.name STARTS WITH 'inclusion_' AND m.decision = 'excluded' | substring(m.name, 10)] AS parts
RETURN s.patient_id AS patient_id, s.study_id AS study_id, toString(s.study_datetime) AS study_datetime,
       i.image_id AS image_id, coalesce(rot.view, i.view) AS view, coalesce(rot.decision = 'yes', false) AS rotated,
       rot.value AS rotation_ratio, coalesce(inc.decision = 'cut off', false) AS cut_off, parts AS cut_off_parts
ORDER BY patient_id, s.study_datetime, study_id, image_id
