"""Consistency checks of the stored graph: read-only Cypher, one query per check.

``cxrkg stats`` runs them after the counts and exits non-zero when any check finds something. Each
check returns how many offending elements there are and up to five examples (ids), so a failure
points at the data to look at. The checks:

* ``studies_without_patient``: a Study that no Patient ``HAS_STUDY`` (a lost patient link).
* ``observations_without_finding``: an Observation without its ``OF_FINDING`` edge.
* ``progressions_skipping_study``: a PROGRESSION edge (current -> prior observation) whose two
  studies are not joined by a ``PRIOR`` link: it skips a study, points forward in time, stays in one
  study, or crosses patients. Edges with ``source = 'gnn'`` (model predictions, which may compare any
  two studies on purpose) are not checked.
* ``duplicate_progressions``: two PROGRESSION edges with the same ``progression_id`` (the same change
  from the same source between the same observations); the link step writes each once by construction,
  so this guards what a uniqueness constraint would, without its cost on every load.
* ``priors_contradicting_dates``: a ``PRIOR`` link whose prior study is later than the study, whose
  ``days`` differ from the two dates, that joins two patients, or that jumps over a study of the same
  patient dated in between; also studies with more than one PRIOR link, and studies without one
  although the patient has an earlier study.
* ``duplicate_relationships``: two relationships of one type (PROGRESSION aside, checked above) between
  the same two nodes, such as an image linked twice from its study.
* ``cross_patient_links``: a study linked from a patient other than its own or from two patients, and a
  stated comparison (a Mention's ``prior_image_id``) naming an image of another patient or of its own study.

Everything runs in read transactions (``GraphStore.read``); nothing is repaired here. Rerunning the
ingest on the affected patients (or ``GraphStore.link_patients``) recomputes the derived structure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # not imported at run time: `cxrkg stats` reads through the driver-free Query API too
    from graph.store.graph_store import GraphStore
    from graph.store.query_api import QueryApiReader

EXAMPLES = 5


@dataclass(frozen=True)
class Check:
    """One consistency check: a read-only query returning ``n`` (int) and ``examples`` (list of str)."""

    name: str
    description: str
    cypher: str


@dataclass
class CheckResult:
    """What a check found: ``count`` offending elements and up to five example ids."""

    name: str
    description: str
    count: int
    examples: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.count == 0


CHECKS: tuple[Check, ...] = (
    Check(
        "studies_without_patient",
        "studies that no patient HAS_STUDY",
        """
        MATCH (s:Study) WHERE NOT EXISTS { (:Patient)-[:HAS_STUDY]->(s) }
        WITH s ORDER BY s.study_id
        RETURN count(s) AS n, collect(s.study_id)[..$k] AS examples
        """,
    ),
    Check(
        "observations_without_finding",
        "observations without an OF_FINDING edge to a Finding",
        """
        MATCH (o:Observation) WHERE NOT EXISTS { (o)-[:OF_FINDING]->(:Finding) }
        WITH o ORDER BY o.observation_id
        RETURN count(o) AS n, collect(o.observation_id)[..$k] AS examples
        """,
    ),
    Check(
        "progressions_skipping_study",
        "PROGRESSION edges (not source gnn) whose studies are not joined by a PRIOR link",
        """
        MATCH (o:Observation)-[r:PROGRESSION]->(po:Observation)
        WHERE coalesce(r.source, '') <> 'gnn'
          AND NOT EXISTS { (o)<-[:HAS_OBSERVATION]-(:Study)-[:PRIOR]->(:Study)-[:HAS_OBSERVATION]->(po) }
        WITH o, po, r ORDER BY o.observation_id, po.observation_id
        RETURN count(r) AS n,
               collect(o.observation_id + ' -> ' + po.observation_id + ' (' + coalesce(r.source, '?') + ')')[..$k]
                 AS examples
        """,
    ),
    Check(
        "duplicate_progressions",
        "PROGRESSION edges sharing a progression_id with another edge",
        """
        MATCH ()-[r:PROGRESSION]->()
        WITH r.progression_id AS id, count(*) AS copies WHERE copies > 1
        WITH id, copies ORDER BY id
        RETURN coalesce(sum(copies), 0) AS n, collect(id)[..$k] AS examples
        """,
    ),
    Check(
        "priors_contradicting_dates",
        "PRIOR links against the study dates: prior is later, days differ, another study lies between, "
        "two patients, several PRIOR links from one study, or none from a study with an earlier one",
        """
        CALL () {
          MATCH (s:Study)-[r:PRIOR]->(ps:Study)
          WHERE COUNT { (s)-[:PRIOR]->() } > 1
             OR s.study_datetime IS NULL OR ps.study_datetime IS NULL
             OR ps.study_datetime > s.study_datetime
             OR r.days IS NULL OR r.days <> duration.inDays(ps.study_datetime, s.study_datetime).days
             OR coalesce(s.patient_id, '') <> coalesce(ps.patient_id, '')
             OR EXISTS { MATCH (p:Patient)-[:HAS_STUDY]->(s), (p)-[:HAS_STUDY]->(x:Study)
                         WHERE x <> s AND x <> ps AND ps.study_datetime < x.study_datetime < s.study_datetime }
          RETURN s.study_id + ' -> ' + ps.study_id AS item
          UNION ALL
          MATCH (p:Patient)-[:HAS_STUDY]->(s:Study)
          WHERE NOT EXISTS { (s)-[:PRIOR]->() }
            AND EXISTS { MATCH (p)-[:HAS_STUDY]->(x:Study) WHERE x.study_datetime < s.study_datetime }
          RETURN s.study_id + ' -> (no PRIOR link)' AS item
        }
        WITH item ORDER BY item
        RETURN count(item) AS n, collect(item)[..$k] AS examples
        """,
    ),
    Check(
        "duplicate_relationships",
        "relationships of one type (PROGRESSION aside) repeated between the same two nodes",
        """
        MATCH (a)
        CALL (a) {
          MATCH (a)-[r]->(b) WHERE NOT r:PROGRESSION
          WITH b, type(r) AS t, count(*) AS copies WHERE copies > 1
          RETURN b, t, copies
        }
        WITH a, b, t, copies
        ORDER BY t
        RETURN coalesce(sum(copies), 0) AS n,
               collect(t + ' ' + coalesce(a.study_id, a.observation_id, a.image_id, a.patient_id, elementId(a)) + ' -> '
                       + coalesce(b.image_id, b.report_id, b.mention_id, b.observation_id, b.study_id, elementId(b)))[..$k]
                 AS examples
        """,
    ),
    Check(
        "cross_patient_links",
        "studies linked from another patient or from two, and stated comparisons with an image of another "
        "patient or of the same study",
        """
        CALL () {
          MATCH (p:Patient)-[:HAS_STUDY]->(s:Study)
          WHERE s.patient_id <> p.patient_id OR COUNT { (:Patient)-[:HAS_STUDY]->(s) } > 1
          RETURN 'study ' + s.study_id + ' of patient ' + p.patient_id AS item
          UNION ALL
          MATCH (s:Study)-[:HAS_OBSERVATION]->(:Observation)-[:HAS_MENTION]->(m:Mention)
          WHERE m.prior_image_id IS NOT NULL
          MATCH (ps:Study)-[:HAS_IMAGE]->(:Image {image_id: m.prior_image_id})
          WHERE ps = s OR ps.patient_id <> s.patient_id
          RETURN 'mention ' + m.mention_id + ' compares study ' + s.study_id + ' with ' + ps.study_id AS item
        }
        WITH item ORDER BY item
        RETURN count(item) AS n, collect(item)[..$k] AS examples
        """,
    ),
)


def run_checks(store: GraphStore | QueryApiReader, checks: tuple[Check, ...] = CHECKS) -> list[CheckResult]:
    """Run every check in its own read transaction, in order.

    Returns:
        one :class:`CheckResult` per check; ``all(r.ok for r in results)`` means the graph is consistent.

    Raises:
        neo4j.exceptions.Neo4jError or graph.store.query_api.QueryApiError: a query failed (for example on a
            server without the schema).
    """
    out = []
    for check in checks:
        row = store.read(check.cypher, k=EXAMPLES)[0]
        out.append(CheckResult(check.name, check.description, int(row["n"]), [str(e) for e in row["examples"]]))
    return out
