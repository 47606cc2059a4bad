"""Every Cypher statement the loader writes with, in one place.

The graph model (labels PascalCase, relationship types UPPER_SNAKE, properties snake_case):

    (:Patient)-[:HAS_STUDY]->(:Study)-[:PRIOR {days}]->(:Study)
    (:Study)-[:HAS_IMAGE]->(:Image)        (:Study)-[:HAS_REPORT]->(:Report)
    (:Study)-[:HAS_OBSERVATION]->(:Observation)-[:OF_FINDING]->(:Finding)
    (:Observation)-[:LOCATED_AT]->(:Anatomy)
    (:Observation)-[:HAS_MENTION]->(:Mention)          one per source statement, with its file
    (:Observation)-[:PROGRESSION {change, source, evidence, files}]->(:Observation)   current -> prior
    (:Anatomy)-[:PART_OF]->(:Anatomy)      (:Finding)-[:IS_A]->(:Finding)
    (:SourceFile {path, sha256})           what has been loaded, for incremental runs

Observations are aggregates of their mentions, recomputed for every patient a load touches, so
loads are idempotent and their order does not matter. Statements take rows through UNWIND.
"""

CONSTRAINTS = [
    ("patient_id", "Patient", "patient_id"),
    ("study_id", "Study", "study_id"),
    ("image_id", "Image", "image_id"),
    ("report_id", "Report", "report_id"),
    ("anatomy_name", "Anatomy", "name"),
    ("finding_name", "Finding", "name"),
    ("observation_id", "Observation", "observation_id"),
    ("mention_id", "Mention", "mention_id"),
    ("source_file_path", "SourceFile", "path"),
]
NODE_INDEXES = [
    ("mention_file", "Mention", "file"),
    ("observation_finding", "Observation", "finding"),
    ("study_datetime", "Study", "study_datetime"),
]


def schema_statements() -> list[str]:
    """Uniqueness constraints and indexes, created before any load (``IF NOT EXISTS``: repeatable)."""
    out = [
        f"CREATE CONSTRAINT {name} IF NOT EXISTS FOR (n:{label}) REQUIRE n.{prop} IS UNIQUE"
        for name, label, prop in CONSTRAINTS
    ]
    out.append(
        "CREATE CONSTRAINT progression_id IF NOT EXISTS "
        "FOR ()-[r:PROGRESSION]-() REQUIRE r.progression_id IS UNIQUE"
    )
    out += [f"CREATE INDEX {name} IF NOT EXISTS FOR (n:{label}) ON (n.{prop})" for name, label, prop in NODE_INDEXES]
    out.append("CREATE INDEX progression_change IF NOT EXISTS FOR ()-[r:PROGRESSION]-() ON (r.change)")
    return out


MERGE_REGIONS = """
UNWIND $rows AS r
MERGE (a:Anatomy {name: r.name})
SET a.code = r.code, a.side = r.side, a.has_bbox = r.has_bbox, a.cuis = r.cuis, a.synonyms = r.synonyms
"""
MERGE_REGION_PARENTS = """
UNWIND $rows AS r
MATCH (a:Anatomy {name: r.name}), (p:Anatomy {name: r.parent})
MERGE (a)-[:PART_OF]->(p)
"""
MERGE_FINDINGS = """
UNWIND $rows AS r
MERGE (f:Finding {name: r.name})
SET f.category = r.category, f.cuis = r.cuis, f.synonyms = r.synonyms
"""
MERGE_FINDING_PARENTS = """
UNWIND $rows AS r
MATCH (f:Finding {name: r.name}), (p:Finding {name: r.parent})
MERGE (f)-[:IS_A]->(p)
"""

SOURCE_FILE_HASHES = """
UNWIND $paths AS path
MATCH (f:SourceFile {path: path})
RETURN f.path AS path, f.sha256 AS sha256, f.vocabulary_version AS vocabulary_version
"""

STUDY_OWNERS = """
UNWIND $study_ids AS sid
MATCH (s:Study {study_id: sid})
RETURN s.study_id AS study_id, s.patient_id AS patient_id, s.study_datetime AS study_datetime
"""

RETRACT_FILES = """
UNWIND $paths AS path
MATCH (m:Mention {file: path})
WITH m, m.study_id AS study_id
DETACH DELETE m
RETURN collect(DISTINCT study_id) AS study_ids
"""

# New nodes get their relationships with CREATE (a MERGE would first search them); the transient
# `_created` flag marks what this statement created.
MERGE_STUDIES = """
UNWIND $rows AS r
MERGE (p:Patient {patient_id: r.patient_id})
MERGE (s:Study {study_id: r.study_id})
ON CREATE SET s.patient_id = r.patient_id, s._created = true
SET s.study_datetime = coalesce(r.study_datetime, s.study_datetime)
WITH p, s WHERE s._created
CREATE (p)-[:HAS_STUDY]->(s)
REMOVE s._created
"""

MERGE_IMAGES = """
UNWIND $rows AS r
MATCH (s:Study {study_id: r.study_id})
MERGE (i:Image {image_id: r.image_id})
ON CREATE SET i._created = true
SET i.view = r.view, i.study_id = r.study_id
WITH s, i WHERE i._created
CREATE (s)-[:HAS_IMAGE]->(i)
REMOVE i._created
"""

MERGE_REPORTS = """
UNWIND $rows AS r
MATCH (s:Study {study_id: r.study_id})
MERGE (rep:Report {report_id: r.report_id})
ON CREATE SET rep._created = true
SET rep.text = r.text, rep.source = r.source, rep.unmapped_terms = r.unmapped_terms, rep.study_id = r.study_id
WITH s, rep WHERE rep._created
CREATE (s)-[:HAS_REPORT]->(rep)
REMOVE rep._created
"""

MERGE_OBSERVATIONS = """
UNWIND $rows AS r
MERGE (o:Observation {observation_id: r.observation_id})
ON CREATE SET o.study_id = r.study_id, o.anatomy = r.anatomy, o.finding = r.finding, o._created = true
WITH r, o WHERE o._created
MATCH (s:Study {study_id: r.study_id})
MATCH (a:Anatomy {name: r.anatomy})
MATCH (f:Finding {name: r.finding})
CREATE (s)-[:HAS_OBSERVATION]->(o), (o)-[:OF_FINDING]->(f), (o)-[:LOCATED_AT]->(a)
REMOVE o._created
"""

MERGE_MENTIONS = """
UNWIND $rows AS r
MERGE (m:Mention {mention_id: r.mention_id})
ON CREATE SET m._created = true
SET m += r.props
WITH r, m WHERE m._created
MATCH (o:Observation {observation_id: r.observation_id})
CREATE (o)-[:HAS_MENTION]->(m)
REMOVE m._created
"""

MERGE_SOURCE_FILES = """
UNWIND $rows AS r
MERGE (f:SourceFile {path: r.path})
SET f.sha256 = r.sha256, f.format = r.format, f.records = r.records, f.rejected = r.rejected,
    f.vocabulary_version = r.vocabulary_version, f.loaded_at = localdatetime()
"""

# --- derived structure, recomputed per touched patient -------------------------------------------

LINK_PRIOR_STUDIES = """
UNWIND $patient_ids AS pid
MATCH (:Patient {patient_id: pid})-[:HAS_STUDY]->(s:Study)
WITH pid, s ORDER BY s.study_datetime, s.study_id
WITH pid, collect(s) AS studies
CALL (studies) {
  UNWIND studies AS s
  MATCH (s)-[old:PRIOR]->()
  DELETE old
}
CALL (studies) {
  UNWIND range(0, size(studies) - 1) AS i
  WITH studies[i] AS s, i
  SET s.study_order = i + 1
}
UNWIND range(1, size(studies) - 1) AS i
WITH studies[i] AS cur, studies[i - 1] AS prev
CREATE (cur)-[:PRIOR {days: duration.inDays(prev.study_datetime, cur.study_datetime).days}]->(prev)
"""

# An observation's polarity is the strongest claim among its mentions: present > uncertain > absent;
# severity is the highest stated. Observations left without mentions (placeholders for a stated
# change, or retracted files) are removed and re-created below when still needed.
AGGREGATE_OBSERVATIONS = """
UNWIND $patient_ids AS pid
MATCH (:Patient {patient_id: pid})-[:HAS_STUDY]->(:Study)-[:HAS_OBSERVATION]->(o:Observation)
WITH o, COLLECT { MATCH (o)-[:HAS_MENTION]->(m:Mention) RETURN m.polarity } AS pols,
     COUNT { (o)-[:HAS_MENTION]->(:Mention) } AS n
CALL (o, n) {
  WITH o WHERE n = 0
  DETACH DELETE o
}
WITH o, pols WHERE n > 0
SET o.polarity = CASE WHEN 'present' IN pols THEN 'present' WHEN 'uncertain' IN pols THEN 'uncertain'
                      WHEN 'absent' IN pols THEN 'absent' ELSE null END,
    o.severity_score = COLLECT { MATCH (o)-[:HAS_MENTION]->(m:Mention) WHERE m.severity_score IS NOT NULL
                                 RETURN m.severity_score ORDER BY m.severity_score DESC LIMIT 1 }[0],
    o.severity = COLLECT { MATCH (o)-[:HAS_MENTION]->(m:Mention) WHERE m.severity_score IS NOT NULL
                           RETURN m.severity ORDER BY m.severity_score DESC, m.severity LIMIT 1 }[0],
    o.sources = COLLECT { MATCH (o)-[:HAS_MENTION]->(m:Mention) RETURN DISTINCT m.source ORDER BY m.source },
    o.stated_changes = COLLECT { MATCH (o)-[:HAS_MENTION]->(m:Mention) WHERE m.change IS NOT NULL
                                 RETURN DISTINCT m.change ORDER BY m.change },
    o.evidence = COLLECT { MATCH (o)-[:HAS_MENTION]->(m:Mention) WHERE m.evidence <> ''
                           RETURN DISTINCT m.evidence ORDER BY m.evidence LIMIT 5 }
"""

DELETE_DERIVED_PROGRESSIONS = """
UNWIND $patient_ids AS pid
MATCH (:Patient {patient_id: pid})-[:HAS_STUDY]->(:Study)-[:HAS_OBSERVATION]->(:Observation)-[r:PROGRESSION]->()
WHERE r.source <> 'gnn'
DELETE r
"""

# Stated changes: Chest ImaGenome names its prior image; RadGraph2 change entities refer to the
# study's prior study. A statement whose prior is not in the graph stays on its Mention only.
LINK_STATED_PROGRESSIONS = """
UNWIND $patient_ids AS pid
MATCH (:Patient {patient_id: pid})-[:HAS_STUDY]->(s:Study)-[:HAS_OBSERVATION]->(o:Observation)-[:HAS_MENTION]->(m:Mention)
WHERE m.change IS NOT NULL
OPTIONAL MATCH (named:Study)-[:HAS_IMAGE]->(:Image {image_id: m.prior_image_id})
OPTIONAL MATCH (s)-[:PRIOR]->(previous:Study)
WITH s, o, m, CASE WHEN m.prior_image_id IS NULL THEN previous ELSE named END AS ps
WHERE ps IS NOT NULL AND ps <> s
WITH o, ps, m ORDER BY m.mention_id
WITH o, ps, m.source AS source, m.change AS change, collect(m) AS ms
MATCH (a:Anatomy {name: o.anatomy}), (f:Finding {name: o.finding})
MERGE (po:Observation {observation_id: ps.study_id + '|' + o.anatomy + '|' + o.finding})
ON CREATE SET po.study_id = ps.study_id, po.anatomy = o.anatomy, po.finding = o.finding, po.polarity = null
MERGE (ps)-[:HAS_OBSERVATION]->(po)
MERGE (po)-[:OF_FINDING]->(f)
MERGE (po)-[:LOCATED_AT]->(a)
CREATE (o)-[:PROGRESSION {
  progression_id: o.observation_id + '>' + po.observation_id + '|' + source + '|' + change,
  change: change, source: source,
  evidence: [x IN ms | x.evidence], files: [x IN ms | x.file], change_labels: [x IN ms | x.change_label]
}]->(po)
"""

LINK_PRESENCE_PROGRESSIONS = """
UNWIND $patient_ids AS pid
MATCH (:Patient {patient_id: pid})-[:HAS_STUDY]->(s:Study)-[:PRIOR]->(ps:Study)
MATCH (s)-[:HAS_OBSERVATION]->(o:Observation)
WHERE o.polarity IN ['present', 'absent']
MATCH (po:Observation {observation_id: ps.study_id + '|' + o.anatomy + '|' + o.finding})
WHERE po.polarity IN ['present', 'absent'] AND po.polarity <> o.polarity
WITH o, po, CASE o.polarity WHEN 'present' THEN 'new' ELSE 'resolved' END AS change
CREATE (o)-[:PROGRESSION {
  progression_id: o.observation_id + '>' + po.observation_id + '|presence|' + change,
  change: change, source: 'presence', evidence: [], files: [], change_labels: []
}]->(po)
"""
