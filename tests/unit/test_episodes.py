"""Episodes of a finding over a patient's history (graph.longitudinal.episodes): pure functions, no Neo4j."""

from __future__ import annotations

import random
from datetime import datetime

from graph.longitudinal.episodes import patient_episodes, runs
from graph.longitudinal.events import MentionFact, StudyFact, derive_patient

PARENTS = {"costophrenic angle blunting": ["pleural effusion"]}


def _studies(n):
    return [StudyFact(f"s{i}", datetime(2150, 1, 3 * i)) for i in range(1, n + 1)]


def _m(study, polarity=None, finding="pleural effusion", anatomy="left lung", source="a", **kw):
    return MentionFact(study, anatomy, finding, source, polarity, mention_id=f"{study}{finding}{polarity}", **kw)


def _episodes(studies, mentions, **kw):
    d = derive_patient(studies, mentions, PARENTS)
    return patient_episodes("p1", d, mentions, PARENTS, **kw)


def test_silence_continues_an_absence_ends_and_a_later_presence_recurs():
    mentions = [_m("s1", "present", severity="small", severity_score=1), _m("s3", "present", severity="large",
                                                                             severity_score=3),
                _m("s4", "absent"), _m("s6", "present", source="b")]
    study = [e for e in _episodes(_studies(7), mentions) if e.level == "study"]
    assert [(e.number, e.study_ids, e.end_study_id, e.closed, e.ended_by) for e in study] == [
        (1, ("s1", "s3"), "s4", True, "absent"), (2, ("s6",), None, False, None)]
    first, second = study
    assert first.duration_days == 6 and first.max_severity == "large" and first.sources == ("a",)
    assert first.row()["first_study_id"] == "s1" and first.row()["last_study_id"] == "s3"
    assert second.sources == ("b",) and second.duration_days == 0 and "end_study_id" not in second.row()


def test_study_level_lifts_a_more_specific_finding_and_regions_are_apart():
    mentions = [_m("s1", "present", finding="costophrenic angle blunting", anatomy="right costophrenic angle"),
                _m("s2", "present", anatomy="left lung"), _m("s3", "absent", anatomy="left lung")]
    eps = {(e.level, e.anatomy, e.finding): e for e in _episodes(_studies(3), mentions)}
    assert eps[("study", None, "pleural effusion")].study_ids == ("s1", "s2")
    assert eps[("study", None, "pleural effusion")].end_study_id == "s3"
    assert eps[("anatomy", "left lung", "pleural effusion")].study_ids == ("s2",)
    assert eps[("anatomy", "right costophrenic angle", "costophrenic angle blunting")].closed is False


def test_an_implied_presence_continues_the_episode():
    """s2 says nothing, s3 states "no change" against it: s2 is present by implication, one episode."""
    mentions = [_m("s1", "present"), _m("s3", "present"), _m("s3", change="no change", source="rg")]
    studies = _studies(4)
    d = derive_patient(studies, mentions, PARENTS)
    (ep,) = [e for e in patient_episodes("p1", d, mentions, PARENTS) if e.level == "anatomy"]
    assert ep.study_ids == ("s1", "s2", "s3") and ep.implied_study_ids == ("s2",) and "rg" in ep.sources


def test_max_silence_ends_an_episode():
    course = [("a", datetime(2150, 1, 1), "present"), ("b", datetime(2150, 1, 20), "not_mentioned"),
              ("c", datetime(2150, 3, 1), "present"), ("d", datetime(2150, 3, 2), "uncertain")]
    assert runs(course) == [(["a", "c"], None, None)]
    assert runs(course, max_silence_days=30) == [(["a"], None, "silence"), (["c"], None, None)]


def test_episodes_do_not_depend_on_the_order_of_the_input():
    rng = random.Random(3)
    studies = _studies(8)
    mentions = [_m(f"s{i}", rng.choice(["present", "absent", None]), anatomy=rng.choice(["left lung", "right lung"]),
                   change=rng.choice([None, "no change", "improved"])) for i in range(1, 9) for _ in range(2)]
    want = _episodes(studies, mentions)
    for _ in range(5):
        rng.shuffle(studies)
        rng.shuffle(mentions)
        assert _episodes(studies, mentions) == want
