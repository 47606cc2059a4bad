"""Every Cypher statement the loader and the model write with, and the reads they derive from.

The read-only statements of statistics, checks, the demo and the drop folder are in
:mod:`graph.store.read_statements`.

The graph model (labels PascalCase, relationship types UPPER_SNAKE, properties snake_case):

    (:Patient)-[:HAS_STUDY]->(:Study)-[:PRIOR {days}]->(:Study)
    (:Study)-[:HAS_IMAGE]->(:Image)        (:Study)-[:HAS_REPORT]->(:Report)
    (:Image)-[:HAS_BBOX]->(:BoundingBox)-[:OF_ANATOMY]->(:Anatomy)
    (:Study)-[:HAS_OBSERVATION]->(:Observation)-[:OF_FINDING]->(:Finding)
    (:Observation)-[:LOCATED_AT]->(:Anatomy)
    (:Observation)-[:HAS_MENTION]->(:Mention)          one per source statement, with its file
    (:Observation)-[:PROGRESSION {change, source, evidence, files}]->(:Observation)   current -> prior
    (:Anatomy)-[:PART_OF]->(:Anatomy)      (:Finding)-[:IS_A]->(:Finding)
    (:Patient)-[:HAS_EPISODE]->(:Episode)-[:OF_FINDING]->(:Finding)   graph.episodes, per level
    (:SourceFile {path, sha256})           what has been loaded, for incremental runs

Observations are aggregates of their mentions, recomputed for every patient a load touches, so
loads are idempotent and their order does not matter. Statements take rows through UNWIND.
Labels, keys, property types, constraints and indexes are declared once in ``graph/schema.yaml``
(:mod:`graph.schema`).
"""

from graph.schema import GraphSchema, graph_schema

# The key property of every label (graph/schema.yaml): what identifies a node across loads and graphs.
NODE_KEYS = graph_schema().node_keys()


def schema_statements(schema: GraphSchema | None = None) -> list[str]:
    """Uniqueness constraints and indexes, created before any load (``IF NOT EXISTS``: repeatable).

    Indexes come first: Neo4j fills a new index in the background, while creating a constraint waits until
    its own index is filled, so on a loaded graph (after a bulk import) the indexes fill while the
    constraints are created one by one.

    Args:
        schema: the graph schema whose constraints and indexes to create (default: the packaged one).
    """
    schema = schema or graph_schema()
    out = [f"CREATE INDEX {name} IF NOT EXISTS FOR (n:{label}) ON ({', '.join(f'n.{p}' for p in props)})"
           for name, label, props in schema.node_indexes()]
    out += [f"CREATE INDEX {name} IF NOT EXISTS FOR ()-[r:{rel_type}]-() ON ({', '.join(f'r.{p}' for p in props)})"
            for name, rel_type, props in schema.relationship_indexes()]
    out += [f"CREATE CONSTRAINT {name} IF NOT EXISTS FOR (n:{label}) REQUIRE n.{prop} IS UNIQUE"
            for name, label, prop in schema.constraints()]
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
# Indexes a later schema replaced (graph/schema.yaml): episode_finding by episode_start and episode_duration,
# then episode_start by episode_recurrence.
SUPERSEDED_INDEX_DROPS = ["DROP INDEX episode_finding IF EXISTS", "DROP INDEX episode_start IF EXISTS"]

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
RETURN f.path AS path, f.sha256 AS sha256, f.vocabulary_version AS vocabulary_version, f.size AS size,
       f.mtime_ns AS mtime_ns
"""

STUDY_OWNERS = """
UNWIND $study_ids AS sid
MATCH (s:Study {study_id: sid})
RETURN s.study_id AS study_id, s.patient_id AS patient_id, s.study_datetime AS study_datetime
"""

# Serialises concurrent runs per patient: every batch write and link transaction first takes the write
# locks of its patients (ids sorted, so two transactions never wait on each other in a cycle here).
# Without it, a link step could read a patient before another run's batch for that patient commits,
# commit after that run's own link step, and leave stale aggregates and edges behind. ``fresh``: the
# patient has no stored study yet, so what the batch holds is all there is to derive from.
LOCK_PATIENTS = """
UNWIND $patient_ids AS pid
MERGE (p:Patient {patient_id: pid})
SET p._lock = true
REMOVE p._lock
RETURN pid AS patient_id, NOT EXISTS { (p)-[:HAS_STUDY]->() } AS fresh
"""

# Crash safety of the link step: a write transaction that stores a patient without relinking it marks the
# patient ``link_pending`` (bookkeeping, not part of the graph model), and the transaction that relinks it
# removes the mark (``pending`` false sets it to null). A run that dies between the two (command or server
# killed, server lost) leaves the mark, and every run's link stage relinks the marked patients
# (UNLINKED_PATIENTS), so a rerun completes the derivation even when all of the patient's files are
# unchanged. Rows {patient_id, pending}; patients whose locks the transaction holds.
SET_LINK_PENDING = """
UNWIND $rows AS r
MATCH (p:Patient {patient_id: r.patient_id})
SET p.link_pending = CASE WHEN r.pending THEN true END
"""

UNLINKED_PATIENTS = """
MATCH (p:Patient) WHERE p.link_pending
RETURN p.patient_id AS patient_id ORDER BY patient_id
"""

# Mentions are found by their file through an index on ``file_key`` (see ``graph.records.file_key``):
# an index on the path strings themselves cost a quarter of the server's load time.
# Rows {path, key, records, keep}: the file's mentions of ``records`` (null: of every record) except those of
# the records in ``keep`` (null: none).
RETRACT_FILES = """
UNWIND $files AS file
MATCH (o:Observation)-[:HAS_MENTION]->(m:Mention {file_key: file.key})
WHERE m.file = file.path AND (file.records IS NULL OR m.record IN file.records)
  AND NOT m.record IN coalesce(file.keep, [])
WITH m, o.study_id AS study_id
DETACH DELETE m
RETURN collect(DISTINCT study_id) AS study_ids
"""

# New nodes get their relationships with CREATE (a MERGE would first search them); the transient
# `_created` flag marks what this statement created. Rows {study_id, patient_id, study_datetime (ISO
# text), gender, age_decile, reason_for_exam}: a null keeps the stored value (reports carry none of them).
MERGE_STUDIES = """
UNWIND $rows AS r
MERGE (p:Patient {patient_id: r.patient_id})
SET p.gender = coalesce(r.gender, p.gender)
MERGE (s:Study {study_id: r.study_id})
ON CREATE SET s.patient_id = r.patient_id, s._created = true
SET s.study_datetime = coalesce(localdatetime(r.study_datetime), s.study_datetime),
    s.age_decile = coalesce(r.age_decile, s.age_decile),
    s.reason_for_exam = coalesce(r.reason_for_exam, s.reason_for_exam)
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
    """Rows {image_id, study_id, view, study_order, file}: the Image nodes and their HAS_IMAGE links."""
    return _single_file_nodes("Image", "image_id", ("view", "study_order", "file"), "HAS_IMAGE", merge)


# Bounding boxes come from their image's file only. A changed (or re-read) file's images lose all their
# boxes first (MERGE variant only), so a box the new content no longer has does not stay behind.
DELETE_IMAGE_BBOXES = """
UNWIND $image_ids AS id
MATCH (:Image {image_id: id})-[:HAS_BBOX]->(b:BoundingBox)
DETACH DELETE b
"""


def bboxes_statement(merge: bool) -> str:
    """Rows {bbox_id, image_id, bbox_name, x1, y1, x2, y2, width, height, original_x1 .. original_height,
    finding_label} (absent values left out): one BoundingBox per row, stored with every row property,
    linked from its Image by HAS_BBOX and to its region by OF_ANATOMY. Run after the images; in MERGE
    mode after :data:`DELETE_IMAGE_BBOXES` for the batch's images.
    """
    if not merge:
        return """
UNWIND $rows AS r
MATCH (i:Image {image_id: r.image_id}), (a:Anatomy {name: r.bbox_name})
CREATE (i)-[:HAS_BBOX]->(b:BoundingBox)-[:OF_ANATOMY]->(a)
SET b = r
"""
    return """
UNWIND $rows AS r
MATCH (i:Image {image_id: r.image_id}), (a:Anatomy {name: r.bbox_name})
MERGE (b:BoundingBox {bbox_id: r.bbox_id})
ON CREATE SET b._created = true
WITH i, a, b, r, b._created AS created
SET b = r
WITH i, a, b WHERE created
CREATE (i)-[:HAS_BBOX]->(b)-[:OF_ANATOMY]->(a)
"""


def reports_statement(merge: bool) -> str:
    """Rows {report_id, study_id, text, source, unmapped_terms, file}: Report nodes and HAS_REPORT links."""
    return _single_file_nodes("Report", "report_id", ("text", "source", "unmapped_terms", "file"), "HAS_REPORT",
                              merge)


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
    f.vocabulary_version = r.vocabulary_version, f.size = r.size, f.mtime_ns = r.mtime_ns,
    f.loaded_at = localdatetime()
"""

# --- derived structure, recomputed per touched patient -------------------------------------------
# The link step reads a patient's studies and mentions (PATIENT_FACTS), derives states and events in
# Python (graph.events), removes what an earlier link derived (RESET_DERIVED) and writes the new
# derivation with the statements below, all in one transaction that holds the patients' locks.

PATIENT_FACTS = """
UNWIND $patient_ids AS pid
MATCH (:Patient {patient_id: pid})-[:HAS_STUDY]->(s:Study)
RETURN pid AS patient_id, s.study_id AS study_id, toString(s.study_datetime) AS study_datetime,
       COLLECT { MATCH (s)-[:HAS_IMAGE]->(i:Image) RETURN i.image_id } AS image_ids,
       COLLECT { MATCH (s)-[:HAS_OBSERVATION]->(o:Observation)-[:HAS_MENTION]->(m:Mention)
                 RETURN [o.anatomy, o.finding, m.source, m.polarity, m.change, m.change_label, m.prior_image_id,
                         m.evidence, CASE WHEN m.change IS NULL THEN '' ELSE m.file END, m.mention_id,
                         m.severity, m.severity_score, m.entity_group, m.temporal_group] } AS mentions
"""

# Derived structure of earlier links goes: episodes, PRIOR links, study-level states and their events, progression
# edges other than the model's ('gnn'), and observations without mentions (placeholders an event needed;
# re-created when still needed).
RESET_DERIVED = """
UNWIND $patient_ids AS pid
CALL (pid) {
  MATCH (:Patient {patient_id: pid})-[:HAS_EPISODE]->(e:Episode)
  DETACH DELETE e
}
MATCH (:Patient {patient_id: pid})-[:HAS_STUDY]->(s:Study)
CALL (s) {
  MATCH (s)-[old:PRIOR]->()
  DELETE old
}
CALL (s) {
  MATCH (s)-[:HAS_STUDY_FINDING]->(sf:StudyFinding)
  DETACH DELETE sf
}
CALL (s) {
  MATCH (s)-[:HAS_OBSERVATION]->(:Observation)-[r:PROGRESSION]->()
  WHERE r.source <> 'gnn'
  DELETE r
}
CALL (s) {
  MATCH (s)-[:HAS_OBSERVATION]->(o:Observation)
  WHERE NOT EXISTS { (o)-[:HAS_MENTION]->() }
  DETACH DELETE o
}
"""

# Rows {study_id, order, prior_id, days}: the study's rank in its patient's timeline and its PRIOR link
# (prior_id null for a patient's first study).
WRITE_STUDY_ORDER = """
UNWIND $rows AS r
MATCH (s:Study {study_id: r.study_id})
SET s.study_order = r.order
WITH s, r WHERE r.prior_id IS NOT NULL
MATCH (ps:Study {study_id: r.prior_id})
CREATE (s)-[:PRIOR {days: r.days}]->(ps)
"""

# Rows {onset, props} (graph.derived_rows; props hold the keys too): every observation
# the derivation knows, stated or needed by an event, with all its derived properties (a null removes one).
# An event's side that nothing was stated about becomes a placeholder observation (state 'not_mentioned',
# no mentions), linked like any other. ``onset_datetime`` is the study's date when an onset event (stated
# or derived) starts here: what new_finding_patients finds through an index.
WRITE_OBSERVATION_STATES = """
UNWIND $rows AS r
MATCH (s:Study {study_id: r.props.study_id})
MERGE (o:Observation {observation_id: r.props.observation_id})
ON CREATE SET o._created = true
SET o += r.props, o.onset_datetime = CASE WHEN r.onset THEN s.study_datetime END
WITH s, o, r WHERE o._created
MATCH (a:Anatomy {name: r.props.anatomy}), (f:Finding {name: r.props.finding})
CREATE (s)-[:HAS_OBSERVATION]->(o), (o)-[:OF_FINDING]->(f), (o)-[:LOCATED_AT]->(a)
REMOVE o._created
"""

# The same rows plus ``mentions`` (their Mention properties) for patients new to the graph, derived from
# the parsed records before the transaction: observations are created once with their final properties,
# so the read-back, reset and MERGE of the link step are skipped.
CREATE_OBSERVATIONS = """
UNWIND $rows AS r
MATCH (s:Study {study_id: r.props.study_id}), (a:Anatomy {name: r.props.anatomy}),
      (f:Finding {name: r.props.finding})
CREATE (s)-[:HAS_OBSERVATION]->(o:Observation)-[:OF_FINDING]->(f), (o)-[:LOCATED_AT]->(a)
SET o = r.props, o.onset_datetime = CASE WHEN r.onset THEN s.study_datetime END
WITH o, r
UNWIND r.mentions AS props
CREATE (o)-[:HAS_MENTION]->(m:Mention)
SET m = props
"""

# Rows {study_finding_id, patient_id, study_id, finding, state, state_basis, onset, onset_bases, onset_sources,
# onset_prior_state}: one finding's state in one study, over all its anatomy and its more specific
# findings (graph.events); created fresh after RESET_DERIVED removed the old ones.
WRITE_STUDY_FINDINGS = """
UNWIND $rows AS r
MATCH (s:Study {study_id: r.study_id}), (f:Finding {name: r.finding})
CREATE (s)-[:HAS_STUDY_FINDING]->(sf:StudyFinding {
  study_finding_id: r.study_finding_id, patient_id: r.patient_id, study_id: r.study_id, finding: r.finding,
  state: r.state, state_basis: r.state_basis,
  onset_bases: r.onset_bases, onset_sources: r.onset_sources, onset_prior_state: r.onset_prior_state
})-[:OF_FINDING]->(f)
SET sf.onset_datetime = CASE WHEN r.onset THEN s.study_datetime END
"""


# Rows: graph.episodes.Episode.row() (datetimes as ISO text): a patient's episodes of a finding, created
# fresh after RESET_DERIVED removed the old ones.
WRITE_EPISODES = """
UNWIND $rows AS r
MATCH (p:Patient {patient_id: r.patient_id}), (f:Finding {name: r.finding})
CREATE (p)-[:HAS_EPISODE]->(e:Episode)-[:OF_FINDING]->(f)
SET e = r, e.first_datetime = localdatetime(r.first_datetime), e.last_datetime = localdatetime(r.last_datetime)
"""


def progressions_statement(label: str, key: str) -> str:
    """Rows {current, prior, props}: PROGRESSION edges (current -> prior) between ``label`` nodes found
    by ``key``; props: progression_id, change, basis, source, rule, prior_state, current_state,
    evidence, files, change_labels."""
    return f"""
UNWIND $rows AS r
MATCH (o:{label} {{{key}: r.current}}), (po:{label} {{{key}: r.prior}})
CREATE (o)-[p:PROGRESSION]->(po)
SET p = r.props
"""

# The GNN's snapshot reads and prediction writes (graph.store.gnn_statements), re-exported here.
from graph.store.gnn_statements import (  # noqa: E402,F401
    DELETE_GNN_PROGRESSIONS,
    GNN_ANATOMY,
    GNN_FINDINGS,
    GNN_IMAGES,
    GNN_OBSERVATION_MENTIONS,
    GNN_PAIR_CHANGES,
    GNN_PATIENT_IDS,
    GNN_STATED_PROGRESSIONS,
    GNN_STUDIES,
    GNN_STUDY_FINDINGS,
    GNN_VOCABULARY_VERSIONS,
    WRITE_GNN_PROGRESSIONS,
)
