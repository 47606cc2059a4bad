"""From snapshot tables to PyG ``HeteroData`` samples: one sample per study pair of one patient.

The task: for every (current observation, prior observation or its absence) pair of the same
anatomy and finding, predict the change class among :data:`CLASSES`. A sample holds both studies'
observations and the shared vocabulary nodes they reach, in PyG's heterogeneous vocabulary:

* node types ``observation``, ``anatomy``, ``finding``, ``study``;
* edge types as in the graph model, ``(study, has_observation, observation)``,
  ``(observation, located_at, anatomy)``, ``(observation, of_finding, finding)``,
  ``(anatomy, part_of, anatomy)``, ``(finding, is_a, finding)``, ``(study, prior, study)``, each with a
  ``rev_`` reverse edge type;
* the pairs to classify as ``data['observation', 'progression', 'observation'].edge_label_index``
  (``[2, P]``: current node, prior node), ``edge_label`` (``[P]`` class index, -1 when no change is
  stated) and ``pair_id`` (``[P]`` row of :attr:`ProgressionData.pairs`).

The pair set of a study pair is every (anatomy, finding) with an input observation in either study;
the side without one is an observation node whose features say "not mentioned". Labels are the stated
progression edges: the RadGraph2 change when one is stated (five classes), else the Chest ImaGenome
comparison (improved / worsened / no change); ``repositioned`` (devices) is not a class. A stated change
for an (anatomy, finding) that neither study mentions is not a pair (its existence would reveal the label).

Observation features (``[F]``, float32; layout and names in gnn.features), from polarity-bearing mentions only, per source
(chest_imagenome, radgraph): mentioned, fraction present / absent / uncertain, highest severity / 3,
has severity; then mentioned by any source, is-current-study; then the region embedding of the
study's frontal images (mean over images, standardised per dimension; zeros when missing) and a
has-embedding flag, when the snapshot has embeddings. Anatomy and finding nodes carry one-hot vectors over the vocabulary, study
nodes ``[is_current, log1p(interval days) / 6]`` plus, with embeddings, the mean embedding over all the
study's regions and a has-embedding flag (an image-level summary: graph context the pair alone lacks).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import torch
from torch_geometric.data import HeteroData

from gnn.errors import GnnError
from gnn.export import SOURCES, GraphTables, Manifest, load_tables
from gnn.features import BASE_DIM, PER_SOURCE, feature_names

CLASSES: tuple[str, ...] = ("improved", "worsened", "no change", "new", "resolved")
CLASS_INDEX = {c: i for i, c in enumerate(CLASSES)}
# Chest ImaGenome's comparison vocabulary (three classes): "new" is worsened, "resolved" is improved.
CLASSES_3: tuple[str, ...] = ("improved", "worsened", "no change")
TO_3 = np.array([0, 1, 2, 1, 0])  # index in CLASSES -> index in CLASSES_3

NODE_TYPES = ("observation", "anatomy", "finding", "study")
BASE_EDGE_TYPES = (
    ("study", "has_observation", "observation"),
    ("observation", "located_at", "anatomy"),
    ("observation", "of_finding", "finding"),
    ("anatomy", "part_of", "anatomy"),
    ("finding", "is_a", "finding"),
    ("study", "prior", "study"),
)
EDGE_TYPES = BASE_EDGE_TYPES + tuple((d, f"rev_{r}", s) for s, r, d in BASE_EDGE_TYPES)
LABEL_EDGE = ("observation", "progression", "observation")


def split_of(patient_id: str, seed: int, fractions: tuple[float, float] = (0.7, 0.15)) -> str:
    """``train`` / ``val`` / ``test`` for a patient, deterministic in (seed, patient id) and stable
    when patients are added: SHA-256 of ``seed:patient_id`` mapped to [0, 1) against the cumulative
    fractions (train 0.7, validation 0.15, test the rest by default)."""
    u = int(hashlib.sha256(f"{seed}:{patient_id}".encode()).hexdigest()[:12], 16) / float(1 << 48)
    return "train" if u < fractions[0] else "val" if u < fractions[0] + fractions[1] else "test"


def _as_list(value: Any) -> list:
    return [] if value is None else list(value)


@dataclass(frozen=True)
class Vocab:
    """Anatomy and finding nodes of the snapshot, with their PART_OF / IS_A parents (indices)."""

    anatomy: tuple[str, ...]
    anatomy_parents: tuple[tuple[int, ...], ...]
    findings: tuple[str, ...]
    finding_parents: tuple[tuple[int, ...], ...]

    @classmethod
    def from_rows(cls, anatomy: list[dict], findings: list[dict]) -> "Vocab":
        a_names = tuple(sorted({r["name"] for r in anatomy}))
        a_ix = {n: i for i, n in enumerate(a_names)}
        a_par: dict[str, set[int]] = {n: set() for n in a_names}
        for r in anatomy:
            if r.get("parent") in a_ix:
                a_par[r["name"]].add(a_ix[r["parent"]])
        f_names = tuple(sorted({r["name"] for r in findings}))
        f_ix = {n: i for i, n in enumerate(f_names)}
        f_par = {r["name"]: tuple(sorted(f_ix[p] for p in _as_list(r.get("parents")) if p in f_ix)) for r in findings}
        return cls(a_names, tuple(tuple(sorted(a_par[n])) for n in a_names), f_names,
                   tuple(f_par.get(n, ()) for n in f_names))

    def closure(self, start: Iterable[int], parents: tuple[tuple[int, ...], ...]) -> list[int]:
        seen: set[int] = set()
        stack = list(start)
        while stack:
            i = stack.pop()
            if i not in seen:
                seen.add(i)
                stack.extend(parents[i])
        return sorted(seen)


@dataclass
class ProgressionData:
    """Samples and pairs of a snapshot.

    Attributes:
        samples: one ``HeteroData`` per study pair (see the module docstring for its layout).
        pairs: one row per (study pair, anatomy, finding): patient_id, study_id, prior_study_id,
            anatomy, finding, label (class index or -1), label_source, sample (index into ``samples``),
            split (train / val / test by :func:`split_of` with ``split_seed``).
        x_cur, x_prior: ``[len(pairs), F]`` the pair's own observation features (for baselines).
        days: ``[len(pairs)]`` interval between the two studies in days.
        feature_names: the ``F`` observation feature names.
        content_hash: the snapshot's content hash.
        embedding_dim: length of the region embeddings (0 without embeddings).
        vocab: anatomy and finding vocabulary.
    """

    samples: list[HeteroData]
    pairs: pd.DataFrame
    x_cur: np.ndarray
    x_prior: np.ndarray
    days: np.ndarray
    feature_names: list[str]
    content_hash: str
    embedding_dim: int
    vocab: Vocab
    split_seed: int = 0
    dropped_labels: int = 0
    embedding_stats: tuple[list[float], list[float]] | None = None

    @property
    def num_features(self) -> int:
        return len(self.feature_names)

    def labelled(self, split: str | None = None) -> np.ndarray:
        """Row indices of pairs with a stated label (in one split when given)."""
        mask = self.pairs["label"].to_numpy() >= 0
        if split is not None:
            mask &= self.pairs["split"].to_numpy() == split
        return np.flatnonzero(mask)

    def sample_indices(self, split: str, labelled_only: bool = True) -> list[int]:
        """Samples of patients in ``split`` (only those with at least one labelled pair by default)."""
        p = self.pairs
        mask = p["split"].to_numpy() == split
        if labelled_only:
            mask &= p["label"].to_numpy() >= 0
        return sorted(set(p["sample"].to_numpy()[mask].tolist()))


def _frame(table: Any, columns: Sequence[str]) -> pd.DataFrame:
    if isinstance(table, pa.Table):
        return table.to_pandas()
    return pd.DataFrame(list(table), columns=list(columns))


def _label_for(stated: list[tuple[str, str]]) -> tuple[int, str | None]:
    """RadGraph2's five-class change first, else Chest ImaGenome's; -1 when neither is a class."""
    for wanted in ("radgraph", "chest_imagenome"):
        for source, change in stated:
            if source == wanted and change in CLASS_INDEX:
                return CLASS_INDEX[change], source
    return -1, None


def _study_times(studies: pd.DataFrame) -> dict[str, pd.Timestamp]:
    when = pd.to_datetime(studies["study_datetime"].astype("string").str.slice(0, 26), errors="coerce", format="ISO8601")
    return dict(zip(studies["study_id"], when))


def build(tables: dict[str, Any] | GraphTables, content_hash: str | None = None, split_seed: int = 0,
          study_pairs: Sequence[tuple[str, str]] | None = None, use_embeddings: bool = True,
          embedding_stats: tuple[Sequence[float], Sequence[float]] | None = None) -> ProgressionData:
    """Build samples and pairs from snapshot tables (Arrow tables from :func:`gnn.export.load_tables`
    or in-memory rows from :func:`gnn.export.read_graph_tables`).

    Args:
        content_hash: the snapshot hash (taken from ``GraphTables`` when given those).
        split_seed: seed of the patient split.
        study_pairs: (current study, prior study) pairs to build; default every study with a PRIOR
            study (consecutive pairs).
        use_embeddings: add region-embedding features when the tables have them.
        embedding_stats: per-dimension (mean, sd) to standardise embeddings with; default computed over
            every row of the embeddings table (no labels involved). Checkpoints store the training
            snapshot's, so prediction on other data is scaled the same way.

    Raises:
        GnnError: no study pairs (every patient has a single study) or a study pair names an unknown
            study.
    """
    if isinstance(tables, GraphTables):
        content_hash = tables.content_hash
        tables = tables.tables
    from gnn.export import SCHEMAS

    frames = {name: _frame(tables[name], [f.name for f in SCHEMAS[name]]) for name in SCHEMAS}
    vocab = Vocab.from_rows(frames["anatomy"].to_dict("records"), frames["findings"].to_dict("records"))
    a_ix = {n: i for i, n in enumerate(vocab.anatomy)}
    f_ix = {n: i for i, n in enumerate(vocab.findings)}
    studies = frames["studies"]
    patient_of = dict(zip(studies["study_id"], studies["patient_id"]))
    times = _study_times(studies)
    if study_pairs is None:
        sp = studies[studies["prior_study_id"].notna()]
        study_pairs = list(zip(sp["study_id"], sp["prior_study_id"]))
    if not study_pairs:
        raise GnnError("no study pairs: every patient in the graph has a single study, so there is no change to "
                       "learn or predict")
    for cur, pri in study_pairs:
        for s in (cur, pri):
            if s not in patient_of:
                raise GnnError(f"study {s} is not in the graph")

    obs_feat, by_study = _observation_inputs(frames["observations"], a_ix, f_ix)

    emb: dict[tuple[str, str], np.ndarray] = {}
    study_emb: dict[str, np.ndarray] = {}
    emb_dim = 0
    if use_embeddings and "region_embeddings" in tables:
        emb, study_emb, emb_dim, embedding_stats = _region_embeddings(tables["region_embeddings"], frames["images"],
                                                                      embedding_stats)

    names = feature_names(emb_dim)
    base_dim = BASE_DIM
    zeros_base = np.zeros(base_dim, np.float32)
    zeros_emb = np.zeros(emb_dim, np.float32)

    def features(study: str, anatomy: str, finding: str, current: bool) -> np.ndarray:
        v = obs_feat.get((study, anatomy, finding))
        parts = [v if v is not None else zeros_base,
                 np.array([1.0 if v is not None else 0.0, 1.0 if current else 0.0], np.float32)]
        if emb_dim:
            e = emb.get((study, anatomy))
            parts += [e if e is not None else zeros_emb, np.array([1.0 if e is not None else 0.0], np.float32)]
        return np.concatenate(parts)

    labels_df = frames["labels"]
    stated: dict[tuple[str, str, str, str], list[tuple[str, str]]] = {}
    for r in labels_df.itertuples(index=False):
        stated.setdefault((r.study_id, r.prior_study_id, r.anatomy, r.finding), []).append((r.source, r.change))

    eye_a = torch.eye(len(vocab.anatomy))
    eye_f = torch.eye(len(vocab.findings))
    samples: list[HeteroData] = []
    rows: list[tuple] = []
    xc: list[np.ndarray] = []
    xp: list[np.ndarray] = []
    days_l: list[float] = []
    used_labels: set[tuple[str, str, str, str]] = set()
    for cur, pri in study_pairs:
        keys = sorted(set(by_study.get(cur, [])) | set(by_study.get(pri, [])))
        if not keys:
            continue
        t_cur, t_pri = times.get(cur), times.get(pri)
        days = max(0.0, (t_cur - t_pri).total_seconds() / 86400.0) if t_cur is not None and t_pri is not None \
            and not pd.isna(t_cur) and not pd.isna(t_pri) else 0.0
        k = len(keys)
        x_cur = np.stack([features(cur, a, f, True) for a, f in keys])
        x_pri = np.stack([features(pri, a, f, False) for a, f in keys])
        study_x = [[1.0, math.log1p(days) / 6.0], [0.0, 0.0]]
        if emb_dim:
            for row, sid in zip(study_x, (cur, pri)):
                e = study_emb.get(sid)
                row.extend((e if e is not None else zeros_emb).tolist() + [1.0 if e is not None else 0.0])
        data = _pair_graph([(a_ix[a], f_ix[f]) for a, f in keys], np.concatenate([x_cur, x_pri]), study_x, vocab,
                           eye_a, eye_f)
        y = []
        for a, f in keys:
            key = (cur, pri, a, f)
            lab, src = _label_for(stated.get(key, []))
            if key in stated:
                used_labels.add(key)
            y.append(lab)
            rows.append((patient_of[cur], cur, pri, a, f, lab, src, len(samples)))
        first = len(rows) - k
        store = data[LABEL_EDGE]
        store.edge_label_index = torch.stack([torch.arange(k), torch.arange(k, 2 * k)])
        store.edge_label = torch.tensor(y, dtype=torch.long)
        store.pair_id = torch.arange(first, first + k)
        samples.append(data)
        xc.append(x_cur)
        xp.append(x_pri)
        days_l.extend([days] * k)
    if not rows:
        raise GnnError("the study pairs have no observations to compare")
    pairs = pd.DataFrame(rows, columns=["patient_id", "study_id", "prior_study_id", "anatomy", "finding", "label",
                                        "label_source", "sample"])
    pairs["split"] = [split_of(p, split_seed) for p in pairs["patient_id"]]
    wanted = {(c, p) for c, p in study_pairs}
    dropped = sum(1 for k, v in stated.items() if (k[0], k[1]) in wanted and k not in used_labels
                  and _label_for(v)[0] >= 0)
    return ProgressionData(samples, pairs, np.concatenate(xc), np.concatenate(xp), np.asarray(days_l, np.float32),
                           names, content_hash or "", emb_dim, vocab, split_seed, dropped,
                           (list(map(float, embedding_stats[0])), list(map(float, embedding_stats[1])))
                           if emb_dim and embedding_stats is not None else None)


def _pair_graph(keys: list[tuple[int, int]], obs_x: np.ndarray, study_x: list[list[float]], vocab: "Vocab",
                eye_a: torch.Tensor, eye_f: torch.Tensor) -> HeteroData:
    """The graph of one study pair: ``2k`` observation nodes (``keys``' (anatomy, finding) indexes in the
    current study, then the prior), the anatomy and finding nodes they use with their PART_OF / IS_A
    ancestors (one-hot ``x``), two study nodes (``study_x``: current, prior) and every edge type both ways."""
    k = len(keys)
    a_loc = vocab.closure({a for a, _ in keys}, vocab.anatomy_parents)
    f_loc = vocab.closure({f for _, f in keys}, vocab.finding_parents)
    a_map = {g: i for i, g in enumerate(a_loc)}
    f_map = {g: i for i, g in enumerate(f_loc)}
    obs_ids = torch.arange(2 * k)
    data = HeteroData()
    data["observation"].x = torch.from_numpy(obs_x)
    data["anatomy"].x = eye_a[a_loc]
    data["finding"].x = eye_f[f_loc]
    data["study"].x = torch.tensor(study_x, dtype=torch.float32)
    edges = {
        ("study", "has_observation", "observation"): torch.stack([torch.tensor([0] * k + [1] * k), obs_ids]),
        ("observation", "located_at", "anatomy"): torch.stack([obs_ids, torch.tensor([a_map[a] for a, _ in keys] * 2)]),
        ("observation", "of_finding", "finding"): torch.stack([obs_ids, torch.tensor([f_map[f] for _, f in keys] * 2)]),
        ("anatomy", "part_of", "anatomy"): torch.tensor(
            [[a_map[c], a_map[p]] for c in a_loc for p in vocab.anatomy_parents[c] if p in a_map],
            dtype=torch.long).reshape(-1, 2).t(),
        ("finding", "is_a", "finding"): torch.tensor(
            [[f_map[c], f_map[p]] for c in f_loc for p in vocab.finding_parents[c] if p in f_map],
            dtype=torch.long).reshape(-1, 2).t(),
        ("study", "prior", "study"): torch.tensor([[0], [1]]),
    }
    for (s, r, d), ei in edges.items():
        data[s, r, d].edge_index = ei.contiguous()
        data[d, f"rev_{r}", s].edge_index = ei.flip(0).contiguous()
    return data


def _observation_inputs(obs: pd.DataFrame, a_ix: dict[str, int], f_ix: dict[str, int]
                        ) -> tuple[dict[tuple[str, str, str], np.ndarray], dict[str, list[tuple[str, str]]]]:
    """Per (study, anatomy, finding) the per-source feature blocks (gnn.features.PER_SOURCE), and per study
    its (anatomy, finding) keys in first-seen order. Rows of unknown sources or vocabulary are skipped."""
    per_source = len(PER_SOURCE)
    obs_feat: dict[tuple[str, str, str], np.ndarray] = {}
    by_study: dict[str, list[tuple[str, str]]] = {}
    src_pos = {s: i for i, s in enumerate(SOURCES)}
    for r in obs.itertuples(index=False):
        if r.source not in src_pos or r.anatomy not in a_ix or r.finding not in f_ix:
            continue
        key = (r.study_id, r.anatomy, r.finding)
        v = obs_feat.get(key)
        if v is None:
            v = obs_feat[key] = np.zeros(per_source * len(SOURCES), np.float32)
            by_study.setdefault(r.study_id, []).append((r.anatomy, r.finding))
        n = float(r.n_present + r.n_absent + r.n_uncertain)
        if n <= 0:
            continue
        o = src_pos[r.source] * per_source
        sev = r.max_severity
        has_sev = sev is not None and not (isinstance(sev, float) and math.isnan(sev))
        v[o:o + per_source] = (1.0, r.n_present / n, r.n_absent / n, r.n_uncertain / n,
                               float(sev) / 3.0 if has_sev else 0.0, 1.0 if has_sev else 0.0)
    return obs_feat, by_study


def _region_embeddings(et: pa.Table, images: pd.DataFrame, embedding_stats: tuple | None
                       ) -> tuple[dict[tuple[str, str], np.ndarray], dict[str, np.ndarray], int, tuple | None]:
    """(per (study, anatomy) the standardised mean embedding over the study's images, per study the mean
    over its regions, the dimension, the (mean, sd) used: ``embedding_stats`` or computed over every row)."""
    img_study = dict(zip(images["image_id"], images["study_id"]))
    emb_dim = len(et.column("embedding")[0].as_py()) if et.num_rows else 0
    if embedding_stats is None and et.num_rows:
        allv = np.asarray(et.column("embedding").to_pylist(), dtype=np.float64)
        embedding_stats = (allv.mean(0), np.maximum(allv.std(0), 1e-6))
    et = et.filter(pa.compute.is_in(et.column("image_id"), value_set=pa.array(list(img_study), pa.string())))
    vecs = np.asarray(et.column("embedding").to_pylist(), dtype=np.float32).reshape(-1, emb_dim or 1)
    sums: dict[tuple[str, str], list] = {}
    for img, region, vec in zip(et.column("image_id").to_pylist(), et.column("anatomy").to_pylist(), vecs):
        s = img_study.get(img)
        if s is not None:
            acc = sums.setdefault((s, region), [np.zeros(emb_dim, np.float32), 0])
            acc[0] += vec
            acc[1] += 1
    mean, std = (np.asarray(embedding_stats[0], np.float32), np.asarray(embedding_stats[1], np.float32))
    emb = {k: (v[0] / v[1] - mean) / std for k, v in sums.items()}
    # per study: the mean over all its regions (the image-level summary the study node carries)
    study_sums: dict[str, list] = {}
    for (s_id, _), vec in emb.items():
        acc = study_sums.setdefault(s_id, [np.zeros(emb_dim, np.float32), 0])
        acc[0] += vec
        acc[1] += 1
    return emb, {k: v[0] / v[1] for k, v in study_sums.items()}, emb_dim, embedding_stats


def load_dataset(folder: Path, split_seed: int = 0, use_embeddings: bool = True) -> tuple[Manifest, ProgressionData]:
    """Read a snapshot folder and build its samples (see :func:`build`).

    Raises:
        GnnError: not a snapshot, or no study pairs.
    """
    manifest, tables = load_tables(folder)
    return manifest, build(tables, manifest.content_hash, split_seed, use_embeddings=use_embeddings)


def to_networkx(tables: dict[str, Any] | GraphTables, patient_id: str | None = None):
    """A networkx ``MultiDiGraph`` view for notebooks: studies, observations, anatomy and findings with
    HAS_OBSERVATION, PRIOR, LOCATED_AT, OF_FINDING, PART_OF and IS_A edges, and the stated changes as
    PROGRESSION edges (``change``, ``source``); optionally one patient only. Node keys are
    ``"Study:<id>"``, ``"Observation:<study>|<anatomy>|<finding>"``, ``"Anatomy:<name>"``, ``"Finding:<name>"``.
    """
    import networkx as nx

    if isinstance(tables, GraphTables):
        tables = tables.tables
    from gnn.export import SCHEMAS

    frames = {name: _frame(tables[name], [f.name for f in SCHEMAS[name]]) for name in SCHEMAS}
    g = nx.MultiDiGraph()
    studies = frames["studies"]
    if patient_id is not None:
        studies = studies[studies["patient_id"] == str(patient_id)]
    keep = set(studies["study_id"])
    for r in studies.itertuples(index=False):
        g.add_node(f"Study:{r.study_id}", label="Study", patient_id=r.patient_id, study_order=r.study_order,
                   study_datetime=r.study_datetime)
        if isinstance(r.prior_study_id, str):
            g.add_edge(f"Study:{r.study_id}", f"Study:{r.prior_study_id}", key="PRIOR", type="PRIOR", days=r.prior_days)
    for r in frames["anatomy"].itertuples(index=False):
        g.add_node(f"Anatomy:{r.name}", label="Anatomy", side=r.side)
    for r in frames["anatomy"].itertuples(index=False):
        if isinstance(r.parent, str):
            g.add_edge(f"Anatomy:{r.name}", f"Anatomy:{r.parent}", key="PART_OF", type="PART_OF")
    for r in frames["findings"].itertuples(index=False):
        g.add_node(f"Finding:{r.name}", label="Finding", category=r.category)
        for p in _as_list(r.parents):
            g.add_edge(f"Finding:{r.name}", f"Finding:{p}", key="IS_A", type="IS_A")
    obs = frames["observations"]
    for r in obs[obs["study_id"].isin(keep)].itertuples(index=False):
        node = f"Observation:{r.study_id}|{r.anatomy}|{r.finding}"
        if node not in g:
            g.add_node(node, label="Observation", study_id=r.study_id, anatomy=r.anatomy, finding=r.finding)
            g.add_edge(f"Study:{r.study_id}", node, key="HAS_OBSERVATION", type="HAS_OBSERVATION")
            g.add_edge(node, f"Anatomy:{r.anatomy}", key="LOCATED_AT", type="LOCATED_AT")
            g.add_edge(node, f"Finding:{r.finding}", key="OF_FINDING", type="OF_FINDING")
        g.nodes[node][f"{r.source}_present"] = int(r.n_present)
        g.nodes[node][f"{r.source}_absent"] = int(r.n_absent)
        g.nodes[node][f"{r.source}_severity"] = None if pd.isna(r.max_severity) else int(r.max_severity)
    lab = frames["labels"]
    for r in lab[lab["study_id"].isin(keep)].itertuples(index=False):
        a = f"Observation:{r.study_id}|{r.anatomy}|{r.finding}"
        b = f"Observation:{r.prior_study_id}|{r.anatomy}|{r.finding}"
        if a in g and b in g:
            g.add_edge(a, b, key=f"PROGRESSION:{r.source}", type="PROGRESSION", change=r.change, source=r.source)
    return g
