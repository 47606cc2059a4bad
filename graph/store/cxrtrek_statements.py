"""Read-only Cypher of the CXRTrek-format question sets (:mod:`graph.cxrtrek.facts`).

One row per study of the given patients, everything its staged questions need: its place in time with the
previous and next study (PRIOR links), its images (ordered by image id) with their view and the Chest
ImaGenome boxes of each (224 x 224 frame), the previous study's images, its stated observations (anatomy level, with the finding's
category and the highest stated severity word), the PROGRESSION edges from its observations to the previous
study's (stated and derived; the progression model's predictions left out) with the severity on both sides,
the observations of the next study, and the rotation and inclusion Measurement nodes of its images (written by
the loaders from the anatomy boxes, graph.measurements).
"""

STUDY_STAGE_FACTS = """
UNWIND $patient_ids AS pid
MATCH (p:Patient {patient_id: pid})-[:HAS_STUDY]->(s:Study)
OPTIONAL MATCH (s)-[:PRIOR]->(ps:Study)
OPTIONAL MATCH (ns:Study)-[:PRIOR]->(s)
RETURN s.study_id AS study_id, p.patient_id AS patient_id, s.study_order AS study_order,
       ps.study_id AS prior_id, ns.study_id AS next_id,
       COLLECT { MATCH (s)-[:HAS_IMAGE]->(i:Image) WITH i ORDER BY i.image_id
                 RETURN [i.image_id, i.view] } AS images,
       COLLECT { MATCH (s)-[:HAS_IMAGE]->(i:Image)-[:HAS_BBOX]->(b:BoundingBox)
                 RETURN [b.bbox_id, i.image_id, b.bbox_name, b.x1, b.y1, b.x2, b.y2] } AS boxes,
       COLLECT { MATCH (s)-[:HAS_OBSERVATION]->(o:Observation)-[:OF_FINDING]->(f:Finding)
                 WHERE o.polarity IS NOT NULL
                 RETURN [o.observation_id, o.anatomy, o.finding, f.category, o.polarity, o.severity] } AS observations,
       COLLECT { MATCH (s)-[:HAS_OBSERVATION]->(o:Observation)-[r:PROGRESSION]->(po:Observation)
                 WHERE r.basis IN ['stated', 'derived'] AND po.study_id = ps.study_id
                 RETURN [r.progression_id, o.anatomy, o.finding, r.change, r.basis, o.severity, po.severity,
                         o.observation_id, po.observation_id] } AS changes,
       COLLECT { MATCH (s)-[:PRIOR]->(:Study)-[:HAS_IMAGE]->(i:Image) WITH i ORDER BY i.image_id
                 RETURN [i.image_id, i.view] } AS prior_images,
       COLLECT { MATCH (s)<-[:PRIOR]-(:Study)-[:HAS_OBSERVATION]->(no:Observation) WHERE no.polarity IS NOT NULL
                 RETURN [no.observation_id, no.anatomy, no.finding, no.polarity] } AS next_observations,
       COLLECT { MATCH (s)-[:HAS_IMAGE]->(i:Image)-[:HAS_MEASUREMENT]->(m:Measurement)
                 WHERE m.task IN ['rotation', 'inclusion']
                 RETURN [m.measurement_id, i.image_id, m.name, m.value, m.threshold, m.decision, m.reason]
               } AS measurements
"""
