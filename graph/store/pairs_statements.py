"""Read-only Cypher of the progression pairs in MS-CXR-T's columns (:mod:`graph.temporal.pairs`).

One row per PRIOR link (a study and the study the graph orders before it): both studies' patient and date
as the nodes hold them (so that a link to another patient's study, or between two studies of one date, shows),
the images of each (ordered by image id) with their view, and the study-level PROGRESSION edges from the
study's StudyFinding nodes of the given findings to the prior study's, stated and derived (the progression
model's edges, source ``gnn``, are predictions, not the patient's history, and are left out).
"""

PAIR_FACTS = """
MATCH (s:Study)-[:PRIOR]->(ps:Study)
RETURN s.study_id AS study_id, s.patient_id AS patient_id, s.study_datetime AS study_datetime,
       ps.study_id AS prior_id, ps.patient_id AS prior_patient_id, ps.study_datetime AS prior_datetime,
       COLLECT { MATCH (s)-[:HAS_IMAGE]->(i:Image) WITH i ORDER BY i.image_id RETURN [i.image_id, i.view] } AS images,
       COLLECT { MATCH (ps)-[:HAS_IMAGE]->(i:Image) WITH i ORDER BY i.image_id
                 RETURN [i.image_id, i.view] } AS prior_images,
       COLLECT { MATCH (s)-[:HAS_STUDY_FINDING]->(n:StudyFinding)-[r:PROGRESSION]->(pn:StudyFinding)
                 WHERE pn.study_id = ps.study_id AND n.finding IN $findings AND r.basis IN ['stated', 'derived']
                       AND r.source <> 'gnn'
                 RETURN [n.finding, r.change, r.basis, r.source] } AS changes
"""
