// name: patient_measurements
// purpose: A patient's anatomy-box measurements over time (graph.measurements, docs/measurements.md): one row
//          per image with boxes, in study order, with the cardiothoracic ratio, the mediastinal width ratio
//          and the rotation ratio beside their decisions for the image's view (cardiomegaly,
//          mediastinal_widening, rotated: yes / no, by CheXStruct's thresholds) and the inclusion (complete,
//          mixed, cut off). A view the thresholds do not cover has values and no decisions; a measurement
//          without a value is listed in reasons as "name: reason". Measured from the boxes, never a report's
//          statement (geometry_vs_reports holds the two side by side).
// param: patient_id string   the patient
// columns: study_order, study_id, study_datetime, image_id, view, cardiothoracic_ratio, cardiomegaly, mediastinal_width_ratio, mediastinal_widening, rotation_ratio, rotated, inclusion, reasons
MATCH (:Patient {patient_id: $patient_id})-[:HAS_STUDY]->(s:Study)-[:HAS_IMAGE]->(i:Image)
WITH s, i, COLLECT { MATCH (i)-[:HAS_MEASUREMENT]->(m:Measurement) RETURN m ORDER BY m.name } AS ms
WHERE size(ms) > 0
WITH s, i, ms, [m IN ms WHERE m.name = 'cardiothoracic_ratio'][0] AS ctr,
     [m IN ms WHERE m.name = 'mediastinal_width_ratio'][0] AS mw, [m IN ms WHERE m.name = 'rotation_ratio'][0] AS rot,
     [m IN ms WHERE m.name = 'inclusion'][0] AS inc
RETURN s.study_order AS study_order, s.study_id AS study_id, toString(s.study_datetime) AS study_datetime,
       i.image_id AS image_id, coalesce(ctr.view, i.view) AS view, ctr.value AS cardiothoracic_ratio,
       ctr.decision AS cardiomegaly, mw.value AS mediastinal_width_ratio, mw.decision AS mediastinal_widening,
       rot.value AS rotation_ratio, rot.decision AS rotated, inc.decision AS inclusion,
       [m IN ms WHERE m.reason IS NOT NULL | m.name + ': ' + m.reason] AS reasons
ORDER BY study_order, image_id
