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
    ("mention_file_key", "Mention", ("file_key",)),
    ("observation_finding", "Observation", ("finding",)),
    ("observation_onset", "Observation", ("finding", "onset_datetime")),
    ("observation_source_conflict", "Observation", ("source_conflict",)),
    ("study_datetime", "Study", ("study_datetime",)),
]


def schema_statements() -> list[str]:
    """Uniqueness constraints and indexes, created before any load (``IF NOT EXISTS``: repeatable)."""
    out = [
        f"CREATE CONSTRAINT {name} IF NOT EXISTS FOR (n:{label}) REQUIRE n.{prop} IS UNIQUE"
        for name, label, prop in CONSTRAINTS
    ]
    out += [f"CREATE INDEX {name} IF NOT EXISTS FOR (n:{label}) ON ({', '.join(f'n.{p}' for p in props)})"
            for name, label, props in NODE_INDEXES]
    out.append("CREATE INDEX progression_change IF NOT EXISTS FOR ()-[r:PROGRESSION]-() ON (r.change)")
    return out


# Schema migration of earlier graphs (see graph.store._migrate_schema).
LEGACY_MENTION_FILE_INDEX = "SHOW INDEXES YIELD name WHERE name = 'mention_file' RETURN name"
MENTION_FILES_WITHOUT_KEY = "MATCH (m:Mention) WHERE m.file_key IS NULL RETURN DISTINCT m.file AS file"
SET_MENTION_FILE_KEYS = """
UNWIND $rows AS r
CALL (r) {
  MATCH (m:Mention {file: r.path})
  SET m.file_key = r.key
} IN TRANSACTIONS OF 200 ROWS
"""
LEGACY_SCHEMA_DROPS = ["DROP INDEX mention_file IF EXISTS", "DROP CONSTRAINT progression_id IF EXISTS"]

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

# Serialises concurrent runs per patient: every batch write and link transaction first takes the write
# locks of its patients (ids sorted, so two transactions never wait on each other in a cycle here).
# Without it, a link step could read a patient before another run's batch for that patient commits,
# commit after that run's own link step, and leave stale aggregates and edges behind.
LOCK_PATIENTS = """
UNWIND $patient_ids AS pid
MERGE (p:Patient {patient_id: pid})
SET p._lock = true
REMOVE p._lock
"""

# Mentions are found by their file through an index on ``file_key`` (see ``graph.records.file_key``):
# an index on the path strings themselves cost a quarter of the server's load time.
RETRACT_FILES = """
UNWIND $files AS file
MATCH (o:Observation)-[:HAS_MENTION]->(m:Mention {file_key: file.key})
WHERE m.file = file.path
WITH m, o.study_id AS study_id
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
SET s.study_datetime = coalesce(localdatetime(r.study_datetime), s.study_datetime)
WITH p, s WHERE s._created
CREATE (p)-[:HAS_STUDY]->(s)
REMOVE s._created
"""

# Images, reports and mentions come from exactly one file each, so a file that was never loaded
# brings only new ones and CREATE skips MERGE's index seek and lock. A load that breaks a uniqueness
# constraint (the same scene graph under two paths, or two runs at once) is rolled back and redone
# with the MERGE variants (``merge=True``), which are also used for changed files.
def _single_file_nodes(label: str, key: str, props: tuple[str, ...], link: str, merge: bool) -> str:
    """Rows {key, study_id, *props}: one ``label`` node per row, linked from its Study by ``link``."""
    values = ", ".join(f"{p}: r.{p}" for p in (key, "study_id", *props))
    if not merge:
        return f"""
UNWIND $rows AS r
MATCH (s:Study {{study_id: r.study_id}})
CREATE (s)-[:{link}]->(:{label} {{{values}}})
"""
    return f"""
UNWIND $rows AS r
MATCH (s:Study {{study_id: r.study_id}})
MERGE (n:{label} {{{key}: r.{key}}})
ON CREATE SET n._created = true
SET n += {{{values}}}
WITH s, n WHERE n._created
CREATE (s)-[:{link}]->(n)
REMOVE n._created
"""


def images_statement(merge: bool) -> str:
    """Rows {image_id, study_id, view}: the Image nodes and their HAS_IMAGE links."""
    return _single_file_nodes("Image", "image_id", ("view",), "HAS_IMAGE", merge)


def reports_statement(merge: bool) -> str:
    """Rows {report_id, study_id, text, source, unmapped_terms}: Report nodes and HAS_REPORT links."""
    return _single_file_nodes("Report", "report_id", ("text", "source", "unmapped_terms"), "HAS_REPORT", merge)


def observations_statement(merge: bool) -> str:
    """Rows {observation_id, study_id, anatomy, finding, mentions: [mention properties]}.

    Observations are shared by all files of a study, so they are always MERGEd; their mentions
    hang off them in the same statement (no second lookup of the observation per mention).
    """
    mentions = ("""
UNWIND r.mentions AS props
CREATE (o)-[:HAS_MENTION]->(m:Mention)
SET m = props
""" if not merge else """
UNWIND r.mentions AS props
MERGE (m:Mention {mention_id: props.mention_id})
ON CREATE SET m._created = true
WITH o, m, props, m._created AS created
SET m = props
WITH o, m, created WHERE created
CREATE (o)-[:HAS_MENTION]->(m)
""")
    return """
UNWIND $rows AS r
MERGE (o:Observation {observation_id: r.observation_id})
ON CREATE SET o.study_id = r.study_id, o.anatomy = r.anatomy, o.finding = r.finding, o._created = true
WITH r, o
CALL (r, o) {
  WITH r, o WHERE o._created
  MATCH (s:Study {study_id: r.study_id}), (a:Anatomy {name: r.anatomy}), (f:Finding {name: r.finding})
  CREATE (s)-[:HAS_OBSERVATION]->(o), (o)-[:OF_FINDING]->(f), (o)-[:LOCATED_AT]->(a)
  REMOVE o._created
}
WITH r, o""" + mentions


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
# change, or retracted files) are removed and re-created below when still needed. Derived progression
# edges are dropped in the same pass (those with source 'gnn' stay) and re-derived by the next two
# statements. Mentions are read once per observation; the lists are built from that one read.
AGGREGATE_OBSERVATIONS = """
UNWIND $patient_ids AS pid
MATCH (:Patient {patient_id: pid})-[:HAS_STUDY]->(:Study)-[:HAS_OBSERVATION]->(o:Observation)
CALL (o) {
  MATCH (o)-[r:PROGRESSION]->()
  WHERE r.source <> 'gnn'
  DELETE r
}
OPTIONAL MATCH (o)-[:HAS_MENTION]->(m:Mention)
WITH o, collect(m {.polarity, .severity, .severity_score, .source, .change, .evidence}) AS ms
CALL (o, ms) {
  WITH o WHERE size(ms) = 0
  DETACH DELETE o
}
WITH o, ms WHERE size(ms) > 0
WITH o, ms, reduce(top = null, m IN ms |
       CASE WHEN m.severity_score IS NOT NULL AND (top IS NULL OR m.severity_score > top.severity_score
                 OR (m.severity_score = top.severity_score AND m.severity < top.severity)) THEN m ELSE top END) AS top
SET o.polarity = CASE WHEN any(m IN ms WHERE m.polarity = 'present') THEN 'present'
                      WHEN any(m IN ms WHERE m.polarity = 'uncertain') THEN 'uncertain'
                      WHEN any(m IN ms WHERE m.polarity = 'absent') THEN 'absent' ELSE null END,
    o.severity_score = top.severity_score,
    o.severity = top.severity,
    o.source_conflict = null,
    o.onset_datetime = null,
    o.onset_sources = null,
    o.sources = COLLECT { UNWIND ms AS m WITH DISTINCT m.source AS v ORDER BY v RETURN v },
    o.stated_changes = COLLECT { UNWIND ms AS m WITH m.change AS v WHERE v IS NOT NULL
                                 WITH DISTINCT v ORDER BY v RETURN v },
    o.evidence = COLLECT { UNWIND ms AS m WITH m.evidence AS v WHERE v <> ''
                           WITH DISTINCT v ORDER BY v LIMIT 5 RETURN v }
"""

# Stated changes: Chest ImaGenome names its prior image; RadGraph2 change entities refer to the
# study's prior study. A statement whose prior is not in the graph stays on its Mention only. The
# prior observation is created as a placeholder (no mentions, polarity null) when the prior study does
# not describe that finding at that anatomy.
LINK_STATED_PROGRESSIONS = """
UNWIND $patient_ids AS pid
MATCH (:Patient {patient_id: pid})-[:HAS_STUDY]->(s:Study)-[:HAS_OBSERVATION]->(o:Observation)
WHERE o.stated_changes <> []
MATCH (o)-[:HAS_MENTION]->(m:Mention)
WHERE m.change IS NOT NULL
OPTIONAL MATCH (named:Study)-[:HAS_IMAGE]->(:Image {image_id: m.prior_image_id})
OPTIONAL MATCH (s)-[:PRIOR]->(previous:Study)
WITH s, o, m, CASE WHEN m.prior_image_id IS NULL THEN previous ELSE named END AS ps
WHERE ps IS NOT NULL AND ps <> s
WITH o, ps, m ORDER BY m.mention_id
WITH o, ps, m.source AS source, m.change AS change, collect(m) AS ms
MERGE (po:Observation {observation_id: ps.study_id + '|' + o.anatomy + '|' + o.finding})
ON CREATE SET po.study_id = ps.study_id, po.anatomy = o.anatomy, po.finding = o.finding, po._created = true
WITH o, ps, po, source, change, ms
CALL (ps, po) {
  WITH ps, po WHERE po._created
  MATCH (a:Anatomy {name: po.anatomy}), (f:Finding {name: po.finding})
  CREATE (ps)-[:HAS_OBSERVATION]->(po), (po)-[:OF_FINDING]->(f), (po)-[:LOCATED_AT]->(a)
  REMOVE po._created
}
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

# What two named queries look up through indexes instead of scanning every progression edge: an
# observation's onset (the study date of a `new` edge, stated or derived, and the sources of those
# edges) and whether the sources
# state different changes against the same prior observation. A conflict needs at least one stated
# change, so only observations with stated changes are checked.
MARK_ONSETS_AND_CONFLICTS = """
UNWIND $patient_ids AS pid
MATCH (:Patient {patient_id: pid})-[:HAS_STUDY]->(s:Study)-[:HAS_OBSERVATION]->(o:Observation)
CALL (o) {
  MATCH (o)-[r:PROGRESSION]->(po)
  WHERE r.source <> 'gnn'
  WITH po, count(DISTINCT r.change) AS kinds, collect(CASE WHEN r.change = 'new' THEN r.source END) AS news
  RETURN max(kinds) > 1 AS conflict, reduce(acc = [], xs IN collect(news) | acc + xs) AS new_sources
}
WITH s, o, conflict, new_sources WHERE new_sources <> [] OR conflict
SET o.onset_datetime = CASE WHEN new_sources <> [] THEN s.study_datetime END,
    o.onset_sources = CASE WHEN new_sources <> [] THEN COLLECT { UNWIND new_sources AS x WITH DISTINCT x
                                                                 ORDER BY x RETURN x } END,
    o.source_conflict = CASE WHEN conflict THEN true END
"""



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
MATCH (:Patient {patient_id: pid})-[:HAS_STUDY]->(s:Study)
OPTIONAL MATCH (s)-[pr:PRIOR]->(ps:Study)
RETURN pid AS patient_id, s.study_id AS study_id, toString(s.study_datetime) AS study_datetime,
       s.study_order AS study_order, ps.study_id AS prior_study_id, pr.days AS prior_days
ORDER BY patient_id, study_order, study_id
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
  probabilities: r.probabilities, model_version: r.model_version, snapshot_hash: r.snapshot_hash,
  evidence: [], files: [], change_labels: []
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
