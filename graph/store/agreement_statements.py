"""Read-only Cypher of the geometry's agreement with the truth and the reports (:mod:`graph.checks.geometry_agreement`).

The geometry's decisions are its GeometryObservation nodes (one per study and finding, state present or absent,
from the study's measured image); the reports' are the Observation nodes of the same findings, whose polarity
is what the report sources state (Chest ImaGenome, RadGraph, Lunguage). The two never share a node.
"""

GEOMETRY_DECISIONS = """
MATCH (s:Study)-[:HAS_GEOMETRY_OBSERVATION]->(g:GeometryObservation)
WHERE g.finding IN $findings
RETURN s.study_id AS study_id, g.image_id AS image_id, g.finding AS finding, g.state AS state
"""

STATED_FINDINGS = """
MATCH (s:Study)-[:HAS_OBSERVATION]->(o:Observation)
WHERE o.finding IN $findings AND o.polarity IN $polarities
RETURN DISTINCT s.study_id AS study_id, o.finding AS finding, o.polarity AS polarity
"""

STUDIES = """
MATCH (p:Patient)-[:HAS_STUDY]->(s:Study)
RETURN s.study_id AS study_id, p.patient_id AS patient_id
"""
