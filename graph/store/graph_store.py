"""Neo4j I/O: one driver per process, schema, batched writes and the per-patient link step.

Writes go through the driver's managed transactions (``execute_write``), which retry exactly the
errors Neo4j marks as transient (deadlocks, leader switches, lost connections) with backoff and let
every other error through; a lock wait that timed out is retried within a budget, then :class:`GraphBusy`,
and a transaction that timed out is :class:`GraphBusy` at once (:mod:`graph.store.busy`). One batch is one transaction: it is stored whole or not at all.
"""

from __future__ import annotations

import re
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable

import neo4j
from neo4j import GraphDatabase, ManagedTransaction

from graph.longitudinal.derived_rows import DerivedRows, batch_rows, derived_rows, finding_parents, fresh_patient_rows
from graph.longitudinal.events import MentionFact, StudyFact, derive_patient
from graph.measurements.rows import measurement_rows
from graph.measurements.trends import MeasuredStudy, geometry_rows
from graph.records import ParsedFile, file_key
from graph.settings import Neo4jSettings, duration_seconds, neo4j_settings
from graph.settings import settings as graph_settings
from graph.store import measurement_statements as ms
from graph.store import read_statements as rs
from graph.store import statements as st
from graph.store.busy import GraphBusy, check_lock_wait, run_write  # noqa: F401  (GraphBusy: re-exported)
from graph.store.errors import GraphUnavailable, LoginRefused, ServerLost  # noqa: F401  (re-exported)
from graph.vocabulary import Vocabulary

LINK_CHUNK = 500  # patients per link transaction


def open_driver(settings: Neo4jSettings | None = None) -> neo4j.Driver:
    """Open and verify a driver for the configured database.

    Raises:
        GraphUnavailable: the server does not answer or rejects the credentials; the message names
            the URI and, for the local server, says to run ``cxrkg db start``.
    """
    settings = settings or neo4j_settings()
    # a server that stopped answering is given up after CXRKG_NEO4J_RECONNECT, not the driver's 30 s of
    # retries per transaction (and its last pause, up to as long again), times every transaction in flight
    bound = duration_seconds(graph_settings().neo4j_reconnect)
    driver = GraphDatabase.driver(settings.uri, auth=(settings.user, settings.password),
                                  notifications_min_severity="OFF", connection_timeout=bound,
                                  max_transaction_retry_time=bound)
    try:
        driver.verify_connectivity()
    except (neo4j.exceptions.ServiceUnavailable, neo4j.exceptions.AuthError, OSError) as exc:
        driver.close()
        hint = "" if settings.external else " (start the local server with `cxrkg db start`)"
        raise GraphUnavailable(f"cannot use Neo4j at {settings.uri}: {exc}{hint}") from exc
    return driver


def lost_message(uri: str, exc: Exception, external: bool) -> str:
    """The one line of a server that stopped answering mid-command: which, why, and what to do."""
    reason = re.search(r"\[Errno \d+\] ([^)]+)", str(exc))
    why = reason.group(1).lower() if reason else "the connection was lost"
    todo = "Check the server" if external else "Start it (`cxrkg db start`)"
    return (f"lost Neo4j at {uri} mid-command ({why}, for longer than CXRKG_NEO4J_RECONNECT, "
            f"{graph_settings().neo4j_reconnect}); what was committed stays, the rest was rolled back. {todo} "
            "and run the same command again: loads are idempotent")


def server_agent(uri: str, user: str, password: str, timeout_s: float) -> str:
    """Log in once and return the server's agent string (``"Neo4j/5.26.30"``); what the local server's
    start and status use to tell a server that accepts logins from a port that is merely open.

    Raises:
        LoginRefused: wrong credentials (or a password not yet applied by a starting server).
        GraphUnavailable: nothing answers at ``uri`` within ``timeout_s`` seconds, or the answer is not Bolt.
    """
    try:
        with GraphDatabase.driver(uri, auth=(user, password), connection_timeout=timeout_s) as driver:
            driver.verify_connectivity()
            return driver.get_server_info().agent
    except neo4j.exceptions.AuthError as exc:
        raise LoginRefused(f"{uri} refused the login: {exc}") from exc
    except (neo4j.exceptions.DriverError, neo4j.exceptions.Neo4jError, OSError) as exc:
        raise GraphUnavailable(f"no Neo4j login at {uri}: {exc}") from exc


@dataclass
class WriteCounts:
    """Graph elements created by a write (from Neo4j's own counters)."""

    nodes: int = 0
    relationships: int = 0

    def add(self, summary: neo4j.ResultSummary) -> None:
        self.nodes += summary.counters.nodes_created
        self.relationships += summary.counters.relationships_created

    def __iadd__(self, other: "WriteCounts") -> "WriteCounts":
        self.nodes += other.nodes
        self.relationships += other.relationships
        return self


@dataclass
class Batch:
    """The rows one write transaction stores: records of several parsed files, plus their SourceFile rows.

    A path in ``retract`` loses the old mentions of all its records (or of those in ``retract_only[path]``)
    but those of the records in ``retract_keep[path]``.
    ``merge`` writes with MERGE from the start (later chunks of a changed, streamed file, whose old
    reports are still in the graph); a batch with ``retract`` is always written with MERGE. The
    patients in ``link`` that the batch writes are relinked (see :meth:`GraphStore.link_patients`) in
    the same transaction: the caller names those whose files are all in this batch.
    """

    files: list[ParsedFile] = field(default_factory=list)
    source_files: list[dict[str, Any]] = field(default_factory=list)
    retract: list[str] = field(default_factory=list)
    retract_only: dict[str, list[str]] = field(default_factory=dict)  # path -> the only records to retract
    retract_keep: dict[str, list[str]] = field(default_factory=dict)  # path -> records whose mentions stay
    merge: bool = False
    link: frozenset[str] = frozenset()


def _run(tx: ManagedTransaction, query: str, counts: WriteCounts, **params: Any) -> list[neo4j.Record]:
    try:
        result = tx.run(query, **params)
        records = list(result)
    except neo4j.exceptions.TransientError as exc:
        check_lock_wait(exc)
        raise
    counts.add(result.consume())
    return records


def _derive(tx: ManagedTransaction, patient_ids: list[str], counts: WriteCounts) -> None:
    """The link step for patients whose locks the transaction holds: read their studies and mentions,
    derive states and events with :func:`graph.longitudinal.events.derive_patient`, replace the derived structure."""
    if not patient_ids:
        return
    studies: dict[str, list[StudyFact]] = defaultdict(list)
    mentions: dict[str, list[MentionFact]] = defaultdict(list)
    for r in tx.run(st.PATIENT_FACTS, patient_ids=patient_ids):
        when = datetime.fromisoformat(r["study_datetime"]) if r["study_datetime"] else None
        studies[r["patient_id"]].append(StudyFact(r["study_id"], when, tuple(r["image_ids"])))
        mentions[r["patient_id"]] += [_mention_fact(r["study_id"], m) for m in r["mentions"]]
    parents = finding_parents()
    rows = derived_rows({p: derive_patient(studies[p], mentions[p], parents) for p in patient_ids},
                        {p: mentions[p] for p in patient_ids})
    _run(tx, st.RESET_DERIVED, counts, patient_ids=patient_ids)
    _run(tx, st.write_observation_states_statement(), counts, rows=rows.observations)
    _write_links(tx, rows, counts)


def _write_images(tx: ManagedTransaction, merge: bool, counts: WriteCounts, images: list[dict[str, Any]],
                  boxes: list[dict[str, Any]], measurements: list[dict[str, Any]]) -> None:
    """A batch's Image nodes, their boxes and their measurements; in MERGE mode (a changed or re-read file)
    the images first lose the boxes and measurements of their earlier load."""
    _run(tx, st.images_statement(merge), counts, rows=images)
    if merge:
        image_ids = [i["image_id"] for i in images]
        _run(tx, st.DELETE_IMAGE_BBOXES, counts, image_ids=image_ids)
        _run(tx, ms.DELETE_IMAGE_MEASUREMENTS, counts, image_ids=image_ids)
    _run(tx, st.bboxes_statement(merge), counts, rows=boxes)
    _run(tx, ms.measurements_statement(merge), counts, rows=measurements)


def _link_geometry(tx: ManagedTransaction, patient_ids: list[str], counts: WriteCounts) -> int:
    """The geometry link step for these patients (after their PRIOR links are written): replace their
    GeometryObservation nodes and geometry PROGRESSION edges (graph.measurements.trends). Returns the
    number of PROGRESSION edges written."""
    if not patient_ids:
        return 0
    studies = [MeasuredStudy(r["study_id"], r["patient_id"], r["study_datetime"], r["prior_id"],
                             tuple(map(tuple, r["measurements"])))
               for r in tx.run(ms.MEASURED_STUDIES, patient_ids=patient_ids, names=ms.MEASURED_NAMES)]
    observations, edges = geometry_rows(studies)
    _run(tx, ms.RESET_GEOMETRY, counts, patient_ids=patient_ids)
    _run(tx, ms.write_geometry_observations_statement(), counts, rows=observations)
    _run(tx, ms.GEOMETRY_PROGRESSIONS, counts, rows=edges)
    return len(edges)


def _set_link_pending(tx: ManagedTransaction, counts: WriteCounts, pending: Iterable[str],
                      linked: Iterable[str]) -> None:
    """Mark the patients the transaction stored but did not relink (``pending``) and unmark those it
    relinked (``linked``), whose locks it holds: what a rerun after a crash relinks
    (:meth:`GraphStore.unlinked_patients`, ``statements.SET_LINK_PENDING``)."""
    rows = [{"patient_id": p, "pending": True} for p in sorted(pending)]
    _run(tx, st.SET_LINK_PENDING, counts, rows=rows + [{"patient_id": p, "pending": False} for p in sorted(linked)])


def _mention_fact(study_id: str, m: list[Any]) -> MentionFact:
    """A MentionFact from one entry of PATIENT_FACTS' ``mentions`` (its fields in MentionFact's order)."""
    return MentionFact(study_id, m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7] or "", m[8] or "", m[9], m[10], m[11],
                       m[12], m[13])


def _write_links(tx: ManagedTransaction, rows: DerivedRows, counts: WriteCounts) -> None:
    """PRIOR links, StudyFinding nodes, PROGRESSION edges and Episode nodes of a derivation (its
    observations are written by the caller)."""
    _run(tx, st.write_study_order_statement(), counts, rows=rows.studies)
    _run(tx, st.write_study_findings_statement(), counts, rows=rows.study_findings)
    _run(tx, st.progressions_statement("Observation", "observation_id"), counts, rows=rows.anatomy_events)
    _run(tx, st.progressions_statement("StudyFinding", "study_finding_id"), counts, rows=rows.study_events)
    _run(tx, st.write_episodes_statement(), counts, rows=rows.episodes)


def _migrate_schema(session: neo4j.Session) -> None:
    """Bring a graph loaded by an earlier cxrkg to the current schema (a no-op on a current one).

    Earlier graphs indexed Mentions on their ``file`` path and had a uniqueness constraint
    on PROGRESSION ``progression_id`` (which the link step guarantees by construction). The old index
    is what finds the mentions to give a ``file_key``; it is dropped afterwards. Indexes a later schema
    replaced (:data:`graph.store.statements.SUPERSEDED_INDEX_DROPS`) are dropped.
    """
    for statement in st.SUPERSEDED_INDEX_DROPS:
        session.run(statement).consume()
    if session.run(st.LEGACY_MENTION_FILE_INDEX).single() is None:
        return
    files = [r["file"] for r in session.run(st.MENTION_FILES_WITHOUT_KEY)]
    session.run(st.SET_MENTION_FILE_KEYS, rows=[{"path": f, "key": file_key(f)} for f in files]).consume()
    for statement in st.LEGACY_SCHEMA_DROPS:
        session.run(statement).consume()


class GraphStore:
    """The cxrkg graph in one Neo4j database.

    Args:
        driver: an open driver (shared; never passed to Prefect tasks).
        database: database name, or None for the server's default.
    """

    def __init__(self, driver: neo4j.Driver, database: str | None = None, uri: str | None = None,
                 external: bool = True):
        self.driver = driver
        self.database = database
        self.uri, self.external = uri, external

    @contextmanager
    def _session(self, read: bool = False) -> Iterator[neo4j.Session]:
        """A session whose lost connection (after the driver's retries) is :class:`ServerLost`."""
        mode = neo4j.READ_ACCESS if read else neo4j.WRITE_ACCESS
        try:
            with self.driver.session(database=self.database, default_access_mode=mode) as session:
                yield session
        except (neo4j.exceptions.ServiceUnavailable, neo4j.exceptions.SessionExpired) as exc:
            raise ServerLost(lost_message(self.uri or "the Neo4j server", exc, self.external)) from exc

    def read(self, query: str, **params: Any) -> list[dict[str, Any]]:
        """Run a query in a managed read transaction and return its rows as dicts."""
        with self._session(read=True) as session:
            return session.execute_read(lambda tx: [r.data() for r in tx.run(query, **params)])

    # --- schema and vocabulary ---------------------------------------------------------------

    def ensure_schema(self, vocab: Vocabulary) -> None:
        """Create constraints and indexes, then the shared Anatomy and Finding vocabulary nodes.

        Repeatable: every statement is ``IF NOT EXISTS`` or a MERGE on a constrained key.
        """
        with self._session() as session:
            for statement in st.schema_statements():
                session.run(statement).consume()
            session.run("CALL db.awaitIndexes(300)").consume()
            _migrate_schema(session)
        regions = [
            {"name": r.name, "code": r.code, "side": r.side, "has_bbox": r.has_bbox, "cuis": list(r.cuis),
             "synonyms": sorted(k for k, v in vocab._region_forms.items() if v == (r.name,) and k != r.name)}
            for r in vocab.regions.values()
        ]
        findings = [
            {"name": f.name, "category": f.category, "cuis": list(f.cuis), "synonyms": list(f.synonyms)}
            for f in vocab.findings.values()
        ]
        region_parents = [{"name": r.name, "parent": r.parent} for r in vocab.regions.values() if r.parent]
        finding_parents = [{"name": f.name, "parent": p} for f in vocab.findings.values() for p in f.parents]

        def work(tx: ManagedTransaction) -> None:
            counts = WriteCounts()
            _run(tx, st.merge_vocabulary_statement("Anatomy"), counts, rows=regions)
            _run(tx, st.merge_vocabulary_parents_statement("Anatomy", "PART_OF"), counts, rows=region_parents)
            _run(tx, st.merge_vocabulary_statement("Finding"), counts, rows=findings)
            _run(tx, st.merge_vocabulary_parents_statement("Finding", "IS_A"), counts, rows=finding_parents)

        with self._session() as session:
            run_write(session, work)

    def holds_data(self) -> bool:
        """Whether the database holds any node besides the Anatomy and Finding vocabulary."""
        return bool(self.read(rs.HOLDS_DATA)[0]["holds_data"])

    # --- incremental bookkeeping ---------------------------------------------------------------

    def source_file_hashes(self, paths: Iterable[str]) -> dict[str, tuple[str, str, int | None, int | None]]:
        """What already loaded files were loaded as: path -> (sha256, vocabulary version, size in bytes,
        modification time in ns); the last two are None for files loaded before cxrkg recorded them."""
        rows = self.read(st.SOURCE_FILE_HASHES, paths=list(paths))
        return {r["path"]: (r["sha256"], r["vocabulary_version"], r["size"], r["mtime_ns"]) for r in rows}

    def study_owners(self, study_ids: Iterable[str]) -> dict[str, tuple[str, Any]]:
        """For studies already in the graph: study_id -> (patient_id, study_datetime or None)."""
        rows = self.read(st.STUDY_OWNERS, study_ids=list(study_ids))
        return {r["study_id"]: (r["patient_id"], r["study_datetime"]) for r in rows}

    def record_files(self, image_ids: Iterable[str], report_ids: Iterable[str]) -> dict[tuple[str, str], str]:
        """For images and reports already in the graph: ``("image" | "report", id) -> file`` (those stored
        without their file are left out)."""
        rows = self.read(rs.RECORD_FILES, image_ids=list(image_ids), report_ids=list(report_ids))
        return {(r["kind"], r["id"]): r["file"] for r in rows if r["file"] is not None}

    def image_studies(self, image_ids: Iterable[str]) -> dict[str, tuple[str, str]]:
        """For images already in the graph: image_id -> (study_id, patient_id)."""
        rows = self.read(rs.IMAGE_STUDIES, image_ids=list(image_ids))
        return {r["image_id"]: (r["study_id"], r["patient_id"]) for r in rows}

    # --- writes --------------------------------------------------------------------------------

    def write_batch(self, batch: Batch) -> tuple[WriteCounts, set[str], set[str]]:
        """Store one batch in one transaction; returns created elements, the touched patient ids and
        those of them relinked in the transaction.

        Files listed in ``batch.retract`` (changed since their last load) lose their old mentions first,
        in the same transaction, so a crash leaves either the old or the new content, never a mix.
        A batch of files never loaded before is written with CREATE; if that breaks a uniqueness
        constraint (the same records under another path, or a concurrent run storing the same files),
        the transaction is rolled back and the batch is written again with MERGE. Touched patients it does
        not relink stay marked for the link step (:meth:`unlinked_patients`), in the same transaction.
        """
        studies, images, boxes, reports, observations = batch_rows(batch.files)
        patients = {s["patient_id"] for s in studies.values()}
        linked = patients & batch.link
        # Patients new to the graph are derived from the batch itself, before the transaction; whether
        # they are new is only known under their locks, so both ways stay ready.
        fresh_rows = {} if batch.retract or batch.merge else fresh_patient_rows(
            list(studies.values()), images, batch.files, observations, linked)
        patient_of = {sid: row["patient_id"] for sid, row in studies.items()}
        measurements = measurement_rows(batch.files, patient_of)

        def work(tx: ManagedTransaction, merge: bool) -> tuple[WriteCounts, set[str]]:
            counts = WriteCounts()  # per attempt: the driver may retry the whole function
            touched_studies: set[str] = set()
            locked = _run(tx, st.LOCK_PATIENTS, counts, patient_ids=sorted(patients))
            fresh = set() if merge else {r["patient_id"] for r in locked if r["fresh"]} & fresh_rows.keys()
            if batch.retract:
                rows = _run(tx, st.RETRACT_FILES, counts,
                            files=[{"path": p, "key": file_key(p), "records": batch.retract_only.get(p),
                                    "keep": batch.retract_keep.get(p)} for p in batch.retract])
                touched_studies.update(rows[0]["study_ids"] if rows else [])
            _run(tx, st.merge_studies_statement(), counts, rows=list(studies.values()))
            _write_images(tx, merge, counts, images, boxes, measurements)
            _run(tx, st.reports_statement(merge), counts, rows=reports)
            _run(tx, st.observations_statement(merge), counts,
                 rows=[o for o in observations.values() if patient_of[o["study_id"]] not in fresh])
            derived = DerivedRows()
            for p in sorted(fresh):
                derived.extend(fresh_rows[p])
            _run(tx, st.create_observations_statement(), counts, rows=derived.observations)
            _write_links(tx, derived, counts)
            _run(tx, st.merge_source_files_statement(), counts, rows=batch.source_files)
            owners = list(tx.run(st.STUDY_OWNERS, study_ids=list(touched_studies))) if touched_studies else []
            retracted_patients = {r["patient_id"] for r in owners}
            _derive(tx, sorted(linked - retracted_patients - fresh), counts)
            relinked = linked - retracted_patients  # the fresh ones included
            _link_geometry(tx, sorted(relinked), counts)
            _set_link_pending(tx, counts, (patients | retracted_patients) - relinked, relinked)
            return counts, retracted_patients

        with self._session() as session:
            try:
                counts, retracted_patients = run_write(session, work, bool(batch.retract) or batch.merge)
            except neo4j.exceptions.ConstraintError:
                counts, retracted_patients = run_write(session, work, True)
        return counts, patients | retracted_patients, linked - retracted_patients

    def unlinked_patients(self) -> list[str]:
        """The patients stored by a write that did not relink them, and not relinked since (sorted ids):
        those of a run that ended before its link stage (killed, server lost), or of a run still loading.
        The ingest flow's link stage relinks them, so a rerun after a crash completes the derivation."""
        return [r["patient_id"] for r in self.read(st.UNLINKED_PATIENTS)]

    def link_patients(self, patient_ids: Iterable[str]) -> WriteCounts:
        """Recompute prior-study links, mention states, observation summaries, StudyFinding nodes and
        progression edges for these patients from what the graph holds
        (:func:`graph.longitudinal.events.derive_patient`).

        Progression edges with source ``gnn`` are left alone; stated ones come from the stored mentions
        (Chest ImaGenome comparisons, RadGraph2 change entities), derived ones from the rules of
        :data:`graph.longitudinal.events.RULES` between consecutive studies.
        """
        ids = sorted(set(patient_ids))
        counts = WriteCounts()
        for start in range(0, len(ids), LINK_CHUNK):
            chunk = ids[start:start + LINK_CHUNK]

            def work(tx: ManagedTransaction, chunk: list[str] = chunk) -> WriteCounts:
                done = WriteCounts()  # per attempt: a retried attempt's rolled-back writes are not counted
                _run(tx, st.LOCK_PATIENTS, done, patient_ids=chunk)
                _derive(tx, chunk, done)
                _link_geometry(tx, chunk, done)
                _set_link_pending(tx, done, (), chunk)
                return done

            with self._session() as session:
                counts += run_write(session, work)
        return counts

    def link_geometry(self) -> int:
        """The geometry link step for every patient with a decided measurement (what a bulk load runs once
        its import is started; a transactional load links each patient's geometry with the rest of its link
        step). Repeatable: each patient's geometry is replaced. Returns the geometry PROGRESSION edges written."""
        ids = [r["patient_id"] for r in self.read(ms.MEASURED_PATIENTS)]
        edges = 0
        for start in range(0, len(ids), LINK_CHUNK):
            chunk = ids[start:start + LINK_CHUNK]

            def work(tx: ManagedTransaction, chunk: list[str] = chunk) -> int:
                return _link_geometry(tx, chunk, WriteCounts())

            with self._session() as session:
                edges += run_write(session, work)
        return edges

    def replace_gnn_progressions(self, patient_ids: list[str], rows: list[dict[str, Any]]) -> int:
        """In one transaction, delete these patients' predicted (``source: 'gnn'``) PROGRESSION edges and
        write ``rows`` (see ``statements.WRITE_GNN_PROGRESSIONS``); stated edges are never touched.
        Returns the number of edges written."""
        def work(tx: ManagedTransaction) -> int:
            tx.run(st.DELETE_GNN_PROGRESSIONS, patient_ids=patient_ids).consume()
            return tx.run(st.WRITE_GNN_PROGRESSIONS, rows=rows).single(strict=True)["written"]

        with self._session() as session:
            return run_write(session, work)

    def clear(self) -> None:
        """Delete every node and relationship (tests and benchmarks), in batches.

        Relationships go first: a DETACH DELETE of a hub (a Finding with 800,000 observations on the NIH
        cohort) would hold all of its relationships in one batch and exhaust a 2 GB heap. The nodes then go
        with DETACH DELETE all the same, so that a relationship another client wrote in between does not fail
        the clear ("still has relationships"); see :meth:`end_other_transactions` to stop such a client first.
        """
        with self._session() as session:
            session.run("MATCH ()-[r]->() CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS").consume()
            session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS").consume()

    def end_other_transactions(self, timeout_s: float = 60.0) -> list[str]:
        """Terminate every client's open transaction on the server but this call's own (``TERMINATE
        TRANSACTIONS``) and return once each is terminated, so that what runs next has the graph to itself
        (tests and benchmarks: a writer a failed test left behind). A terminated transaction can write
        nothing more and its locks are free, though the server lists it until its client comes back or
        goes. Returns the ids terminated.

        Raises:
            GraphBusy: some are still not terminated ``timeout_s`` seconds later (the message names them).
        """
        ended: list[str] = []
        deadline = time.monotonic() + timeout_s
        with self._session() as session:
            while True:
                live = [r["id"] for r in session.run(rs.OPEN_TRANSACTIONS) if not r["status"].startswith("Terminated")]
                if not live:
                    return ended
                if time.monotonic() > deadline:
                    raise GraphBusy(f"transactions {', '.join(live)} are still not terminated {timeout_s:.0f} s "
                                    "after TERMINATE TRANSACTIONS")
                session.run("TERMINATE TRANSACTIONS $ids", ids=live).consume()
                ended += [i for i in live if i not in ended]
                time.sleep(0.05)


_shared: GraphStore | None = None
_shared_lock = threading.Lock()


def shared_store() -> GraphStore:
    """The process-wide store (one driver per process, closed at exit); Prefect tasks use this
    instead of receiving a driver as an argument. Tasks of one flow may ask for it at once from their
    threads (the ingest flow's schema step runs beside its plan): the first opens it, under a lock."""
    global _shared
    with _shared_lock:
        if _shared is None:
            import atexit

            settings = neo4j_settings()
            driver = open_driver(settings)
            atexit.register(driver.close)
            _shared = GraphStore(driver, settings.database, settings.uri, settings.external)
        return _shared


def reset_shared_store() -> None:
    """Close the process-wide driver (after the configuration changed, e.g. in tests)."""
    global _shared
    if _shared is not None:
        _shared.driver.close()
        _shared = None
