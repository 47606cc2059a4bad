"""The export's columns for LUNGUAGESCORE (no Neo4j): the episode number of each temporal group and the
group columns of each role."""

from __future__ import annotations

import pytest

from graph.formats.lunguage import LUNGUAGE_COLUMNS, made_up_rows
from graph.longitudinal.sequential_reports import episode_numbers, export_table


def _renamed(rows, names):
    return [r.model_copy(update={"gt_temporal_group": names.get(r.gt_temporal_group, r.gt_temporal_group)})
            for r in rows]


def test_episodes_are_numbered_by_their_first_study_within_the_entity_group():
    # patient 1 (seed 3): EG1 is TG1.1 at studies 1-2, absent at 3, TG1.2 from 4; EG3 is TG3.1 then TG3.2.
    # Named so that the names sort against time: the number follows the first study, not the name.
    rows = _renamed(made_up_rows(1, 3), {"TG1.1": "Z", "TG1.2": "A", "TG3.1": "late", "TG3.2": "early"})
    numbered = {(r.sequence, r.gt_entity_group): n for r, n in zip(rows, episode_numbers(rows), strict=True)
                if r.section != "hist"}
    assert [numbered[(s, "EG1")] for s in (1, 2, 3, 4)] == [1, 1, None, 2]  # absent: no temporal group
    assert [numbered[(s, "EG3")] for s in (1, 4, 5)] == [1, None, 2]
    assert numbered[(1, "EG4")] is None and numbered[(2, "EG4")] == 1
    # group ids count within a patient: the same names for another patient are numbered on their own
    two = made_up_rows(2, 3)
    assert episode_numbers([r for r in two if r.subject_id == two[-1].subject_id]) == \
        episode_numbers(two)[-len([r for r in two if r.subject_id == two[-1].subject_id]):]


def test_each_role_names_the_group_columns_and_adds_the_episode():
    rows = made_up_rows(1, 3)
    gold, cells = export_table(rows)
    assert gold == [*LUNGUAGE_COLUMNS, "episode"] and len(cells) == len(rows)
    prediction, same = export_table(rows, "prediction")
    assert prediction[-3:] == ["entity_group", "temporal_group", "episode"] and same == cells
    assert prediction[:-3] == gold[:-3]
    assert {c[-1] for c in cells} == {"", "1", "2"}
    with pytest.raises(ValueError, match="unknown role"):
        export_table(rows, "reference")
