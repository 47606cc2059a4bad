"""Read-only Cypher statements of statistics, independent checks, graph comparison, the demo, the drop
folder, the loader's checks against other files, and what a blocked write waits for; the loader's
writes are in :mod:`graph.store.statements`."""


# --- reads of the demo ----------------------------------------------------------------------------
# The IU reports' ten most frequent present findings and stated changes (report count each).
IU_TOP_FINDINGS = """
MATCH (s:Study)-[:HAS_OBSERVATION]->(o:Observation) WHERE s.study_id STARTS WITH 'IU-' AND o.polarity = 'present'
WITH o.finding AS finding, count(DISTINCT s) AS reports ORDER BY reports DESC LIMIT 10
RETURN finding, reports
"""
IU_TOP_CHANGES = """
MATCH (s:Study)-[:HAS_OBSERVATION]->(o:Observation) WHERE s.study_id STARTS WITH 'IU-' AND size(o.stated_changes) > 0
UNWIND o.stated_changes AS change
WITH o.finding AS finding, change, count(DISTINCT s) AS reports ORDER BY reports DESC LIMIT 10
RETURN finding, change, reports
"""


# --- drop folder -----------------------------------------------------------------------------------
# What the graph committed for these files (graph.ingest.dropfolder decides which files are done).
COMMITTED_SOURCE_FILES = """
UNWIND $paths AS path
MATCH (f:SourceFile {path: path})
RETURN f.path AS path, f.sha256 AS sha256, f.vocabulary_version AS vocabulary_version,
       coalesce(f.rejected, 0) AS rejected
"""


# --- independent checks (graph.checks.nih.loaded, graph.checks.synthetic) -------------------------------
# The given patients' study-level states, and their derived events, per finding and study year.
STUDY_STATE_COUNTS = """
UNWIND $patient_ids AS pid
MATCH (:Patient {patient_id: pid})-[:HAS_STUDY]->(s:Study)-[:HAS_STUDY_FINDING]->(n:StudyFinding)
WHERE n.finding IN $findings
RETURN n.finding AS finding, s.study_datetime.year AS year, n.state AS state, count(*) AS n
"""
DERIVED_STUDY_EVENT_COUNTS = """
UNWIND $patient_ids AS pid
MATCH (:Patient {patient_id: pid})-[:HAS_STUDY]->(s:Study)-[:HAS_STUDY_FINDING]->(n:StudyFinding)
      -[r:PROGRESSION {basis: 'derived'}]->()
WHERE n.finding IN $findings
RETURN n.finding AS finding, s.study_datetime.year AS year, r.change AS change, r.prior_state AS prior_state,
       count(*) AS n
"""


# Every derived study-level event: (study, prior study, finding, change).
DERIVED_STUDY_EVENTS = """
MATCH (n:StudyFinding)-[r:PROGRESSION {basis: 'derived'}]->(pn:StudyFinding)
RETURN n.study_id AS study_id, pn.study_id AS prior_study_id, n.finding AS finding, r.change AS change
"""

# Derived episodes of the given patients and findings at one level (graph.longitudinal.episodes): the independent checks
# read them whole.
EPISODE_BOUNDS = """
UNWIND $findings AS finding
MATCH (e:Episode {finding: finding, level: $level, basis: 'derived'})
WHERE e.patient_id IN $patient_ids
RETURN e.patient_id AS patient_id, e.anatomy AS anatomy, e.finding AS finding, e.number AS number,
       e.first_study_id AS first_study_id, e.last_study_id AS last_study_id, e.closed AS closed
"""


# --- statistics (graph.store.stats): counts come from Neo4j's count store --------------------------
LABELS = "CALL db.labels() YIELD label RETURN label ORDER BY label"
RELATIONSHIP_TYPES = "CALL db.relationshipTypes() YIELD relationshipType AS t RETURN t ORDER BY t"
# The property names the graph holds, per label combination and per relationship type (every node and
# relationship is read: Neo4j 5's procedures do not sample), for the schema drift of ``cxrkg stats``.
NODE_TYPE_PROPERTIES = ("CALL db.schema.nodeTypeProperties() YIELD nodeLabels, propertyName "
                        "RETURN nodeLabels AS labels, propertyName AS property")
REL_TYPE_PROPERTIES = ("CALL db.schema.relTypeProperties() YIELD relType, propertyName "
                       "RETURN relType AS type, propertyName AS property")


# The three totals of an ingest run's summary in one round trip, each from the count store.
SUMMARY_COUNTS = """
CALL () { MATCH (s:Study) RETURN count(s) AS studies }
CALL () { MATCH (o:Observation) RETURN count(o) AS observations }
CALL () { MATCH ()-[r:PROGRESSION]->() RETURN count(r) AS progression_edges }
RETURN studies, observations, progression_edges
"""


def count_label(label: str) -> str:
    """Nodes of one label (a name the database itself listed, backquoted)."""
    return f"MATCH (n:`{label}`) RETURN count(n) AS n"


def count_type(rel_type: str) -> str:
    """Relationships of one type (a name the database itself listed, backquoted)."""
    return f"MATCH ()-[r:`{rel_type}`]->() RETURN count(r) AS n"


def count_orphans(label: str) -> str:
    """Nodes of one label without any relationship."""
    return f"MATCH (n:`{label}`) WHERE NOT (n)--() RETURN count(n) AS n"


def values_outside(name: str, relationship: bool = False) -> str:
    """The stored values of a label's (or relationship type's) enumerated properties that are not among their
    allowed values, in one pass over its nodes (relationships): a row ``(property, values)`` per property
    that holds any, at most ten of them each. Parameter ``$checks``: ``[{property, array, allowed}]``
    (``array``: a string[] property, whose every element is checked)."""
    match = f"MATCH ()-[n:`{name}`]->()" if relationship else f"MATCH (n:`{name}`)"
    return (f"{match} UNWIND $checks AS c WITH c, n[c.property] AS value WHERE value IS NOT NULL "
            "UNWIND CASE WHEN c.array THEN value ELSE [value] END AS v "
            "WITH c.property AS property, v WHERE NOT v IN c.allowed "
            "WITH property, collect(DISTINCT v) AS values RETURN property, values[..10] AS values ORDER BY property")


# --- bulk load and graph comparison ---------------------------------------------------------------
# Whether the database holds anything beyond the vocabulary (what a bulk import would overwrite).
HOLDS_DATA = "RETURN EXISTS { MATCH (n) WHERE NOT (n:Anatomy OR n:Finding) } AS holds_data"

# Every node and relationship with its properties; relationship ends named by their label and key
# (graph.store.content), so two graphs compare whatever their internal ids.
CONTENT_NODES = "MATCH (n) RETURN labels(n) AS labels, properties(n) AS props"
CONTENT_RELATIONSHIPS = """
MATCH (a)-[r]->(b)
WITH a, r, b, labels(a)[0] AS start_label, labels(b)[0] AS end_label
RETURN type(r) AS type, start_label, a[$keys[start_label]] AS start_key, end_label, b[$keys[end_label]] AS end_key,
       properties(r) AS props
"""


# --- what a blocked write waits for ----------------------------------------------------------------
# Every open transaction of a client but this one, oldest first (graph.store.busy names them in its error).
# Those without a client address are the server's own (the local launcher's password change stays open in
# the system database for good): no load waits for them, and they cannot be terminated.
OPEN_TRANSACTIONS = """
SHOW TRANSACTIONS
YIELD transactionId, database, clientAddress, username, elapsedTime, status, currentQuery
WHERE (currentQuery IS NULL OR NOT trim(currentQuery) STARTS WITH 'SHOW TRANSACTIONS') AND clientAddress <> ''
RETURN transactionId AS id, database, clientAddress AS client, elapsedTime.milliseconds AS ms, status,
       left(coalesce(currentQuery, ''), 80) AS query
ORDER BY ms DESC
"""


# --- ids a query names that the graph does not hold ------------------------------------------------
UNKNOWN_IDS = """
UNWIND $patients AS id
OPTIONAL MATCH (p:Patient {patient_id: id})
WITH id, p WHERE p IS NULL
RETURN 'patient ' + id AS item
UNION ALL
UNWIND $studies AS id
OPTIONAL MATCH (s:Study {study_id: id})
WITH id, s WHERE s IS NULL
RETURN 'study ' + id AS item
"""


# --- the loader's checks against other files (graph.ingest.record_checks) ---------------------------
# The file each already stored image or report came from (null for one stored before nodes kept their file).
RECORD_FILES = """
UNWIND $image_ids AS id
MATCH (i:Image {image_id: id})
RETURN 'image' AS kind, id, i.file AS file
UNION ALL
UNWIND $report_ids AS id
MATCH (r:Report {report_id: id})
RETURN 'report' AS kind, id, r.file AS file
"""

# The study and patient of stored images (the prior images comparisons name).
IMAGE_STUDIES = """
UNWIND $image_ids AS id
MATCH (s:Study)-[:HAS_IMAGE]->(i:Image {image_id: id})
RETURN id AS image_id, s.study_id AS study_id, s.patient_id AS patient_id
"""

# The region each finding is most often observed at (ties: the first by name), where a study-level forecast
# is written back (NIH ChestX-ray14 observes each finding at one region).
GNN_FINDING_REGIONS = """
MATCH (o:Observation) WHERE o.polarity IS NOT NULL
WITH o.finding AS finding, o.anatomy AS anatomy, count(*) AS n
ORDER BY finding, n DESC, anatomy
RETURN finding, collect(anatomy)[0] AS anatomy
"""


# --- Medical-Diff-VQA questions (graph.questions.facts) ---------------------------------------------
# Everything a question about a study needs, one row per study: its patient and place in time, its image
# views, its stated observations of the findings in $findings (anatomy, finding, polarity, severity, evidence
# phrases, texture cues) and the stated changes from it to earlier studies ([prior study, finding, change]).
_QUESTION_FACTS = """
RETURN s.study_id AS study_id, p.patient_id AS patient_id, s.study_order AS study_order,
       toString(s.study_datetime) AS study_datetime,
       COLLECT { MATCH (s)-[:HAS_IMAGE]->(i:Image) WITH i ORDER BY i.image_id RETURN i.view } AS views,
       COLLECT { MATCH (s)-[:HAS_OBSERVATION]->(o:Observation) WHERE o.polarity IS NOT NULL AND o.finding IN $findings
                 RETURN [o.anatomy, o.finding, o.polarity, o.severity, coalesce(o.evidence, []),
                         COLLECT { MATCH (o)-[:HAS_MENTION]->(m:Mention) WHERE m.texture_cues IS NOT NULL
                                   UNWIND m.texture_cues AS t RETURN DISTINCT t }] } AS observations,
       COLLECT { MATCH (s)-[:HAS_OBSERVATION]->(o:Observation)-[r:PROGRESSION {basis: 'stated'}]->(po:Observation)
                 RETURN DISTINCT [po.study_id, o.anatomy, o.finding, r.change] } AS stated
"""
QUESTION_FACTS_BY_STUDY = """
UNWIND $study_ids AS sid
MATCH (p:Patient)-[:HAS_STUDY]->(s:Study {study_id: sid})
""" + _QUESTION_FACTS
QUESTION_FACTS_BY_PATIENT = """
UNWIND $patient_ids AS pid
MATCH (p:Patient {patient_id: pid})-[:HAS_STUDY]->(s:Study)
""" + _QUESTION_FACTS
PATIENT_IDS = "MATCH (p:Patient) RETURN p.patient_id AS patient_id ORDER BY patient_id"
# Where each study stands: its patient, its rank in the patient's timeline and its date (the order check).
STUDY_PLACES = """
UNWIND $study_ids AS sid
MATCH (p:Patient)-[:HAS_STUDY]->(s:Study {study_id: sid})
RETURN s.study_id AS study_id, p.patient_id AS patient_id, s.study_order AS study_order,
       toString(s.study_datetime) AS study_datetime
"""

# --- the Lunguage export (graph.longitudinal.sequential_reports) ------------------------------------------------------
# Every Mention with its study's place in the timeline; derived anatomy-level episodes with their studies.
LUNGUAGE_MENTIONS = """
MATCH (p:Patient)-[:HAS_STUDY]->(s:Study)-[:HAS_OBSERVATION]->(o:Observation)-[:HAS_MENTION]->(m:Mention)
RETURN p.patient_id AS patient_id, s.study_id AS study_id, s.study_order AS study_order, o.anatomy AS anatomy,
       o.finding AS finding, m.source AS source, m.polarity AS polarity, m.change AS change,
       m.change_label AS change_label, m.severity AS severity, m.evidence AS evidence, m.record AS record,
       m.section AS section, m.sentence_id AS sentence_id, m.term AS term, m.entity_group AS entity_group,
       m.temporal_group AS temporal_group, m.mention_id AS mention_id
ORDER BY patient_id, study_order, mention_id
"""
DERIVED_ANATOMY_EPISODES = """
MATCH (e:Episode {level: 'anatomy', basis: 'derived'})
RETURN e.patient_id AS patient_id, e.anatomy AS anatomy, e.finding AS finding, e.number AS number,
       e.study_ids AS study_ids
"""
