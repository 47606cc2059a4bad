"""Read what report scoring needs of a cohort from the graph, in one read transaction
(:class:`graph.report_scoring.facts.StudyFacts` per study)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from graph.report_scoring.facts import GraphChange, StudyFacts

if TYPE_CHECKING:
    from graph.store.graph_store import GraphStore

# Per study: its patient and prior, the first stored report of each, the StudyFinding states of both, and the
# study-level PROGRESSION edges between them (gnn predictions are not the patient's history: left out).
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


def cohort_facts(store: GraphStore, study_ids: Iterable[str] | None = None) -> dict[str, StudyFacts]:
    """The graph's facts of these studies (every study when None), by study id; ids the graph does not
    hold are absent from the result.

    Raises:
        graph.store.GraphUnavailable: the server cannot be reached.
    """
    ids = None if study_ids is None else sorted(set(study_ids))
    out: dict[str, StudyFacts] = {}
    for row in store.read(STUDY_FACTS, study_ids=ids):
        changes: dict[str, list[GraphChange]] = {}
        for finding, change, basis, source, evidence in row["changes"]:
            changes.setdefault(finding, []).append(GraphChange(change, basis, source or basis, tuple(evidence or ())))
        out[row["study_id"]] = StudyFacts(
            row["study_id"], row["patient_id"], row["prior_study_id"],
            row["report"][0] if row["report"] else None,
            row["prior_report"][0] if row["prior_report"] else None,
            {f: s for f, s in row["states"]}, {f: s for f, s in row["prior_states"]},
            {f: tuple(sorted(set(c))) for f, c in changes.items()})
    return out
