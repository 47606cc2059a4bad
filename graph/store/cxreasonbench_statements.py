"""Read-only Cypher of the CXReasonBench-style items (:mod:`graph.cxreasonbench.facts`).

One row per image of the given patients that has Measurement nodes (the loaders write them for every image
with an anatomy box): its study, patient and view, each Measurement's fields, and the image's Chest
ImaGenome boxes in original pixels (the body-part stage shows them).
"""

IMAGE_MEASUREMENTS = """
UNWIND $patient_ids AS pid
MATCH (p:Patient {patient_id: pid})-[:HAS_STUDY]->(s:Study)-[:HAS_IMAGE]->(i:Image)
WHERE EXISTS { (i)-[:HAS_MEASUREMENT]->(:Measurement) }
RETURN i.image_id AS image_id, s.study_id AS study_id, p.patient_id AS patient_id, i.view AS view,
       COLLECT { MATCH (i)-[:HAS_MEASUREMENT]->(m:Measurement)
                 RETURN [m.measurement_id, m.name, m.task, m.value, m.threshold, m.decision, m.direction,
                         m.regions, m.reason] } AS measurements,
       COLLECT { MATCH (i)-[:HAS_BBOX]->(b:BoundingBox)
                 RETURN [b.bbox_id, b.bbox_name, b.original_x1, b.original_y1, b.original_x2, b.original_y2]
               } AS boxes
"""
