"""The five-visit questions built from a window's labels: each family's answer, five distinct choices from the same
timeline, the left-out counts, the order cuts of a timeline, and the label of an interval from its edges."""

from __future__ import annotations

from collections import Counter

import pytest

from graph.temporal.multivisit import make_window, windows
from graph.temporal.multivisit_facts import (
    DOUBT_NO_DATE,
    DOUBT_OTHER_PATIENT,
    DOUBT_PRIOR,
    DOUBT_SAME_DATE,
    LABEL_DOUBT_DISAGREE,
    LABEL_DOUBT_IMPLIED,
    LABEL_DOUBT_NARROWER,
    Edge,
    Interval,
    Study,
    interval,
)
from graph.temporal.multivisit_questions import (
    NOT_RESOLVED,
    Window,
    presence,
    trajectory,
    valid_trajectories,
    window_questions,
)


def _window(**findings) -> Window:
    return Window("7", 1, tuple(f"s{k}" for k in range(1, 6)), tuple(f"i{k}" for k in range(1, 6)),
                  {f.replace("_", " "): tuple(Interval(x) if x is None or x in
                                              ("new", "worsened", "stable", "improved", "resolved")
                                              else Interval(None, x) for x in labels)
                   for f, labels in findings.items()})


def _answers(questions) -> dict[tuple[str, str], str]:
    return {(q["qtype"], q["cxrkg_basis"]["finding"] + (q["qid"][-4:] if q["group_type"] == "ICR" else "")):
            q["choices"]["ABCDE".index(q["answer"])] for q in questions}


def test_each_family_answers_from_the_labels():
    left: dict[str, int] = {}
    qs = window_questions(_window(effusion=(None, "new", "worsened", "resolved"),
                                  edema=("stable", "stable", "stable", "stable")), seed=0, left_out=left)
    got = _answers(qs)
    assert got[("first appearance", "effusion")] == "T3"
    assert got[("resolution", "effusion")] == "T5"
    assert got[("emergence to resolution", "effusion")] == "appears at T3, resolves at T5"
    assert got[("interval change", "effusionT2T3")] == "new" and got[("interval change", "effusionT4T5")] == "resolved"
    assert ("interval change", "effusionT1T2") not in got  # no edge: nothing to ask
    assert got[("multiple changes", "effusion")] == "appeared at T3, worsened at T4, resolved at T5"
    assert got[("first appearance", "edema")] == "T1" and got[("resolution", "edema")] == NOT_RESOLVED
    assert got[("no change", "edema")] == "present and unchanged from T1 to T5"
    assert ("emergence to resolution", "edema") not in got and left == {}


def test_every_question_has_five_distinct_choices_of_one_form_and_its_answer_among_them():
    qs = window_questions(_window(effusion=(None, "new", "stable", "resolved"), edema=("improved", "resolved", None, "new"),
                                  pneumothorax=(None, None, None, "new")), seed=5, left_out={})
    assert len({q["qid"] for q in qs}) == len(qs)
    for q in qs:
        assert len(q["choices"]) == len(set(q["choices"])) == 5, q
        assert q["cxrkg_basis"]["answer_text"] == q["choices"]["ABCDE".index(q["answer"])]
        if q["group_type"] == "GTS":
            valid = {t for t, _ in valid_trajectories(4)}
            assert set(q["choices"]) <= valid, q["choices"]
    gts = {q["cxrkg_basis"]["finding"]: q for q in qs if q["group_type"] == "GTS"}
    # the distractors come first from the window's other findings' trajectories
    assert {"appeared at T5", "present at T1, improved at T2, resolved at T3, appeared at T5"} <= set(
        gts["effusion"]["choices"])
    assert "appeared at T3, resolved at T5" in gts["edema"]["choices"]


def test_a_finding_in_doubt_or_contradicting_itself_gets_icr_only_and_is_counted():
    left: dict[str, int] = {}
    qs = window_questions(_window(edema=("stable", "no longer mentioned", None, "new"),
                                  effusion=("resolved", "stable", None, None)), seed=0, left_out=left)
    assert {q["group_type"] for q in qs} == {"ICR"}
    assert sorted(q["qid"][-4:] for q in qs) == ["T1T2", "T1T2", "T2T3", "T4T5"]
    assert left == {"no longer mentioned": 1, "labels contradict presence": 1}


def test_choices_follow_the_seed_and_the_answers_do_not():
    a = window_questions(_window(effusion=(None, "new", "worsened", "resolved")), seed=1, left_out={})
    b = window_questions(_window(effusion=(None, "new", "worsened", "resolved")), seed=1, left_out={})
    c = window_questions(_window(effusion=(None, "new", "worsened", "resolved")), seed=2, left_out={})
    assert a == b
    assert [q["choices"] for q in a] != [q["choices"] for q in c]
    assert _answers(a) == _answers(c)


def test_presence_and_trajectory_text():
    assert presence((None, "new", "stable", "resolved")) == (False, False, True, True, False)
    assert presence(("resolved", "stable", None, None)) is None
    assert trajectory(("improved", "stable", "resolved", None), True) == "present at T1, improved at T2, resolved at T4"


def _edge(change="new", basis="derived", source="presence", implied=(), state="present", own=True, finding="effusion"):
    return Edge(finding, change, basis, source, f"{finding}|{source}|{change}", implied, "c", "p", state, "absent", own, True)


@pytest.mark.parametrize("edges, label, doubt", [
    ([], None, None),
    ([_edge()], "new", None),
    ([_edge("persistent")], "stable", None),
    ([_edge("no change", "stated", "radgraph"), _edge("persistent")], "stable", None),
    ([_edge("worsened", "stated", "radgraph"), _edge("new")], "worsened", None),
    ([_edge("worsened", "stated", "radgraph"), _edge("improved", "stated", "chest_imagenome")], None,
     LABEL_DOUBT_DISAGREE),
    ([_edge("no longer mentioned")], None, "no longer mentioned"),
    ([_edge("repositioned", "stated", "radgraph")], None, "repositioned"),
    ([_edge(implied=("current",))], None, LABEL_DOUBT_IMPLIED),
    ([_edge(own=False)], None, LABEL_DOUBT_NARROWER),
])
def test_an_intervals_label_stated_first_then_derived(edges, label, doubt):
    got = interval(edges)
    assert (got.label, got.doubt) == (label, doubt)


def _study(k, date, prior, patient="7", prior_patient="7", edges=()):
    return Study(f"s{k}", patient, date, k, prior, prior_patient if prior else None, f"i{k}", list(edges))


def test_windows_are_consecutive_fives_cut_where_the_order_is_in_doubt():
    chain = [_study(k, f"2020-01-{k:02d}", f"s{k - 1}" if k > 1 else None) for k in range(1, 12)]
    doubts: Counter = Counter()
    assert [[s.study_id for s in w] for w in windows(chain, 5, doubts)] == [["s1", "s2", "s3", "s4", "s5"],
                                                                           ["s6", "s7", "s8", "s9", "s10"]]
    assert sum(doubts.values()) == 0
    broken = list(chain)
    broken[3] = _study(4, "2020-01-03", "s3")  # the same date as s3
    broken[7] = _study(8, "2020-01-08", "s6")  # PRIOR skips s7
    broken[9] = _study(10, None, "s9")
    broken[10] = _study(11, "2020-01-11", "s10", prior_patient="8")
    doubts = Counter()
    assert [[s.study_id for s in w] for w in windows(broken, 5, doubts)] == []
    assert doubts == {DOUBT_SAME_DATE: 1, DOUBT_PRIOR: 1, DOUBT_NO_DATE: 1, DOUBT_OTHER_PATIENT: 1}
    restart = chain[:8]
    restart[3] = _study(4, "2020-01-04", "s0")  # a cut after s3: the next window starts at s4
    assert [[s.study_id for s in w] for w in windows(restart, 5, Counter())] == [["s4", "s5", "s6", "s7", "s8"]]


def test_make_window_gives_each_finding_its_four_intervals():
    studies = [_study(1, "2020-01-01", None), _study(2, "2020-01-02", "s1", edges=[_edge()]),
               _study(3, "2020-01-03", "s2", edges=[_edge("persistent"), _edge("new", finding="edema")]),
               _study(4, "2020-01-04", "s3"), _study(5, "2020-01-05", "s4")]
    w = make_window("7", 1, tuple(studies))
    assert w.images == ("i1", "i2", "i3", "i4", "i5")
    assert [i.label for i in w.findings["effusion"]] == ["new", "stable", None, None]
    assert [i.label for i in w.findings["edema"]] == [None, "new", None, None]


def test_a_longer_window_keeps_five_choices_with_the_answer():
    w = Window("7", 1, tuple(f"s{k}" for k in range(1, 8)), tuple(f"i{k}" for k in range(1, 8)),
               {"effusion": tuple(Interval(x) for x in (None, None, None, None, "new", "resolved"))})
    qs = window_questions(w, seed=0, left_out={})
    assert all(len(q["choices"]) == 5 for q in qs)
    got = _answers(qs)
    assert got[("first appearance", "effusion")] == "T6" and got[("resolution", "effusion")] == "T7"
    assert got[("emergence to resolution", "effusion")] == "appears at T6, resolves at T7"
