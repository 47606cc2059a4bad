"""Read-only Cypher of the five-visit questions (:mod:`graph.temporal.multivisit_facts` builds their values).

One row per study of the given patients: its patient, date, rank (``study_order``), the previous study its
PRIOR link names (with that study's patient, so a link across patients shows), the study's images (id and
view, by image id), and the study-level PROGRESSION edges from its StudyFindings to the PRIOR study's
(stated and derived; the progression model's predictions, source ``gnn``, are not the patient's history and
are left out) with the ids and states of both StudyFindings, the sides present by implication only, and
whether each study states the finding itself present or uncertain (an Observation of that very finding,
not of a narrower one).
"""

# The patients with at least $visits studies (the others cannot have a window), in id order.
PATIENTS_WITH_VISITS = """
MATCH (p:Patient)
WITH p, COUNT { (p)-[:HAS_STUDY]->(:Study) } AS n
WHERE n >= $visits
RETURN p.patient_id AS patient_id ORDER BY patient_id
"""

STUDY_TIMELINE = """
UNWIND $patient_ids AS pid
MATCH (p:Patient {patient_id: pid})-[:HAS_STUDY]->(s:Study)
OPTIONAL MATCH (s)-[:PRIOR]->(ps:Study)
RETURN s.study_id AS study_id, p.patient_id AS patient_id, toString(s.study_datetime) AS study_datetime,
       s.study_order AS study_order, ps.study_id AS prior_id, ps.patient_id AS prior_patient_id,
       COLLECT { MATCH (s)-[:HAS_IMAGE]->(i:Image) WITH i ORDER BY i.image_id
                 RETURN [i.image_id, i.view] } AS images,
       COLLECT { MATCH (s)-[:HAS_STUDY_FINDING]->(n:StudyFinding)-[r:PROGRESSION]->(pn:StudyFinding)
                 WHERE pn.study_id = ps.study_id AND r.basis IN ['stated', 'derived'] AND r.source <> 'gnn'
                 RETURN [n.finding, r.change, r.basis, r.source, r.progression_id, coalesce(r.implied, []),
                         n.study_finding_id, pn.study_finding_id, n.state, pn.state,
                         EXISTS { MATCH (s)-[:HAS_OBSERVATION]->(o:Observation {finding: n.finding})
                                  WHERE o.polarity IN ['present', 'uncertain'] },
                         EXISTS { MATCH (ps)-[:HAS_OBSERVATION]->(o:Observation {finding: n.finding})
                                  WHERE o.polarity IN ['present', 'uncertain'] }] } AS changes
"""
