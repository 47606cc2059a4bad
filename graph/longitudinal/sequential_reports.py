"""The graph's sequential structured reports as Lunguage rows (what ``cxrkg export lunguage`` writes).

Every mention with a state becomes one row, and the stated changes of the same place, source and record
become that row's change columns. This works for any cohort (NIH, synthetic, the IU extractions, Lunguage).
Rows read back with :func:`graph.formats.lunguage.read_lunguage` and are scored by ``cxrkg eval episodes``
or LUNGUAGESCORE's sequential mode. Pure: ``cxrkg export lunguage`` (flows/cli/export.py) reads the mentions
and episodes from the graph and writes the rows.

* **Lunguage mentions** (source ``lunguage``) are written back under their own key (subject, study,
  section, sentence and entity index). They keep their entity text, their entity group and their temporal
  group, so a Lunguage file that is loaded and then exported gives back its entity groups and episodes.
  Mentions of one row on several regions are one row again, with the regions as its ``location``.
* **Other sources**: each (source, record, region, finding) with a state is one row of section ``find``,
  numbered in study order. Its entity group is the region and finding, one per patient. Its temporal group
  is the derived anatomy-level episode (:mod:`graph.longitudinal.episodes`) that holds the study, when the finding is present
  there; absent and uncertain rows have none, as in Lunguage.

Columns: see :data:`graph.formats.lunguage.LUNGUAGE_COLUMNS`, then :data:`EPISODE_COLUMN` (:func:`export_table`;
``--role prediction`` renames the group columns as LUNGUAGESCORE reads a prediction). ``sequence`` is the study's order in the
patient's timeline (``study_order``, from 1). ``cat`` is ``oth`` for tubes, lines and devices and ``pf``
otherwise. States map back by :data:`graph.formats.lunguage.STATE_STATUS`: positive/definitive (present),
positive/tentative (uncertain) and negative/definitive (absent); stated changes by
:data:`graph.formats.lunguage.CHANGE_FIELD`.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Mapping, Sequence

from graph.formats.lunguage import CHANGE_FIELD, LUNGUAGE_COLUMNS, STATE_STATUS, LunguageRow
from graph.terms import Source, State

_DEVICE_CATEGORIES = {"device", "tubesandlines"}

#: What the export is for, in LUNGUAGESCORE's terms (``cxrkg export lunguage --role``): ``gold`` keeps the
#: benchmark's column names (its scorer renames ``gt_entity_group`` and ``gt_temporal_group`` on the gold file
#: only); ``prediction`` writes them as :data:`PREDICTION_COLUMNS`, the names it reads a prediction's groups by.
ROLES = ("gold", "prediction")
#: lunguage-score 1.0.0 (``lunguagescore.py``, ``calculate_lunguagescore``): a prediction's groups come from
#: ``LLM_cluster`` (its rows without a temporal group dropped) or ``entity_group``, and ``temporal_group``;
#: ``entity_group`` keeps every row, as its gold side does.
PREDICTION_COLUMNS = {"gt_entity_group": "entity_group", "gt_temporal_group": "temporal_group"}
#: The column LUNGUAGESCORE 1.0.0 compares episodes by: its ``DataConverter`` keeps ``episode`` (a temporal
#: weight) and drops ``temporal_group``, and numbers a row without the column episode 1. Written in both roles:
#: the row's temporal group as its number within the entity group (:func:`episode_numbers`), empty without one.
EPISODE_COLUMN = "episode"


def lunguage_rows(mentions: Iterable[Mapping[str, Any]], episodes: Iterable[Mapping[str, Any]],
                  categories: Mapping[str, str]) -> list[LunguageRow]:
    """Lunguage rows from the graph's mentions and derived anatomy-level episodes.

    Args:
        mentions: one dict per Mention: patient_id, study_id, study_order, anatomy, finding, source,
            polarity, change, change_label, severity, evidence, record, section, sentence_id, term,
            entity_group, temporal_group (absent values None).
        episodes: derived anatomy-level episodes: patient_id, anatomy, finding, number, study_ids.
        categories: finding -> its vocabulary category (devices and tubes become ``cat`` oth).

    Returns:
        Rows ordered by patient, sequence, section, sentence and entity index.
    """
    in_episode = {(e["patient_id"], e["anatomy"], e["finding"], s): e["number"] for e in episodes
                  for s in e["study_ids"]}
    groups: dict[tuple, list[Mapping[str, Any]]] = defaultdict(list)
    for m in mentions:
        own = m["source"] == Source.LUNGUAGE and m["record"]
        key = (m["patient_id"], m["study_id"], m["source"], m["record"]) if own else \
            (m["patient_id"], m["study_id"], m["source"], m["record"], m["anatomy"], m["finding"])
        groups[key].append(m)
    rows = []
    counters: dict[str, int] = defaultdict(int)
    for key in sorted(groups, key=lambda k: tuple(str(x) for x in k)):
        ms = groups[key]
        stated = [m for m in ms if m["polarity"] in STATE_STATUS]
        if not stated:
            continue
        first = stated[0]
        if first["source"] == Source.LUNGUAGE and first["record"]:
            row = _own_row(first, ms, categories)
        else:
            n = counters[first["study_id"]]
            counters[first["study_id"]] += 1
            row = _derived_row(first, ms, n, categories, in_episode)
        rows.append(LunguageRow.model_validate(row))
    return sorted(rows, key=lambda r: (r.subject_id, r.sequence, r.section != "hist", r.section, r.sent_idx,
                                       r.ent_idx))


def _common(m: Mapping[str, Any], ms: list[Mapping[str, Any]], categories: Mapping[str, str]) -> dict[str, Any]:
    status, certainty = STATE_STATUS[m["polarity"]]
    row = {"subject_id": m["patient_id"], "study_id": m["study_id"], "sequence": m["study_order"],
           "sent": m["evidence"] or "",
           "cat": "oth" if categories.get(m["finding"]) in _DEVICE_CATEGORIES else "pf", "dx_status": status,
           "dx_certainty": certainty, "severity": m["severity"] or ""}
    for x in ms:
        if x["change"] in CHANGE_FIELD:
            row[CHANGE_FIELD[x["change"]]] = x["change_label"] or "yes"
    return row


def _own_row(m: Mapping[str, Any], ms: list[Mapping[str, Any]], categories: Mapping[str, str]) -> dict[str, Any]:
    """A Lunguage mention written back under its key (``record``: subject|study|section|sent_idx|ent_idx)."""
    _, _, section, sent_idx, ent_idx = m["record"].split("|")
    regions = sorted({x["anatomy"] for x in ms if x["polarity"] in STATE_STATUS})
    return {**_common(m, ms, categories), "section": section, "sent_idx": int(sent_idx), "ent_idx": int(ent_idx),
            "ent": m["term"] or m["finding"], "location": ", ".join(regions),
            "gt_entity_group": m["entity_group"] or "", "gt_temporal_group": m["temporal_group"] or ""}


def _derived_row(m: Mapping[str, Any], ms: list[Mapping[str, Any]], n: int, categories: Mapping[str, str],
                 in_episode: Mapping[tuple, int]) -> dict[str, Any]:
    """A mention of another source: entity group per region and finding, temporal group its derived episode."""
    group = f"{m['anatomy']}|{m['finding']}"
    number = in_episode.get((m["patient_id"], m["anatomy"], m["finding"], m["study_id"]))
    present = m["polarity"] == State.PRESENT and number is not None
    return {**_common(m, ms, categories), "section": "find", "sent_idx": n, "ent_idx": n,
            "ent": m["term"] or m["finding"], "location": m["anatomy"], "gt_entity_group": group,
            "gt_temporal_group": f"{group}|{number}" if present else ""}


def episode_numbers(rows: Sequence[LunguageRow]) -> list[int | None]:
    """Per row, its temporal group's number within its patient's entity group: 1, 2, ... in the order of the
    first ``sequence`` each temporal group has (then by name); None for a row without a temporal group."""
    first: dict[tuple[str, str, str], int] = {}
    for r in rows:
        if r.gt_temporal_group:
            key = (r.subject_id, r.gt_entity_group, r.gt_temporal_group)
            first[key] = min(first.get(key, r.sequence), r.sequence)
    of_group: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
    for (subject, group, temporal), sequence in first.items():
        of_group[(subject, group)].append((sequence, temporal))
    number = {(subject, group, temporal): n for (subject, group), temporals in of_group.items()
              for n, (_, temporal) in enumerate(sorted(temporals), start=1)}
    return [number.get((r.subject_id, r.gt_entity_group, r.gt_temporal_group)) if r.gt_temporal_group else None
            for r in rows]


def export_table(rows: Sequence[LunguageRow], role: str = "gold") -> tuple[list[str], list[list[str]]]:
    """The export's header and cells: :data:`LUNGUAGE_COLUMNS` (for ``prediction`` the group columns renamed
    by :data:`PREDICTION_COLUMNS`), then :data:`EPISODE_COLUMN`; one list of cells per row, in order.

    Raises:
        ValueError: ``role`` is not one of :data:`ROLES`.
    """
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}: choose {' or '.join(ROLES)}")
    names = PREDICTION_COLUMNS if role == "prediction" else {}
    header = [names.get(c, c) for c in LUNGUAGE_COLUMNS] + [EPISODE_COLUMN]
    cells = [r.cells() + ["" if n is None else str(n)] for r, n in zip(rows, episode_numbers(rows), strict=True)]
    return header, cells
