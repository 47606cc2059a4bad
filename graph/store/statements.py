"""Every Cypher statement the loader and the model write with, and the reads they derive from.

The read-only statements of statistics, checks, the demo and the drop folder are in
:mod:`graph.store.read_statements`.

The graph model (labels PascalCase, relationship types UPPER_SNAKE, properties snake_case):

    (:Patient)-[:HAS_STUDY]->(:Study)-[:PRIOR {days}]->(:Study)
    (:Study)-[:HAS_IMAGE]->(:Image)        (:Study)-[:HAS_REPORT]->(:Report)
    (:Image)-[:HAS_BBOX]->(:BoundingBox)-[:OF_ANATOMY]->(:Anatomy)
    (:Image)-[:HAS_MEASUREMENT]->(:Measurement)       graph.measurements, from the boxes
    (:Study)-[:HAS_GEOMETRY_OBSERVATION]->(:GeometryObservation)-[:FROM_MEASUREMENT]->(:Measurement)
    (:GeometryObservation)-[:PROGRESSION {source: 'geometry'}]->(:GeometryObservation)   current -> prior
    (:Study)-[:HAS_OBSERVATION]->(:Observation)-[:OF_FINDING]->(:Finding)
    (:Observation)-[:LOCATED_AT]->(:Anatomy)
    (:Observation)-[:HAS_MENTION]->(:Mention)          one per source statement, with its file
    (:Observation)-[:PROGRESSION {change, source, evidence, files}]->(:Observation)   current -> prior
    (:Anatomy)-[:PART_OF]->(:Anatomy)      (:Finding)-[:IS_A]->(:Finding)
    (:Patient)-[:HAS_EPISODE]->(:Episode)-[:OF_FINDING]->(:Finding)   graph.longitudinal.episodes, per level
    (:SourceFile {path, sha256})           what has been loaded, for incremental runs

Observations are aggregates of their mentions, recomputed for every patient a load touches, so
loads are idempotent and their order does not matter. Statements take rows through UNWIND.
Labels, keys, property types, constraints and indexes are declared once in ``graph/schema.yaml``
(:mod:`graph.schema`); so are the properties the statements write: each writer's property map is built
from the schema when the statement is asked for (:func:`property_map`), so a property added there is
stored without a change here. The bookkeeping properties (``_created``, ``_lock``, ``link_pending``) are
declared there too, in their own section.
"""

from typing import Mapping

from graph.schema import LOCALDATETIME, GraphSchema, graph_schema

# The key property of every label (graph/schema.yaml): what identifies a node across loads and graphs.
NODE_KEYS = graph_schema().node_keys()


def property_map(name: str, row: str = "r", exprs: Mapping[str, str] | None = None, key: bool = True) -> str:
    """A Cypher map literal of every property both loaders write on label or relationship type ``name``
    (graph/schema.yaml, in its order): ``{<key>: r.<key>, <property>: r.<property>, ...}``, with the
    row's ISO text parsed by ``localdatetime()`` for a local date-time. A property absent from the row is
    null: ``SET n = map`` and ``CREATE (n map)`` leave it unset, ``SET n += map`` removes it.

    Args:
        name: a label or relationship type of the schema.
        row: the Cypher expression of the row (``r``, ``r.props``).
        exprs: property -> the Cypher expression that gives it instead of the row's value (a date the
            statement takes from a matched node, the time of the write).
        key: whether a node's key is in the map.

    Raises:
        graph.schema.SchemaError: ``name`` is neither a label nor a relationship type of the schema.
    """
    schema = graph_schema()
    exprs = exprs or {}
    props = schema.loaded_properties(name)
    if key and name in schema.nodes:
        props = {schema.nodes[name].key: "string", **props}
    return "{" + ", ".join(f"{p}: {exprs.get(p) or _value(row, p, kind)}" for p, kind in props.items()) + "}"


def _value(row: str, prop: str, kind: str) -> str:
    return f"localdatetime({row}.{prop})" if kind == LOCALDATETIME else f"{row}.{prop}"


def later_map(name: str, row: str = "r") -> str:
    """The Cypher map of the properties another step writes on ``name`` after a load (the schema's
    ``later``): the vocabulary's on Anatomy and Finding, from rows that hold them by name."""
    later = graph_schema()._element(name).later
    props = later.properties if later else {}
    return "{" + ", ".join(f"{p}: {_value(row, p, d.type)}" for p, d in props.items()) + "}"


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


def merge_vocabulary_statement(label: str) -> str:
    """Rows {name, and the node's ``later`` properties}: the vocabulary's regions (``label`` ``Anatomy``) or
    findings (``Finding``)."""
    return f"""
UNWIND $rows AS r
MERGE (n:{label} {{name: r.name}})
SET n += {later_map(label)}
"""


def merge_vocabulary_parents_statement(label: str, relationship: str) -> str:
    """Rows {name, parent}: a region ``PART_OF`` its parent region, a finding ``IS_A`` its parent finding."""
    return f"""
UNWIND $rows AS r
MATCH (n:{label} {{name: r.name}}), (p:{label} {{name: r.parent}})
MERGE (n)-[:{relationship}]->(p)
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

def _coalesced(var: str, label: str, skip: tuple[str, ...] = ()) -> str:
    """``v.p = coalesce(r.p, v.p), ...`` over ``label``'s loaded properties: a null keeps the stored value."""
    return ",\n    ".join(f"{var}.{p} = coalesce({_value('r', p, kind)}, {var}.{p})"
                          for p, kind in graph_schema().loaded_properties(label).items() if p not in skip)


def merge_studies_statement() -> str:
    """Rows {study_id, patient_id, the Study's other properties (a date-time as ISO text), the Patient's
    properties} (graph.longitudinal.derived_rows.batch_rows): a null keeps the stored value (reports carry none of
    them; ``study_order`` is the link step's). New studies get their HAS_STUDY with CREATE (a MERGE would
    first search it); the bookkeeping flag ``_created`` marks what this statement created."""
    patient = _coalesced("p", "Patient")
    return f"""
UNWIND $rows AS r
MERGE (p:Patient {{patient_id: r.patient_id}})
{"SET " + patient if patient else ""}
MERGE (s:Study {{study_id: r.study_id}})
ON CREATE SET s.patient_id = r.patient_id, s._created = true
SET {_coalesced("s", "Study", skip=("patient_id",))}
WITH p, s WHERE s._created
CREATE (p)-[:HAS_STUDY]->(s)
REMOVE s._created
"""

# Images, reports and mentions come from exactly one file each, so a file that was never loaded
# brings only new ones and CREATE skips MERGE's index seek and lock. A load that breaks a uniqueness
# constraint (the same scene graph under two paths, or two runs at once) is rolled back and redone
# with the MERGE variants (``merge=True``), which are also used for changed files.
def _single_file_nodes(label: str, key: str, link: str, merge: bool) -> str:
    """Rows {key, study_id, the label's other properties}: one ``label`` node per row, linked from its
    Study by ``link``."""
    values = property_map(label)[1:-1]
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
    """Rows {image_id, study_id, the Image's other properties}: the Image nodes and their HAS_IMAGE links."""
    return _single_file_nodes("Image", "image_id", "HAS_IMAGE", merge)


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
    values = property_map("BoundingBox")
    if not merge:
        return f"""
UNWIND $rows AS r
MATCH (i:Image {{image_id: r.image_id}}), (a:Anatomy {{name: r.bbox_name}})
CREATE (i)-[:HAS_BBOX]->(b:BoundingBox)-[:OF_ANATOMY]->(a)
SET b = {values}
"""
    return f"""
UNWIND $rows AS r
MATCH (i:Image {{image_id: r.image_id}}), (a:Anatomy {{name: r.bbox_name}})
MERGE (b:BoundingBox {{bbox_id: r.bbox_id}})
ON CREATE SET b._created = true
WITH i, a, b, r, b._created AS created
SET b = {values}
WITH i, a, b WHERE created
CREATE (i)-[:HAS_BBOX]->(b)-[:OF_ANATOMY]->(a)
"""


def reports_statement(merge: bool) -> str:
    """Rows {report_id, study_id, the Report's other properties}: Report nodes and HAS_REPORT links."""
    return _single_file_nodes("Report", "report_id", "HAS_REPORT", merge)


def observations_statement(merge: bool) -> str:
    """Rows {observation_id, study_id, anatomy, finding, mentions: [mention properties]}.

    Observations are shared by all files of a study, so they are always MERGEd; their mentions
    hang off them in the same statement (no second lookup of the observation per mention).
    """
    values = property_map("Mention", "props")
    mentions = (f"""
UNWIND r.mentions AS props
CREATE (o)-[:HAS_MENTION]->(m:Mention)
SET m = {values}
""" if not merge else f"""
UNWIND r.mentions AS props
MERGE (m:Mention {{mention_id: props.mention_id}})
ON CREATE SET m._created = true
WITH o, m, props, m._created AS created
SET m = {values}
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


def merge_source_files_statement() -> str:
    """Rows {path, the SourceFile's other properties but ``loaded_at``} (graph.ingest.load): a null removes
    the stored value (an incomplete streamed file's); ``loaded_at`` is the time of the write."""
    return f"""
UNWIND $rows AS r
MERGE (f:SourceFile {{path: r.path}})
SET f += {property_map("SourceFile", exprs={"loaded_at": "localdatetime()"}, key=False)}
"""


# --- derived structure, recomputed per touched patient -------------------------------------------
# The link step reads a patient's studies and mentions (PATIENT_FACTS), derives states and events in
# Python (graph.longitudinal.events), removes what an earlier link derived (RESET_DERIVED) and writes the new
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
def write_study_order_statement() -> str:
    """Rows {study_id, order, prior_id, the PRIOR properties} (see the comment above)."""
    return f"""
UNWIND $rows AS r
MATCH (s:Study {{study_id: r.study_id}})
SET s.study_order = r.order
WITH s, r WHERE r.prior_id IS NOT NULL
MATCH (ps:Study {{study_id: r.prior_id}})
CREATE (s)-[p:PRIOR]->(ps)
SET p = {property_map("PRIOR")}
"""


# Rows {onset, props} (graph.longitudinal.derived_rows; props hold the keys too): every observation
# the derivation knows, stated or needed by an event, with all its derived properties (a null removes one).
# An event's side that nothing was stated about becomes a placeholder observation (state 'not_mentioned',
# no mentions), linked like any other. ``onset_datetime`` is the study's date when an onset event (stated
# or derived) starts here: what new_finding_patients finds through an index.
_ONSET = {"onset_datetime": "CASE WHEN r.onset THEN s.study_datetime END"}


def write_observation_states_statement() -> str:
    """Rows {onset, props} (see the comment above)."""
    return f"""
UNWIND $rows AS r
MATCH (s:Study {{study_id: r.props.study_id}})
MERGE (o:Observation {{observation_id: r.props.observation_id}})
ON CREATE SET o._created = true
SET o += {property_map("Observation", "r.props", _ONSET)}
WITH s, o, r WHERE o._created
MATCH (a:Anatomy {{name: r.props.anatomy}}), (f:Finding {{name: r.props.finding}})
CREATE (s)-[:HAS_OBSERVATION]->(o), (o)-[:OF_FINDING]->(f), (o)-[:LOCATED_AT]->(a)
REMOVE o._created
"""


# The same rows plus ``mentions`` (their Mention properties) for patients new to the graph, derived from
# the parsed records before the transaction: observations are created once with their final properties,
# so the read-back, reset and MERGE of the link step are skipped.
def create_observations_statement() -> str:
    """Rows {onset, props, mentions} (see the comment above)."""
    return f"""
UNWIND $rows AS r
MATCH (s:Study {{study_id: r.props.study_id}}), (a:Anatomy {{name: r.props.anatomy}}),
      (f:Finding {{name: r.props.finding}})
CREATE (s)-[:HAS_OBSERVATION]->(o:Observation)-[:OF_FINDING]->(f), (o)-[:LOCATED_AT]->(a)
SET o = {property_map("Observation", "r.props", _ONSET)}
WITH o, r
UNWIND r.mentions AS props
CREATE (o)-[:HAS_MENTION]->(m:Mention)
SET m = {property_map("Mention", "props")}
"""


# Rows {study_finding_id, patient_id, study_id, finding, state, state_basis, onset, onset_bases, onset_sources,
# onset_prior_state}: one finding's state in one study, over all its anatomy and its more specific
# findings (graph.longitudinal.events); created fresh after RESET_DERIVED removed the old ones.
def write_study_findings_statement() -> str:
    """Rows {onset, the StudyFinding's properties but onset_datetime} (see the comment above)."""
    return f"""
UNWIND $rows AS r
MATCH (s:Study {{study_id: r.study_id}}), (f:Finding {{name: r.finding}})
CREATE (s)-[:HAS_STUDY_FINDING]->(sf:StudyFinding)-[:OF_FINDING]->(f)
SET sf = {property_map("StudyFinding", exprs=_ONSET)}
"""



# Rows: graph.longitudinal.episodes.PresenceEpisode.row() (datetimes as ISO text): a patient's episodes of a finding, created
# fresh after RESET_DERIVED removed the old ones.
def write_episodes_statement() -> str:
    """Rows: graph.longitudinal.episodes.PresenceEpisode.row() (see the comment above)."""
    return f"""
UNWIND $rows AS r
MATCH (p:Patient {{patient_id: r.patient_id}}), (f:Finding {{name: r.finding}})
CREATE (p)-[:HAS_EPISODE]->(e:Episode)-[:OF_FINDING]->(f)
SET e = {property_map("Episode")}
"""



def progressions_statement(label: str, key: str) -> str:
    """Rows {current, prior, props}: PROGRESSION edges (current -> prior) between ``label`` nodes found
    by ``key``; props: the PROGRESSION properties graph/schema.yaml declares (graph.longitudinal.derived_rows)."""
    return f"""
UNWIND $rows AS r
MATCH (o:{label} {{{key}: r.current}}), (po:{label} {{{key}: r.prior}})
CREATE (o)-[p:PROGRESSION]->(po)
SET p = {property_map("PROGRESSION", "r.props")}
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
