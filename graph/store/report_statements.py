"""Read-only Cypher of report scoring (:func:`graph.report_scoring.facts.cohort_facts` builds its values).

Per study: its patient and prior (the PRIOR link), the first stored report of each (by report id), the
StudyFinding states of both, and the study-level PROGRESSION edges between them; the progression model's
predictions (source ``gnn``) are not the patient's history and are left out.
"""

STUDY_FACTS = """
MATCH (s:Study) WHERE $study_ids IS NULL OR s.study_id IN $study_ids
OPTIONAL MATCH (s)-[:PRIOR]->(p:Study)
RETURN s.study_id AS study_id, s.patient_id AS patient_id, p.study_id AS prior_study_id,
       COLLECT { MATCH (s)-[:HAS_REPORT]->(r:Report) RETURN r.text ORDER BY r.report_id LIMIT 1 } AS report,
       COLLECT { MATCH (p)-[:HAS_REPORT]->(r:Report) RETURN r.text ORDER BY r.report_id LIMIT 1 } AS prior_report,
       COLLECT { MATCH (s)-[:HAS_STUDY_FINDING]->(n:StudyFinding) RETURN [n.finding, n.state] } AS states,
       COLLECT { MATCH (p)-[:HAS_STUDY_FINDING]->(n:StudyFinding) RETURN [n.finding, n.state] } AS prior_states,
       COLLECT { MATCH (s)-[:HAS_STUDY_FINDING]->(n:StudyFinding)-[r:PROGRESSION]->(pn:StudyFinding)
                 WHERE pn.study_id = p.study_id AND r.source <> 'gnn'
                 RETURN [n.finding, r.change, r.basis, r.source, r.evidence] } AS changes
"""
