"""The input side of a study-pair sample, whatever the task predicts from it: the snapshot's tables as
frames, the vocabulary, per-study observation features and region embeddings, and the heterogeneous
graph of two studies. Targets (labels) are not here: :mod:`gnn.dataset` attaches the progression task's.

The feature layout is :mod:`gnn.features`; the sample's node and edge types are described in
:mod:`gnn.dataset`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import torch
from torch_geometric.data import HeteroData

from gnn.export import SCHEMAS, SOURCES
from gnn.features import BASE_DIM, PER_SOURCE

Key = tuple[str, str]  # (anatomy, finding)


def as_list(value: Any) -> list:
    """A list of ``value``'s items; ``[]`` for None (list columns come back as None, lists or arrays)."""
    return [] if value is None else list(value)


def _frame(table: Any, columns: Sequence[str]) -> pd.DataFrame:
    if isinstance(table, pa.Table):
        return table.to_pandas()
    return pd.DataFrame(list(table), columns=list(columns))


def snapshot_frames(tables: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """One DataFrame per snapshot table of :data:`gnn.export.SCHEMAS`, from Arrow tables or row dicts
    (the embeddings table is left out: it stays Arrow)."""
    return {name: _frame(tables[name], [f.name for f in SCHEMAS[name]]) for name in SCHEMAS}


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
        f_par = {r["name"]: tuple(sorted(f_ix[p] for p in as_list(r.get("parents")) if p in f_ix)) for r in findings}
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


def _study_times(studies: pd.DataFrame) -> dict[str, pd.Timestamp]:
    when = pd.to_datetime(studies["study_datetime"].astype("string").str.slice(0, 26), errors="coerce", format="ISO8601")
    return dict(zip(studies["study_id"], when, strict=True))


@dataclass(frozen=True)
class SnapshotIndex:
    """Where things are in a snapshot: the vocabulary with its name -> index maps and one-hot rows
    (``[A, A]``, ``[V, V]`` float32), and each study's patient and time (NaT when unreadable)."""

    vocab: Vocab
    anatomy_ix: dict[str, int]
    finding_ix: dict[str, int]
    one_hot_anatomy: torch.Tensor
    one_hot_findings: torch.Tensor
    patient_of: dict[str, str]
    times: dict[str, pd.Timestamp]

    @classmethod
    def from_frames(cls, frames: dict[str, pd.DataFrame]) -> "SnapshotIndex":
        vocab = Vocab.from_rows(frames["anatomy"].to_dict("records"), frames["findings"].to_dict("records"))
        studies = frames["studies"]
        return cls(vocab, {n: i for i, n in enumerate(vocab.anatomy)}, {n: i for i, n in enumerate(vocab.findings)},
                   torch.eye(len(vocab.anatomy)), torch.eye(len(vocab.findings)),
                   dict(zip(studies["study_id"], studies["patient_id"], strict=True)), _study_times(studies))

    def interval_days(self, current: str, prior: str) -> float:
        """Days from ``prior`` to ``current``, at least 0; 0 when either time is unknown."""
        t_cur, t_pri = self.times.get(current), self.times.get(prior)
        return max(0.0, (t_cur - t_pri).total_seconds() / 86400.0) if t_cur is not None and t_pri is not None \
            and not pd.isna(t_cur) and not pd.isna(t_pri) else 0.0


@dataclass(frozen=True)
class ObservationFeatures:
    """Per-study inputs of observation and study nodes (layout: :mod:`gnn.features`).

    Attributes:
        blocks: per (study, anatomy, finding) the per-source blocks, ``[len(SOURCES) * len(PER_SOURCE)]``.
        keys_of: per study its (anatomy, finding) keys in first-seen order.
        regions: per (study, anatomy) the standardised mean region embedding over the study's images, ``[D]``.
        studies: per study the mean of its ``regions``, ``[D]``.
        embedding_dim: ``D`` (0 without embeddings).
        embedding_stats: the per-dimension (mean, sd) the embeddings were standardised with, or None.
    """

    blocks: dict[tuple[str, str, str], np.ndarray]
    keys_of: dict[str, list[Key]]
    regions: dict[Key, np.ndarray]
    studies: dict[str, np.ndarray]
    embedding_dim: int
    embedding_stats: tuple | None

    @classmethod
    def from_tables(cls, frames: dict[str, pd.DataFrame], tables: dict[str, Any], index: SnapshotIndex,
                    use_embeddings: bool, embedding_stats: tuple | None) -> "ObservationFeatures":
        """Embeddings are used when asked for and ``tables`` has them; ``embedding_stats`` None computes
        them over every embeddings row."""
        blocks, keys_of = _observation_inputs(frames["observations"], index.anatomy_ix, index.finding_ix)
        if not (use_embeddings and "region_embeddings" in tables):
            return cls(blocks, keys_of, {}, {}, 0, None)
        regions, studies, dim, stats = _region_embeddings(tables["region_embeddings"], frames["images"],
                                                          embedding_stats)
        return cls(blocks, keys_of, regions, studies, dim, stats)

    def saved_embedding_stats(self) -> tuple[list[float], list[float]] | None:
        """The (mean, sd) as float lists, as checkpoints keep them; None without embeddings."""
        if not self.embedding_dim or self.embedding_stats is None:
            return None
        return list(map(float, self.embedding_stats[0])), list(map(float, self.embedding_stats[1]))

    def pair_keys(self, current: str, prior: str) -> list[Key]:
        """The (anatomy, finding) keys with an input observation in either study, sorted."""
        return sorted(set(self.keys_of.get(current, [])) | set(self.keys_of.get(prior, [])))

    def observation(self, study: str, anatomy: str, finding: str, current: bool) -> np.ndarray:
        """``[F]`` float32: the observation's vector, "not mentioned" when the study has no input for it."""
        v = self.blocks.get((study, anatomy, finding))
        parts = [v if v is not None else np.zeros(BASE_DIM, np.float32),
                 np.array([1.0 if v is not None else 0.0, 1.0 if current else 0.0], np.float32)]
        if self.embedding_dim:
            e = self.regions.get((study, anatomy))
            parts += [e if e is not None else np.zeros(self.embedding_dim, np.float32),
                      np.array([1.0 if e is not None else 0.0], np.float32)]
        return np.concatenate(parts)

    def study_rows(self, current: str, prior: str, days: float) -> list[list[float]]:
        """The two study nodes' features: ``[is_current, log1p(days) / 6]``, with embeddings the study's
        mean embedding and a has-embedding flag."""
        rows = [[1.0, math.log1p(days) / 6.0], [0.0, 0.0]]
        if self.embedding_dim:
            for row, sid in zip(rows, (current, prior), strict=True):
                e = self.studies.get(sid)
                row.extend((e if e is not None else np.zeros(self.embedding_dim, np.float32)).tolist()
                           + [1.0 if e is not None else 0.0])
        return rows


@dataclass
class PairInputs:
    """The inputs of one (current, prior) study pair.

    Attributes:
        keys: the ``k`` (anatomy, finding) keys, sorted; observation node ``i`` is key ``i`` in the
            current study, node ``k + i`` the same key in the prior study.
        graph: the pair's ``HeteroData`` (see :func:`pair_graph`), without targets.
        x_cur, x_prior: ``[k, F]`` the two sides' observation features.
        days: interval between the two studies in days.
    """

    keys: list[Key]
    graph: HeteroData
    x_cur: np.ndarray
    x_prior: np.ndarray
    days: float


def pair_inputs(index: SnapshotIndex, features: ObservationFeatures, current: str, prior: str) -> PairInputs | None:
    """The inputs of a study pair; None when neither study has an input observation."""
    keys = features.pair_keys(current, prior)
    if not keys:
        return None
    days = index.interval_days(current, prior)
    x_cur = np.stack([features.observation(current, a, f, True) for a, f in keys])
    x_pri = np.stack([features.observation(prior, a, f, False) for a, f in keys])
    graph = pair_graph([(index.anatomy_ix[a], index.finding_ix[f]) for a, f in keys], np.concatenate([x_cur, x_pri]),
                       features.study_rows(current, prior, days), index.vocab, index.one_hot_anatomy,
                       index.one_hot_findings)
    return PairInputs(keys, graph, x_cur, x_pri, days)


def pair_graph(keys: list[tuple[int, int]], obs_x: np.ndarray, study_x: list[list[float]], vocab: Vocab,
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
                        ) -> tuple[dict[tuple[str, str, str], np.ndarray], dict[str, list[Key]]]:
    """Per (study, anatomy, finding) the per-source feature blocks (gnn.features.PER_SOURCE), and per study
    its (anatomy, finding) keys in first-seen order. Rows of unknown sources or vocabulary are skipped."""
    per_source = len(PER_SOURCE)
    obs_feat: dict[tuple[str, str, str], np.ndarray] = {}
    by_study: dict[str, list[Key]] = {}
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
                       ) -> tuple[dict[Key, np.ndarray], dict[str, np.ndarray], int, tuple | None]:
    """(per (study, anatomy) the standardised mean embedding over the study's images, per study the mean
    over its regions, the dimension, the (mean, sd) used: ``embedding_stats`` or computed over every row)."""
    img_study = dict(zip(images["image_id"], images["study_id"], strict=True))
    emb_dim = len(et.column("embedding")[0].as_py()) if et.num_rows else 0
    if embedding_stats is None and et.num_rows:
        allv = np.asarray(et.column("embedding").to_pylist(), dtype=np.float64)
        embedding_stats = (allv.mean(0), np.maximum(allv.std(0), 1e-6))
    et = et.filter(pa.compute.is_in(et.column("image_id"), value_set=pa.array(list(img_study), pa.string())))
    vecs = np.asarray(et.column("embedding").to_pylist(), dtype=np.float32).reshape(-1, emb_dim or 1)
    sums: dict[Key, list] = {}
    for img, region, vec in zip(et.column("image_id").to_pylist(), et.column("anatomy").to_pylist(), vecs, strict=True):
        s = img_study.get(img)
        if s is not None:
            acc = sums.setdefault((s, region), [np.zeros(emb_dim, np.float32), 0])
            acc[0] += vec
            acc[1] += 1
    if embedding_stats is None:  # no embedding rows and no saved statistics: nothing to standardise
        return {}, {}, emb_dim, None
    mean, std = (np.asarray(embedding_stats[0], np.float32), np.asarray(embedding_stats[1], np.float32))
    emb = {k: (v[0] / v[1] - mean) / std for k, v in sums.items()}
    # per study: the mean over all its regions (the image-level summary the study node carries)
    study_sums: dict[str, list] = {}
    for (s_id, _), vec in emb.items():
        acc = study_sums.setdefault(s_id, [np.zeros(emb_dim, np.float32), 0])
        acc[0] += vec
        acc[1] += 1
    return emb, {k: v[0] / v[1] for k, v in study_sums.items()}, emb_dim, embedding_stats
