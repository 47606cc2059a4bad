"""How well one Lunguage file's episodes agree with another's, offline (``cxrkg eval episodes GOLD PRED``).

Both files are Lunguage CSVs (:mod:`graph.formats.lunguage`) over the same mentions, matched on
:data:`~graph.formats.lunguage.MENTION_KEY`; group ids are compared within a patient only, and their names
need not agree between the files. An episode is a (patient, ``gt_entity_group``, ``gt_temporal_group``) with
both groups set (Lunguage's TEMPORALGROUP: one entity group in two temporal groups is two episodes).

Three measures, each a precision, recall and F1 of PRED against GOLD (NaN where a denominator is 0):

- **episode pairs**: every pair of common mentions of one gold entity group is linked (same episode) or not;
  gold links the pairs in one gold episode, pred those in one pred episode. Precision = pairs linked by both /
  pairs pred links, recall = pairs linked by both / pairs gold links. A split episode lowers recall, a merged
  one precision. This is the pairwise clustering measure (as in coreference evaluation) applied within
  entity groups;
- **entity-group pairs**: the same over every pair of common mentions of one patient, linked when they share
  an entity group;
- **exact boundaries**: a gold episode is matched when a pred episode of the same patient shares one of its
  mentions and has the same first and last study (by ``sequence``, over all of its mentions); precision =
  matched pred episodes / pred episodes, recall = matched gold episodes / gold episodes.

An episode here is an :class:`AnnotatedEpisode`, the temporal group as a file writes it, not the graph's
:class:`graph.longitudinal.episodes.PresenceEpisode`; their extents differ (see the class).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from graph.formats.lunguage import LunguageRow

Key = tuple[str, str, str, int, int]


@dataclass(frozen=True)
class Agreement:
    """Items (linked pairs or episodes) in gold and in pred, and how many of each the other file matches.

    For pairs ``matched_gold`` = ``matched_pred`` = the pairs both files link. Precision = matched_pred / pred,
    recall = matched_gold / gold, F1 their harmonic mean; NaN where a denominator is 0.
    """

    gold: int
    pred: int
    matched_gold: int
    matched_pred: int

    @property
    def precision(self) -> float:
        return self.matched_pred / self.pred if self.pred else math.nan

    @property
    def recall(self) -> float:
        return self.matched_gold / self.gold if self.gold else math.nan

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        if math.isnan(p) or math.isnan(r):
            return math.nan
        return 2 * p * r / (p + r) if p + r > 0 else 0.0


@dataclass(frozen=True)
class AnnotatedEpisode:
    """One episode as a Lunguage file annotates it: the mentions of one (patient, ``gt_entity_group``,
    ``gt_temporal_group``), whatever their ``dx_status``, and the first and last study (by ``sequence``) of
    any of them.

    Its extent is that of the annotation: two files are compared on what their annotators (or the export)
    wrote, so every row in the group counts. The graph's episode of the same group
    (:class:`graph.longitudinal.episodes.PresenceEpisode`, basis ``stated``) is a course of the finding's
    presence and spans fewer rows: only mentions (not history-section or ``patient info.`` rows, nor an
    entity the vocabulary does not know: graph.ingest.lunguage) that state the finding present or uncertain
    (a negative row ends an episode there, as its ``end_study_id``, and is never part of one), in the
    studies' time order (by date, where this one goes by ``sequence``). So the graph's episode can start
    later or end earlier than the annotated one; for a group of mapped findings-section positive rows the
    two extents are the same.
    """

    subject_id: str
    entity_group: str
    temporal_group: str
    first_mention_study: str
    last_mention_study: str
    mentions: frozenset[Key]


@dataclass
class EpisodeAgreement:
    """The result of :func:`episode_agreement`: mention counts, the three measures, the unmatched gold episodes."""

    mentions_gold: int
    mentions_pred: int
    mentions_common: int
    episode_pairs: Agreement
    entity_pairs: Agreement
    boundaries: Agreement
    unmatched_gold: list[AnnotatedEpisode] = field(default_factory=list)

    def measure_rows(self) -> list[dict[str, Any]]:
        """One row per measure: precision, recall, F1 (None where undefined, else to 4 places) and the counts
        behind them in words (``cxrkg eval episodes``' table and CSV)."""
        def row(measure: str, score: Agreement, what: str) -> dict[str, Any]:
            def cell(x: float) -> float | None:
                return None if math.isnan(x) else round(x, 4)

            return {"measure": measure, "precision": cell(score.precision), "recall": cell(score.recall),
                    "f1": cell(score.f1), "counts": what}

        e, g, b = self.episode_pairs, self.entity_pairs, self.boundaries
        return [row("episode pairs", e, f"linked pairs: gold {e.gold}, pred {e.pred}, both {e.matched_gold}"),
                row("entity-group pairs", g, f"linked pairs: gold {g.gold}, pred {g.pred}, both {g.matched_gold}"),
                row("exact episode boundaries", b, f"episodes: gold {b.gold} ({b.matched_gold} matched), "
                                                   f"pred {b.pred} ({b.matched_pred} matched)")]

    def unmatched_rows(self) -> list[dict[str, Any]]:
        """One row per gold episode without an exact match: patient, groups, first and last study, mentions."""
        return [{"subject_id": e.subject_id, "entity_group": e.entity_group, "temporal_group": e.temporal_group,
                 "first_study": e.first_mention_study, "last_study": e.last_mention_study,
                 "mentions": len(e.mentions)} for e in self.unmatched_gold]

    def as_dict(self) -> dict[str, Any]:
        """The mention counts, the measures' rows and the unmatched gold episodes, as JSON values."""
        return {"mentions": {"gold": self.mentions_gold, "pred": self.mentions_pred, "common": self.mentions_common},
                "measures": self.measure_rows(), "unmatched_gold_episodes": self.unmatched_rows()}


def annotated_episodes(rows: list[LunguageRow]) -> list[AnnotatedEpisode]:
    """The episodes of ``rows`` (mentions with both groups set), sorted by patient, first study, groups."""
    members: dict[tuple[str, str, str], list[LunguageRow]] = {}
    for r in rows:
        if r.gt_entity_group and r.gt_temporal_group:
            members.setdefault((r.subject_id, r.gt_entity_group, r.gt_temporal_group), []).append(r)
    out = []
    for (subject, eg, tg), group in members.items():
        ordered = sorted(group, key=lambda r: r.sequence)
        out.append(AnnotatedEpisode(subject, eg, tg, ordered[0].study_id, ordered[-1].study_id,
                                    frozenset(r.key() for r in group)))
    return sorted(out, key=lambda e: (e.subject_id, e.first_mention_study, e.entity_group, e.temporal_group))


def _pairs(counts: Counter) -> int:
    return sum(n * (n - 1) // 2 for n in counts.values())


def _pair_score(gold_of: dict[Key, object], pred_of: dict[Key, object], scope_of: dict[Key, tuple]) -> Agreement:
    """Linked pairs within each scope: a mention is linked to another of its scope with the same label (None: none)."""
    gold: Counter[tuple] = Counter()
    pred: Counter[tuple] = Counter()
    both: Counter[tuple] = Counter()
    for key, scope in scope_of.items():
        g, p = gold_of.get(key), pred_of.get(key)
        if g is not None:
            gold[(scope, g)] += 1
        if p is not None:
            pred[(scope, p)] += 1
        if g is not None and p is not None:
            both[(scope, g, p)] += 1
    return Agreement(_pairs(gold), _pairs(pred), _pairs(both), _pairs(both))


def _boundaries(gold: list[AnnotatedEpisode], pred: list[AnnotatedEpisode]
                ) -> tuple[Agreement, list[AnnotatedEpisode]]:
    """Exact-boundary matches, and the gold episodes without one."""
    by_mention: dict[Key, AnnotatedEpisode] = {m: e for e in pred for m in e.mentions}
    matched_pred: set[AnnotatedEpisode] = set()
    unmatched: list[AnnotatedEpisode] = []
    for g in gold:
        hits = {by_mention[m] for m in g.mentions if m in by_mention}
        same = {p for p in hits if (p.first_mention_study, p.last_mention_study)
                == (g.first_mention_study, g.last_mention_study)}
        matched_pred |= same
        if not same:
            unmatched.append(g)
    return Agreement(len(gold), len(pred), len(gold) - len(unmatched), len(matched_pred)), unmatched


def episode_agreement(gold: list[LunguageRow], pred: list[LunguageRow]) -> EpisodeAgreement:
    """Compare the episodes (and entity groups) of ``pred`` with those of ``gold``.

    Args:
        gold: the rows of the reference Lunguage file (:func:`graph.formats.lunguage.read_lunguage`).
        pred: the rows of the file compared with it.

    Returns:
        An :class:`EpisodeAgreement`; the pair measures count only mentions present in both files, the
        boundaries every episode of each file.
    """
    g_rows, p_rows = {r.key(): r for r in gold}, {r.key(): r for r in pred}
    common = g_rows.keys() & p_rows.keys()
    in_group = {k: (k[0], g_rows[k].gt_entity_group) for k in common if g_rows[k].gt_entity_group}
    episode_pairs = _pair_score(
        {k: g_rows[k].gt_temporal_group or None for k in in_group},
        {k: (p_rows[k].gt_entity_group, p_rows[k].gt_temporal_group) if p_rows[k].gt_temporal_group else None
         for k in in_group}, in_group)
    entity_pairs = _pair_score({k: g_rows[k].gt_entity_group or None for k in common},
                               {k: p_rows[k].gt_entity_group or None for k in common}, {k: (k[0],) for k in common})
    boundaries, unmatched = _boundaries(annotated_episodes(gold), annotated_episodes(pred))
    return EpisodeAgreement(len(g_rows), len(p_rows), len(common), episode_pairs, entity_pairs, boundaries, unmatched)
