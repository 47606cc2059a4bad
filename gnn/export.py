"""Versioned snapshots of the graph for learning: read through read transactions, streamed by patient.

A snapshot folder holds parquet tables (pyarrow) and ``manifest.json``:

=========================  ======================================================================
``studies.parquet``         patient_id, study_id, study_datetime (ISO text), study_order,
                            prior_study_id, prior_days (the PRIOR edge; null for a first study),
                            age_decile (Chest ImaGenome's bucket, e.g. "60-70"), gender (the patient's)
``images.parquet``          study_id, image_id, view
``observations.parquet``    one row per (study, anatomy, finding, source) with polarity-bearing
                            mentions: n_present, n_absent, n_uncertain, max_severity (1..3 or null)
``study_findings.parquet``  study-level states: study_id, finding, state (present / uncertain / absent /
                            not_mentioned; a pair without a row is not mentioned)
``labels.parquet``          stated PROGRESSION edges: study_id, prior_study_id, anatomy, finding,
                            source (chest_imagenome / radgraph), change
``anatomy.parquet``         name, side, parent (PART_OF)
``findings.parquet``        name, category, parents (IS_A, list)
``region_embeddings.parquet``  optional, user supplied: image_id, anatomy, embedding (float32 list)
=========================  ======================================================================

Inputs never carry a label's evidence: observation rows come from mentions' source, polarity and
severity only (no change, change label, prior image or evidence text), observations that exist only
because a stated change created them are left out, and PROGRESSION edges appear only in
``labels.parquet``.

The manifest records ``format_version``, ``content_hash`` (SHA-256 over the per-table multiset hashes of the exported rows: the same graph
content gives the same hash, whatever the server, the chunk size or the row order),
the vocabulary version(s) the graph was loaded with, the table schemas, row counts and the
embeddings file's own SHA-256.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from gnn.errors import GnnError
from graph.formats.files import sha256_of
from graph.store import GraphStore
from graph.store import statements as st
from graph.terms import Source

FORMAT_VERSION = 2
MANIFEST = "manifest.json"
PATIENT_CHUNK = 500
SOURCES = (Source.CHEST_IMAGENOME, Source.RADGRAPH)

SCHEMAS: dict[str, pa.Schema] = {
    "studies": pa.schema([("patient_id", pa.string()), ("study_id", pa.string()), ("study_datetime", pa.string()),
                          ("study_order", pa.int64()), ("prior_study_id", pa.string()), ("prior_days", pa.int64()),
                          ("age_decile", pa.string()), ("gender", pa.string())]),
    "images": pa.schema([("study_id", pa.string()), ("image_id", pa.string()), ("view", pa.string())]),
    "observations": pa.schema([("study_id", pa.string()), ("anatomy", pa.string()), ("finding", pa.string()),
                               ("source", pa.string()), ("n_present", pa.int64()), ("n_absent", pa.int64()),
                               ("n_uncertain", pa.int64()), ("max_severity", pa.int64())]),
    "study_findings": pa.schema([("study_id", pa.string()), ("finding", pa.string()), ("state", pa.string())]),
    "labels": pa.schema([("study_id", pa.string()), ("prior_study_id", pa.string()), ("anatomy", pa.string()),
                         ("finding", pa.string()), ("source", pa.string()), ("change", pa.string())]),
    "anatomy": pa.schema([("name", pa.string()), ("side", pa.string()), ("parent", pa.string())]),
    "findings": pa.schema([("name", pa.string()), ("category", pa.string()), ("parents", pa.list_(pa.string()))]),
}
_PATIENT_QUERIES = (("studies", st.GNN_STUDIES), ("images", st.GNN_IMAGES),
                    ("observations", st.GNN_OBSERVATION_MENTIONS), ("study_findings", st.GNN_STUDY_FINDINGS),
                    ("labels", st.GNN_STATED_PROGRESSIONS))
EMBEDDINGS = "region_embeddings.parquet"


@dataclass
class Manifest:
    """What a snapshot holds; written as ``manifest.json``.

    Attributes:
        format_version: layout version of the folder (:data:`FORMAT_VERSION`).
        content_hash: SHA-256 (hex) of the exported rows; checkpoints record it.
        vocabulary_versions: vocabulary versions the graph's files were loaded with.
        created_at: UTC time of the export (ISO 8601); not part of the hash.
        rows: row count per table.
        schema: column -> Arrow type per table.
        patients: number of patients.
        embeddings_sha256, embedding_dim: the embeddings file's hash and vector length, or None.
        seconds: export wall time.
    """

    format_version: int
    content_hash: str
    vocabulary_versions: list[str]
    created_at: str
    rows: dict[str, int]
    schema: dict[str, dict[str, str]]
    patients: int
    embeddings_sha256: str | None = None
    embedding_dim: int | None = None
    seconds: float = 0.0

    def to_json(self) -> str:
        return json.dumps(self.__dict__, indent=2)

    @classmethod
    def read(cls, folder: Path) -> "Manifest":
        """Raises: GnnError: the folder has no readable manifest or another format version."""
        path = Path(folder) / MANIFEST
        try:
            raw = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise GnnError(f"{folder}: not a cxrkg snapshot ({MANIFEST} missing or unreadable: {exc}); "
                           "write one with `cxrkg export snapshot --out DIR`") from exc
        if raw.get("format_version") != FORMAT_VERSION:
            raise GnnError(f"{folder}: snapshot format {raw.get('format_version')} is not {FORMAT_VERSION}; re-export it")
        return cls(**raw)


@dataclass
class GraphTables:
    """The exported tables in memory (lists of row dicts per table) and their content hash."""

    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    content_hash: str = ""
    vocabulary_versions: list[str] = field(default_factory=list)
    patients: int = 0


class _Hasher:
    """Order-independent hash of each table's rows: the sum modulo 2^256 of the SHA-256 of every row's
    canonical JSON, with the row count (a multiset hash), so chunk size and row order do not matter."""

    def __init__(self) -> None:
        self._sum = {name: 0 for name in SCHEMAS}
        self._n = {name: 0 for name in SCHEMAS}

    def update(self, table: str, rows: Iterable[dict[str, Any]]) -> None:
        acc = self._sum[table]
        for r in rows:
            line = json.dumps(r, sort_keys=True, default=str, separators=(",", ":")).encode()
            acc = (acc + int.from_bytes(hashlib.sha256(line).digest(), "big")) % (1 << 256)
            self._n[table] += 1
        self._sum[table] = acc

    def hexdigest(self, vocabulary_versions: list[str]) -> str:
        top = hashlib.sha256(f"cxrkg-snapshot-v{FORMAT_VERSION}|{','.join(vocabulary_versions)}".encode())
        for name in sorted(self._sum):
            top.update(f"{name}:{self._n[name]}:{self._sum[name]:064x}".encode())
        return top.hexdigest()


def _chunks(ids: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(ids), size):
        yield ids[start:start + size]


def iter_graph_rows(store: GraphStore, patient_ids: list[str] | None = None,
                    chunk: int = PATIENT_CHUNK) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Yield ``(table, rows)`` batches: the vocabulary tables first, then per chunk of patients the
    patient tables, each from one read transaction.

    Args:
        store: the graph to read.
        patient_ids: restrict to these patients (sorted here); None for every patient in the graph.
        chunk: patients per read transaction.

    Raises:
        GnnError: the graph has no patients (nothing was ingested), or none of ``patient_ids`` exists.
    """
    all_ids = [r["patient_id"] for r in store.read(st.GNN_PATIENT_IDS)]
    if not all_ids:
        raise GnnError("the graph has no patients: ingest data first (`cxrkg ingest PATH`)")
    if patient_ids is not None:
        known = set(all_ids)
        ids = sorted({str(p) for p in patient_ids} & known)
        if not ids:
            raise GnnError(f"no patient {', '.join(map(str, patient_ids))} in the graph")
    else:
        ids = all_ids
    yield "anatomy", store.read(st.GNN_ANATOMY)
    yield "findings", store.read(st.GNN_FINDINGS)
    for part in _chunks(ids, chunk):
        for table, query in _PATIENT_QUERIES:
            yield table, store.read(query, patient_ids=part)


def read_graph_tables(store: GraphStore, patient_ids: list[str] | None = None) -> GraphTables:
    """The snapshot tables in memory, with the content hash of exactly these rows.

    The hash equals the manifest hash of ``export_snapshot`` when ``patient_ids`` is None.

    Raises:
        GnnError: as :func:`iter_graph_rows`.
    """
    hasher = _Hasher()
    out = GraphTables(tables={name: [] for name in SCHEMAS})
    for table, rows in iter_graph_rows(store, patient_ids):
        hasher.update(table, rows)
        out.tables[table].extend(rows)
    out.vocabulary_versions = [r["version"] for r in store.read(st.GNN_VOCABULARY_VERSIONS)]
    out.content_hash = hasher.hexdigest(out.vocabulary_versions)
    out.patients = len({r["patient_id"] for r in out.tables["studies"]})
    return out


def _check_embeddings(path: Path) -> tuple[pa.Table, int]:
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowInvalid) as exc:
        raise GnnError(f"{path}: cannot read embeddings parquet: {exc}") from exc
    missing = {"image_id", "anatomy", "embedding"} - set(table.column_names)
    if missing:
        raise GnnError(f"{path}: embeddings need columns image_id, anatomy, embedding; missing {', '.join(sorted(missing))}")
    typ = table.schema.field("embedding").type
    if not (pa.types.is_list(typ) or pa.types.is_fixed_size_list(typ) or pa.types.is_large_list(typ)) \
            or not pa.types.is_floating(typ.value_type):
        raise GnnError(f"{path}: column embedding must be a list of floats, not {typ}")
    if table.num_rows == 0:
        raise GnnError(f"{path}: no embedding rows")
    lengths = set(pa.compute.list_value_length(table.column("embedding")).to_pylist())
    if len(lengths) != 1:
        raise GnnError(f"{path}: embeddings have different lengths {sorted(lengths)[:5]}")
    return table, lengths.pop()


def export_snapshot(store: GraphStore, out_dir: Path, embeddings: Path | None = None,
                    chunk: int = PATIENT_CHUNK) -> Manifest:
    """Write a snapshot of the whole graph to ``out_dir`` (replacing an earlier snapshot there).

    Rows are streamed to parquet as each read transaction returns, so memory holds one chunk of
    patients. Cost: about one read transaction per table per ``chunk`` patients.

    Args:
        store: the graph to read.
        out_dir: the snapshot folder (created).
        embeddings: optional parquet of per (image, region) vectors (columns image_id, anatomy,
            embedding: list of floats of one length), e.g. an image encoder over Chest ImaGenome boxes;
            rows of images not in the graph are dropped.
        chunk: patients per read transaction.

    Returns:
        The :class:`Manifest` written to ``out_dir/manifest.json``.

    Raises:
        GnnError: empty graph, unreadable or malformed embeddings.
        GraphUnavailable: Neo4j cannot be reached.
    """
    t0 = time.perf_counter()
    out = Path(out_dir)
    emb_path = Path(embeddings) if embeddings else None
    emb_table, emb_dim = _check_embeddings(emb_path) if emb_path else (None, None)
    out.mkdir(parents=True, exist_ok=True)
    _remove_snapshot_files(out)
    tally = _write_tables(store, out, chunk)
    versions = [r["version"] for r in store.read(st.GNN_VOCABULARY_VERSIONS)]
    emb_sha = None
    if emb_table is not None and emb_path is not None:
        tally.rows["region_embeddings"] = _write_embeddings(emb_table, tally.image_ids, out)
        emb_sha = sha256_of(emb_path)
    manifest = Manifest(
        format_version=FORMAT_VERSION, content_hash=tally.hasher.hexdigest(versions), vocabulary_versions=versions,
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"), rows=tally.rows,
        schema={name: {f.name: str(f.type) for f in schema} for name, schema in SCHEMAS.items()},
        patients=len(tally.patients), embeddings_sha256=emb_sha, embedding_dim=emb_dim,
        seconds=round(time.perf_counter() - t0, 2),
    )
    (out / MANIFEST).write_text(manifest.to_json())
    return manifest


def _remove_snapshot_files(out: Path) -> None:
    """Delete an earlier snapshot's tables and manifest (either suffix), so none outlives this export."""
    for name in list(SCHEMAS) + [EMBEDDINGS.removesuffix(".parquet"), MANIFEST.removesuffix(".json")]:
        for suffix in (".parquet", ".json"):
            p = out / f"{name}{suffix}"
            if p.exists():
                p.unlink()


@dataclass
class _ExportTally:
    """What the streamed rows add up to: their content hash, rows per table, and the image ids and
    patients seen (image ids select the embeddings rows to keep)."""

    hasher: _Hasher = field(default_factory=_Hasher)
    rows: dict[str, int] = field(default_factory=lambda: {name: 0 for name in SCHEMAS})
    image_ids: set[str] = field(default_factory=set)
    patients: set[str] = field(default_factory=set)

    def add(self, table: str, batch: list[dict[str, Any]]) -> None:
        self.hasher.update(table, batch)
        self.rows[table] += len(batch)
        if table == "images":
            self.image_ids.update(r["image_id"] for r in batch)
        elif table == "studies":
            self.patients.update(r["patient_id"] for r in batch)


def _write_tables(store: GraphStore, out: Path, chunk: int) -> _ExportTally:
    """Stream every table of :data:`SCHEMAS` to ``out/<table>.parquet``, one batch per read transaction."""
    tally = _ExportTally()
    writers = {name: pq.ParquetWriter(out / f"{name}.parquet", schema) for name, schema in SCHEMAS.items()}
    try:
        for table, batch in iter_graph_rows(store, chunk=chunk):
            tally.add(table, batch)
            if batch:
                writers[table].write_table(pa.Table.from_pylist(batch, schema=SCHEMAS[table]))
    finally:
        for w in writers.values():
            w.close()
    return tally


def _write_embeddings(emb_table: pa.Table, image_ids: set[str], out: Path) -> int:
    """Write the embeddings rows of ``image_ids`` to ``out``/:data:`EMBEDDINGS`; returns how many."""
    mask = pa.compute.is_in(emb_table.column("image_id"), value_set=pa.array(sorted(image_ids), pa.string()))
    kept = emb_table.filter(mask).select(["image_id", "anatomy", "embedding"])
    pq.write_table(kept, out / EMBEDDINGS)
    return kept.num_rows


def load_tables(folder: Path) -> tuple[Manifest, dict[str, "pa.Table"]]:
    """Read a snapshot folder: its manifest and every table (Arrow tables; embeddings when present).

    Raises:
        GnnError: not a snapshot, another format version, or a table missing.
    """
    folder = Path(folder)
    manifest = Manifest.read(folder)
    tables = {}
    for name in SCHEMAS:
        path = folder / f"{name}.parquet"
        if not path.exists():
            raise GnnError(f"{folder}: snapshot table {path.name} is missing; re-export")
        tables[name] = pq.read_table(path)
    if (folder / EMBEDDINGS).exists():
        tables["region_embeddings"] = pq.read_table(folder / EMBEDDINGS)
    return manifest, tables

