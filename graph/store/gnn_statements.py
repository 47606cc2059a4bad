"""Cypher of the gnn package: the snapshot export's reads and the write-back of predicted progression edges
(re-exported by :mod:`graph.store.statements`, where the rest of the loader's statements are)."""

# --- GNN predictions -------------------------------------------------------------------------------
# Reads for the gnn package's snapshot export (read transactions, one chunk of patients at a time, every
# result fully ordered so the snapshot and its content hash are deterministic) and the write-back of
# predicted progression edges (source 'gnn'; stated edges are never touched).

GNN_PATIENT_IDS = """
MATCH (p:Patient)
RETURN p.patient_id AS patient_id ORDER BY patient_id
"""

GNN_STUDIES = """
UNWIND $patient_ids AS pid
MATCH (p:Patient {patient_id: pid})-[:HAS_STUDY]->(s:Study)
OPTIONAL MATCH (s)-[pr:PRIOR]->(ps:Study)
RETURN pid AS patient_id, s.study_id AS study_id, toString(s.study_datetime) AS study_datetime,
       s.study_order AS study_order, ps.study_id AS prior_study_id, pr.days AS prior_days,
       s.age_decile AS age_decile, p.gender AS gender
ORDER BY patient_id, study_order, study_id
"""

# Study-level states (present / uncertain / absent / not_mentioned) as the link step derived them; a
# (study, finding) without a StudyFinding is not mentioned.
GNN_STUDY_FINDINGS = """
UNWIND $patient_ids AS pid
MATCH (:Patient {patient_id: pid})-[:HAS_STUDY]->(s:Study)-[:HAS_STUDY_FINDING]->(sf:StudyFinding)
RETURN s.study_id AS study_id, sf.finding AS finding, sf.state AS state
ORDER BY study_id, finding
"""

GNN_IMAGES = """
UNWIND $patient_ids AS pid
MATCH (:Patient {patient_id: pid})-[:HAS_STUDY]->(s:Study)-[:HAS_IMAGE]->(i:Image)
RETURN s.study_id AS study_id, i.image_id AS image_id, i.view AS view
ORDER BY study_id, image_id
"""

# Observation inputs come from the polarity-bearing mentions only (source, polarity, severity score):
# never a mention's change, change label, prior image or evidence text, and never a PROGRESSION edge.
# Observations with no such mention (placeholders a stated change created) are not inputs.
GNN_OBSERVATION_MENTIONS = """
UNWIND $patient_ids AS pid
MATCH (:Patient {patient_id: pid})-[:HAS_STUDY]->(s:Study)-[:HAS_OBSERVATION]->(o:Observation)-[:HAS_MENTION]->(m:Mention)
WHERE m.polarity IS NOT NULL
WITH s.study_id AS study_id, o.anatomy AS anatomy, o.finding AS finding, m.source AS source,
     sum(CASE m.polarity WHEN 'present' THEN 1 ELSE 0 END) AS n_present,
     sum(CASE m.polarity WHEN 'absent' THEN 1 ELSE 0 END) AS n_absent,
     sum(CASE m.polarity WHEN 'uncertain' THEN 1 ELSE 0 END) AS n_uncertain,
     max(m.severity_score) AS max_severity
RETURN study_id, anatomy, finding, source, n_present, n_absent, n_uncertain, max_severity
ORDER BY study_id, anatomy, finding, source
"""

# Labels: the stated progression edges (Chest ImaGenome comparisons, RadGraph2 change entities).
GNN_STATED_PROGRESSIONS = """
UNWIND $patient_ids AS pid
MATCH (:Patient {patient_id: pid})-[:HAS_STUDY]->(s:Study)-[:HAS_OBSERVATION]->(o:Observation)-[r:PROGRESSION]->(po:Observation)
WHERE r.source IN ['chest_imagenome', 'radgraph']
RETURN s.study_id AS study_id, po.study_id AS prior_study_id, o.anatomy AS anatomy, o.finding AS finding,
       r.source AS source, r.change AS change
ORDER BY study_id, prior_study_id, anatomy, finding, source, change
"""

GNN_ANATOMY = """
MATCH (a:Anatomy)
OPTIONAL MATCH (a)-[:PART_OF]->(p:Anatomy)
RETURN a.name AS name, a.side AS side, p.name AS parent ORDER BY name
"""

GNN_FINDINGS = """
MATCH (f:Finding)
RETURN f.name AS name, f.category AS category,
       COLLECT { MATCH (f)-[:IS_A]->(p:Finding) RETURN p.name ORDER BY p.name } AS parents
ORDER BY name
"""

GNN_VOCABULARY_VERSIONS = """
MATCH (f:SourceFile) WHERE f.vocabulary_version IS NOT NULL
RETURN DISTINCT f.vocabulary_version AS version ORDER BY version
"""

DELETE_GNN_PROGRESSIONS = """
UNWIND $patient_ids AS pid
MATCH (:Patient {patient_id: pid})-[:HAS_STUDY]->(:Study)-[:HAS_OBSERVATION]->(:Observation)-[r:PROGRESSION {source: 'gnn'}]->()
DELETE r
"""

# One predicted edge per (current, prior) observation pair; an observation the pair needs but the graph
# lacks (the finding was not mentioned in that study) is created as a placeholder without mentions,
# the way stated changes do. A pair that has a stated edge gets no prediction.
WRITE_GNN_PROGRESSIONS = """
UNWIND $rows AS r
MATCH (s:Study {study_id: r.study_id}), (ps:Study {study_id: r.prior_study_id})
MATCH (a:Anatomy {name: r.anatomy}), (f:Finding {name: r.finding})
MERGE (o:Observation {observation_id: s.study_id + '|' + r.anatomy + '|' + r.finding})
ON CREATE SET o.study_id = s.study_id, o.anatomy = r.anatomy, o.finding = r.finding, o.polarity = null
MERGE (po:Observation {observation_id: ps.study_id + '|' + r.anatomy + '|' + r.finding})
ON CREATE SET po.study_id = ps.study_id, po.anatomy = r.anatomy, po.finding = r.finding, po.polarity = null
MERGE (s)-[:HAS_OBSERVATION]->(o)
MERGE (o)-[:OF_FINDING]->(f)
MERGE (o)-[:LOCATED_AT]->(a)
MERGE (ps)-[:HAS_OBSERVATION]->(po)
MERGE (po)-[:OF_FINDING]->(f)
MERGE (po)-[:LOCATED_AT]->(a)
WITH r, o, po
WHERE NOT EXISTS { (o)-[x:PROGRESSION]->(po) WHERE x.source IN ['chest_imagenome', 'radgraph'] }
CREATE (o)-[:PROGRESSION {
  progression_id: o.observation_id + '>' + po.observation_id + '|gnn',
  change: r.change, source: 'gnn', probability: r.probability, classes: r.classes,
  probabilities: r.probabilities, model_version: r.model_version, snapshot_hash: r.snapshot_hash
}]->(po)
RETURN count(*) AS written
"""

# Stated and predicted changes of one study pair, for `cxrkg compare`.
GNN_PAIR_CHANGES = """
MATCH (s:Study {study_id: $study_id})-[:HAS_OBSERVATION]->(o:Observation)-[r:PROGRESSION]->(po:Observation {study_id: $prior_study_id})
WHERE r.source IN ['chest_imagenome', 'radgraph', 'gnn']
RETURN o.anatomy AS anatomy, o.finding AS finding, r.source AS source, r.change AS change,
       r.probability AS probability, r.model_version AS model_version
ORDER BY anatomy, finding, source, change
"""
