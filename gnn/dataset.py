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
:mod:`gnn.pair_inputs` builds these inputs and the pair graph; this module adds the targets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd
import torch
from torch_geometric.data import HeteroData

from gnn.errors import GnnError
from gnn.export import GraphTables, Manifest, load_tables
from gnn.features import feature_names
from gnn.pair_inputs import (
    Key,
    ObservationFeatures,
    PairInputs,
    SnapshotIndex,
    Vocab,
    as_list,
    pair_inputs,
    snapshot_frames,
)
from gnn.splits import split_of  # noqa: F401  (part of this module's API)
from graph.terms import PROGRESSION_CLASSES, Source

# plain strings: a checkpoint holds them, and torch.load(weights_only=True) reads no enum class back
CLASSES: tuple[str, ...] = tuple(c.value for c in PROGRESSION_CLASSES)
CLASS_INDEX = {c: i for i, c in enumerate(CLASSES)}
# Chest ImaGenome's comparison vocabulary (three classes): "new" is worsened, "resolved" is improved.
CLASSES_3: tuple[str, ...] = CLASSES[:3]
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


def _label_for(stated: list[tuple[str, str]]) -> tuple[int, str | None]:
    """RadGraph2's five-class change first, else Chest ImaGenome's; -1 when neither is a class."""
    for wanted in (Source.RADGRAPH, Source.CHEST_IMAGENOME):
        for source, change in stated:
            if source == wanted and change in CLASS_INDEX:
                return CLASS_INDEX[change], source
    return -1, None


StatedKey = tuple[str, str, str, str]  # (current study, prior study, anatomy, finding)


@dataclass
class _StatedChanges:
    """The progression task's targets: the changes the sources state per :data:`StatedKey`, and the keys
    some pair asked for (a stated change no pair asks for is a dropped label)."""

    stated: dict[StatedKey, list[tuple[str, str]]]
    used: set[StatedKey] = field(default_factory=set)

    @classmethod
    def from_frame(cls, labels: pd.DataFrame) -> "_StatedChanges":
        stated: dict[StatedKey, list[tuple[str, str]]] = {}
        for r in labels.itertuples(index=False):
            stated.setdefault((r.study_id, r.prior_study_id, r.anatomy, r.finding), []).append((r.source, r.change))
        return cls(stated)

    def labels(self, current: str, prior: str, keys: Sequence[Key]) -> list[tuple[int, str | None]]:
        """Per (anatomy, finding) key the class index (-1 when no class is stated) and its source."""
        out = []
        for a, f in keys:
            key = (current, prior, a, f)
            out.append(_label_for(self.stated.get(key, [])))
            if key in self.stated:
                self.used.add(key)
        return out

    def dropped(self, study_pairs: Sequence[tuple[str, str]]) -> int:
        """Stated class labels of ``study_pairs`` that no pair carries (neither study mentions the key)."""
        wanted = {(c, p) for c, p in study_pairs}
        return sum(1 for k, v in self.stated.items() if (k[0], k[1]) in wanted and k not in self.used
                   and _label_for(v)[0] >= 0)


@dataclass
class _Samples:
    """The samples built so far, in order, with one row per pair and the pairs' own inputs (for
    :class:`ProgressionData`)."""

    patient_of: dict[str, str]
    samples: list[HeteroData] = field(default_factory=list)
    rows: list[tuple] = field(default_factory=list)
    x_cur: list[np.ndarray] = field(default_factory=list)
    x_prior: list[np.ndarray] = field(default_factory=list)
    days: list[float] = field(default_factory=list)

    def add(self, current: str, prior: str, inputs: PairInputs, labels: list[tuple[int, str | None]]) -> None:
        """Append a study pair's sample with its targets on :data:`LABEL_EDGE` (``labels``: per key of
        ``inputs`` the class index and its source)."""
        k = len(inputs.keys)
        first = len(self.rows)
        for (a, f), (lab, src) in zip(inputs.keys, labels, strict=True):
            self.rows.append((self.patient_of[current], current, prior, a, f, lab, src, len(self.samples)))
        store = inputs.graph[LABEL_EDGE]
        store.edge_label_index = torch.stack([torch.arange(k), torch.arange(k, 2 * k)])
        store.edge_label = torch.tensor([lab for lab, _ in labels], dtype=torch.long)
        store.pair_id = torch.arange(first, first + k)
        self.samples.append(inputs.graph)
        self.x_cur.append(inputs.x_cur)
        self.x_prior.append(inputs.x_prior)
        self.days.extend([inputs.days] * k)

    def pairs(self, split_seed: int) -> pd.DataFrame:
        """The pair table of :attr:`ProgressionData.pairs`.

        Raises:
            GnnError: no sample was added.
        """
        if not self.rows:
            raise GnnError("the study pairs have no observations to compare")
        pairs = pd.DataFrame(self.rows, columns=["patient_id", "study_id", "prior_study_id", "anatomy", "finding",
                                                 "label", "label_source", "sample"])
        pairs["split"] = [split_of(p, split_seed) for p in pairs["patient_id"]]
        return pairs


def _checked_study_pairs(studies: pd.DataFrame, index: SnapshotIndex,
                         study_pairs: Sequence[tuple[str, str]] | None) -> Sequence[tuple[str, str]]:
    """``study_pairs``, by default every study with its PRIOR study.

    Raises:
        GnnError: no study pairs, or a pair names a study that is not in the snapshot.
    """
    if study_pairs is None:
        sp = studies[studies["prior_study_id"].notna()]
        study_pairs = list(zip(sp["study_id"], sp["prior_study_id"], strict=True))
    if not study_pairs:
        raise GnnError("no study pairs: every patient in the graph has a single study, so there is no change to "
                       "learn or predict")
    for cur, pri in study_pairs:
        for s in (cur, pri):
            if s not in index.patient_of:
                raise GnnError(f"study {s} is not in the graph")
    return study_pairs


def build(tables: dict[str, Any] | GraphTables, content_hash: str | None = None, split_seed: int = 0,
          study_pairs: Sequence[tuple[str, str]] | None = None, use_embeddings: bool = True,
          embedding_stats: tuple[Sequence[float], Sequence[float]] | None = None) -> ProgressionData:
    """Build samples and pairs from snapshot tables (Arrow tables from :func:`gnn.export.load_tables`
    or in-memory rows from :func:`gnn.export.read_graph_tables`).

    The steps: index the snapshot, choose the study pairs, read the per-study inputs, then per study
    pair its inputs (:mod:`gnn.pair_inputs`) and the progression targets (:class:`_StatedChanges`).

    Args:
        tables: the snapshot tables, by name (Arrow tables or rows), or a :class:`GraphTables`.
        content_hash: the snapshot hash (taken from ``GraphTables`` when given those).
        split_seed: seed of the patient split.
        study_pairs: (current study, prior study) pairs to build; default every study with a PRIOR
            study (consecutive pairs).
        use_embeddings: add region-embedding features when the tables have them.
        embedding_stats: per-dimension (mean, sd) to standardise embeddings with; default computed over
            every row of the embeddings table (no labels involved). Checkpoints store the training
            snapshot's, so prediction on other data is scaled the same way.

    Raises:
        GnnError: no study pairs (every patient has a single study), a study pair names an unknown
            study, or no study pair has an observation.
    """
    if isinstance(tables, GraphTables):
        content_hash = tables.content_hash
        tables = tables.tables
    frames = snapshot_frames(tables)
    index = SnapshotIndex.from_frames(frames)
    study_pairs = _checked_study_pairs(frames["studies"], index, study_pairs)
    features = ObservationFeatures.from_tables(frames, tables, index, use_embeddings, embedding_stats)
    targets = _StatedChanges.from_frame(frames["labels"])
    built = _Samples(index.patient_of)
    for cur, pri in study_pairs:
        inputs = pair_inputs(index, features, cur, pri)
        if inputs is not None:
            built.add(cur, pri, inputs, targets.labels(cur, pri, inputs.keys))
    pairs = built.pairs(split_seed)
    return ProgressionData(built.samples, pairs, np.concatenate(built.x_cur), np.concatenate(built.x_prior),
                           np.asarray(built.days, np.float32), feature_names(features.embedding_dim),
                           content_hash or "", features.embedding_dim, index.vocab, split_seed,
                           targets.dropped(study_pairs), features.saved_embedding_stats())


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
    frames = snapshot_frames(tables)
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
        for p in as_list(r.parents):
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
