"""What changed between any two studies of a patient (not only consecutive ones), per anatomy and finding.

For each (anatomy, finding) that is present or uncertain in at least one of the two studies: the
stated change where the reports state one between exactly these studies (RadGraph2 first, then
Chest ImaGenome), else the model's prediction with its probability (the checkpoint run live on the
patient's subgraph; without a checkpoint, a ``gnn`` edge written back by ``cxrkg predict``; failing
both, the presence rule). Plus a one-line answer in the style of Medical-Diff-VQA's difference
questions (Hu et al., KDD 2023): "the main image has an additional finding of X than the reference
image", "the main image is missing the finding of Y than the reference image", "the level of Z has
changed from A to B", or "nothing has changed".

Only the patient's own rows are read (a few small read transactions), so a warm call takes
milliseconds plus the model. The full-graph snapshot-hash check is ``cxrkg predict``'s; here the
checkpoint must only fit the graph's vocabulary and features.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gnn.baselines import PresenceRule, _present
from gnn.dataset import CLASSES, build
from gnn.errors import GnnError
from gnn.export import read_graph_tables
from gnn.features import MENTIONED, highest_severity, stated_present, stated_uncertain
from graph.store import GraphStore
from graph.store import statements as st
from graph.terms import Source, State
from graph.vocabulary import vocabulary

SEVERITY_WORDS = {1: "mild", 2: "moderate", 3: "severe"}


@dataclass
class ComparisonRow:
    """One (anatomy, finding) of a comparison.

    Attributes:
        prior_state, current_state: present / absent / uncertain / not mentioned.
        prior_severity, current_severity: mild / moderate / severe or None.
        change: one of CLASSES. source: ``stated (radgraph)``, ``stated (chest_imagenome)``, ``gnn``,
            ``gnn (stored)`` or ``presence rule``. probability: the model's, None for stated changes.
        stated: every stated change between the two studies, as ``change (source)``.
    """

    anatomy: str
    finding: str
    prior_state: str
    current_state: str
    prior_severity: str | None
    current_severity: str | None
    change: str
    source: str
    probability: float | None
    stated: list[str] = field(default_factory=list)


@dataclass
class Comparison:
    """The answer of :func:`compare`."""

    patient_id: str
    current_study_id: str
    prior_study_id: str
    consecutive: bool
    days: float
    rows: list[ComparisonRow]
    answer: str
    model_version: str | None


def _state(x: np.ndarray) -> tuple[str, str | None]:
    """(state, severity word) from one observation feature vector (layout: gnn.features)."""
    if x[MENTIONED] == 0:
        return "not mentioned", None
    present, uncertain = bool(stated_present(x)[0]), bool(stated_uncertain(x)[0])
    sev = float(highest_severity(x)[0])
    word = SEVERITY_WORDS.get(int(round(sev * 3))) if sev else None
    return (State.PRESENT if present else State.UNCERTAIN if uncertain else State.ABSENT), word


def answer_line(rows: list[ComparisonRow]) -> str:
    """The Medical-Diff-VQA-style one-line answer for the rows (findings deduplicated across anatomies): the
    dataset's level and added / missing sentences (:mod:`graph.questions.grammar`), then "the X has worsened"
    for a stated or predicted change without two severities; ``"nothing has changed."`` when none."""
    from graph.questions import grammar

    added = sorted({r.finding for r in rows if r.change == "new"})
    missing = sorted({r.finding for r in rows if r.change == "resolved"} - set(added))
    levels: dict[str, str] = {}
    other: dict[str, str] = {}
    for r in rows:
        if r.change in ("worsened", "improved") and r.finding not in added and r.finding not in levels | other:
            if r.prior_severity and r.current_severity and r.prior_severity != r.current_severity:
                levels[r.finding] = grammar.level_change(r.finding, r.prior_severity, r.current_severity)
            else:
                other[r.finding] = f"the {r.finding} has {r.change}. "
    text = grammar.difference_answer([levels[k] for k in sorted(levels)], added, missing)
    return (text if not other else text.replace(grammar.NOTHING_CHANGED, "") + "".join(
        other[k] for k in sorted(other))).strip()


def finding_names(finding: str | None) -> set[str] | None:
    """The finding (name or synonym) and every finding that IS_A it; None for no finding.

    Raises:
        GnnError: not in the vocabulary.
    """
    if finding is None:
        return None
    v = vocabulary()
    name = v.finding_for(finding)
    if name is None:
        raise GnnError(f"finding {finding!r} is not in the vocabulary (v{v.version}); use a Chest ImaGenome "
                       "attribute name or one of its synonyms")
    names = {name}
    changed = True
    while changed:  # the finding and everything that IS_A it
        extra = {f.name for f in v.findings.values() if set(f.parents) & names} - names
        changed = bool(extra)
        names |= extra
    return names


def compare(store: GraphStore, patient_id: str, current: str | None = None, prior: str | None = None,
            checkpoint: Path | None | tuple[Any, dict[str, Any]] = None, finding: str | None = None,
            embeddings: Path | None = None) -> Comparison:
    """Answer "what changed between these two studies?" for one patient.

    Args:
        store: the graph to read the patient from.
        patient_id: the patient.
        current: the current study's id; default the patient's last study.
        prior: the prior study's id; default the study before ``current``. Any two studies of the
            patient may be given, the prior being the earlier.
        checkpoint: a model file, or an already loaded ``(model, meta)`` pair (what a warm caller
            passes), or None for the latest registered model (if any).
        finding: restrict to this finding (name or synonym) and the findings that are a kind of it.
        embeddings: region embeddings parquet, when the model was trained with them.

    Raises:
        GnnError: unknown patient or finding, a patient with one study, a study that is not the
            patient's, a prior that is not earlier than the current study, or an incompatible checkpoint.
    """
    from gnn.prediction import with_embeddings

    names = finding_names(finding)
    graph = read_graph_tables(store, [str(patient_id)])
    order, current, prior = study_pair(graph.tables["studies"], str(patient_id), current, prior)
    model, meta = _model(checkpoint)
    tables = with_embeddings(graph.tables, embeddings)
    if not any(r["study_id"] in (current, prior) for r in tables["observations"]):
        return Comparison(str(patient_id), current, prior, order[current] - order[prior] == 1, 0.0, [],
                          "nothing has changed.", meta["model_version"] if meta else None)
    data = build(tables, graph.content_hash, study_pairs=[(current, prior)],
                 use_embeddings=bool(meta and meta["embedding_dim"]),
                 embedding_stats=meta.get("embedding_stats") if meta else None)
    proba = None
    if model is not None and meta is not None:
        from gnn.training import check_compatible, predict_proba

        check_compatible(meta, data, check_hash=False)
        ids, p = predict_proba(model, data)
        proba = p[np.argsort(ids)]
    stored = {(r["anatomy"], r["finding"]): r for r in store.read(st.GNN_PAIR_CHANGES, study_id=current,
                                                                  prior_study_id=prior) if r["source"] == "gnn"}
    stated: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for r in tables["labels"]:
        if r["study_id"] == current and r["prior_study_id"] == prior:
            stated.setdefault((r["anatomy"], r["finding"]), []).append((r["source"], r["change"]))
    rows = _rows(data, names, stated, proba, stored)
    consecutive = order[current] - order[prior] == 1
    return Comparison(str(patient_id), current, prior, consecutive, float(data.days[0]) if len(data.days) else 0.0,
                      rows, answer_line(rows), meta["model_version"] if meta else None)


def study_pair(studies: list[dict[str, Any]], patient_id: str, current: str | None,
                prior: str | None) -> tuple[dict[str, int], str, str]:
    """(study -> position in time, current, prior): the defaults filled and both checked."""
    studies = sorted(studies, key=lambda r: (r["study_order"] or 0, r["study_id"]))
    order = {r["study_id"]: i for i, r in enumerate(studies)}
    if len(studies) < 2:
        raise GnnError(f"patient {patient_id} has only one study ({studies[0]['study_id']}): nothing to compare")
    current = str(current) if current else studies[-1]["study_id"]
    if current not in order:
        raise GnnError(f"study {current} is not a study of patient {patient_id}; "
                       f"the patient's studies: {', '.join(order)}")
    if prior is None:
        if order[current] == 0:
            raise GnnError(f"study {current} is the first study of patient {patient_id}: give --prior")
        prior = studies[order[current] - 1]["study_id"]
    prior = str(prior)
    if prior not in order:
        raise GnnError(f"study {prior} is not a study of patient {patient_id}; "
                       f"the patient's studies: {', '.join(order)}")
    if order[prior] >= order[current]:
        raise GnnError(f"prior study {prior} is not earlier than current study {current}")
    return order, current, prior


def _model(checkpoint: Path | None | tuple[Any, dict[str, Any]]) -> tuple[Any, dict[str, Any] | None]:
    """(model, meta) from a loaded pair, a file, or the latest registered model; (None, None) when none."""
    from gnn.prediction import latest_checkpoint

    if isinstance(checkpoint, tuple):
        return checkpoint
    path = Path(checkpoint) if checkpoint else latest_checkpoint()
    if path is None:
        return None, None
    from gnn.training import load_checkpoint

    return load_checkpoint(path)


def _rows(data, names: set[str] | None, stated: dict[tuple[str, str], list[tuple[str, str]]],
          proba: np.ndarray | None, stored: dict[tuple[str, str], dict[str, Any]]) -> list[ComparisonRow]:
    """One row per (anatomy, finding) present in either study or with a stated change; the change is the
    stated one (RadGraph first), else the model's, else a stored prediction, else the presence rule's."""
    rule = PresenceRule().predict_proba(data, np.arange(len(data.pairs)))
    present = _present(data.x_cur) | _present(data.x_prior)
    rows = []
    for i, pair in enumerate(data.pairs.itertuples(index=False)):
        key = (pair.anatomy, pair.finding)
        if names is not None and pair.finding not in names:
            continue
        said = stated.get(key, [])
        if not present[i] and not said:
            continue
        cur_state, cur_sev = _state(data.x_cur[i])
        pri_state, pri_sev = _state(data.x_prior[i])
        usable = [(s, c) for s, c in sorted(said, key=lambda sc: sc[0] != Source.RADGRAPH) if c in CLASSES]
        if usable:
            change, source, prob = usable[0][1], f"stated ({usable[0][0]})", None
        elif proba is not None:
            change, source, prob = CLASSES[int(proba[i].argmax())], "gnn", float(proba[i].max())
        elif key in stored:
            change, source, prob = stored[key]["change"], "gnn (stored)", stored[key]["probability"]
        else:
            change, source, prob = CLASSES[int(rule[i].argmax())], "presence rule", None
        rows.append(ComparisonRow(pair.anatomy, pair.finding, pri_state, cur_state, pri_sev, cur_sev, change, source,
                                  prob, [f"{c} ({s})" for s, c in sorted(said)]))
    return rows
