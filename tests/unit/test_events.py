"""The pure derivation of mention states and events (graph.longitudinal.events): no Neo4j, runs in milliseconds."""

from __future__ import annotations

from datetime import datetime

from graph.longitudinal.events import (
    ABSENT,
    NOT_MENTIONED,
    PRESENT,
    MentionFact,
    StudyFact,
    changes_agree,
    derive_change,
    derive_patient,
    stated_state,
)

PARENTS = {"costophrenic angle blunting": ["pleural effusion"], "atelectasis": ["lung opacity"]}


def _studies(n):
    return [StudyFact(f"s{i}", datetime(2150, 1, i)) for i in range(1, n + 1)]


def _m(study, finding, polarity=None, anatomy="lungs", source="a", **kw):
    return MentionFact(study, anatomy, finding, source, polarity, **kw)


def test_state_is_the_strongest_statement():
    assert stated_state(["absent", "uncertain"]) == "uncertain"
    assert stated_state(["absent", "present", None]) == "present"
    assert stated_state([None]) == NOT_MENTIONED


def test_rules_between_consecutive_states():
    assert derive_change(NOT_MENTIONED, PRESENT) == ("new", "onset_after_not_mentioned")
    assert derive_change(ABSENT, PRESENT) == ("new", "onset_after_absent")
    assert derive_change(PRESENT, ABSENT) == ("resolved", "resolution")
    assert derive_change(PRESENT, NOT_MENTIONED) == ("no longer mentioned", "no_longer_mentioned")
    assert derive_change(PRESENT, PRESENT) == ("persistent", "persistence")
    assert derive_change(ABSENT, NOT_MENTIONED) is None and derive_change(NOT_MENTIONED, ABSENT) is None


def test_study_level_lifts_present_children_but_not_absences():
    d = derive_patient(_studies(2), [_m("s1", "pleural effusion", "absent"),
                                     _m("s2", "costophrenic angle blunting", "present")], PARENTS)
    assert d.study_state("s2", "pleural effusion") == PRESENT
    assert d.study_state("s1", "pleural effusion") == ABSENT
    assert d.study_state("s1", "costophrenic angle blunting") == NOT_MENTIONED  # absence does not go down
    onsets = {(e.anatomy, e.finding, e.prior_state) for e in d.events if e.change == "new"}
    assert onsets == {(None, "pleural effusion", ABSENT), (None, "costophrenic angle blunting", NOT_MENTIONED),
                      ("lungs", "costophrenic angle blunting", NOT_MENTIONED)}


def test_order_of_input_does_not_matter():
    studies = _studies(3)
    mentions = [_m("s1", "atelectasis", "present"), _m("s3", "atelectasis", "absent", source="b"),
                _m("s3", "atelectasis", "present"), _m("s2", "pleural effusion", "absent")]
    a = derive_patient(studies, mentions, PARENTS)
    b = derive_patient(list(reversed(studies)), list(reversed(mentions)), PARENTS)
    assert a == b
    assert a.polarity_conflicts == {("s3", "lungs", "atelectasis")}  # two sources: present and absent


def test_stated_changes_use_the_named_prior_image_or_the_prior_study():
    studies = [StudyFact("s1", datetime(2150, 1, 1), ("i1",)), StudyFact("s2", datetime(2150, 1, 5), ("i2",)),
               StudyFact("s3", datetime(2150, 1, 9), ("i3",))]
    mentions = [_m("s3", "pleural effusion", change="worsened", prior_image_id="i1", source="ci"),
                _m("s3", "pleural effusion", change="improved", source="rg"),
                _m("s2", "pleural effusion", change="new", prior_image_id="unknown", source="ci")]
    d = derive_patient(studies, mentions, PARENTS)
    stated = sorted((e.study_id, e.prior_study_id, e.anatomy or "", e.change) for e in d.events if e.basis == "stated")
    assert stated == [("s3", "s1", "lungs", "worsened"), ("s3", "s2", "", "improved"),
                      ("s3", "s2", "lungs", "improved")]  # the unknown prior image stays on its mention
    assert d.prior == {"s2": ("s1", 4), "s3": ("s2", 4)}


def test_disagreeing_stated_changes_and_a_contradicted_onset_are_conflicts():
    mentions = [_m("s1", "pleural effusion", "absent"), _m("s2", "pleural effusion", "present"),
                _m("s2", "pleural effusion", change="no change", source="rg")]
    assert derive_patient(_studies(2), mentions, PARENTS).change_conflicts() == {
        ("s2", "lungs", "pleural effusion"): ["s1"]}
    agreeing = mentions[:2] + [_m("s2", "pleural effusion", change="worsened", source="ci")]
    assert derive_patient(_studies(2), agreeing, PARENTS).change_conflicts() == {}


def test_stated_synonyms_agree_under_the_event_rules():
    """Chest ImaGenome's "worsened" for an appearing finding is RadGraph2's "new"; "improved" and "resolved"
    likewise; anything else stated against the same pair is a disagreement."""
    appearing = [_m("s1", "pleural effusion", "absent"), _m("s2", "pleural effusion", "present"),
                 _m("s2", "pleural effusion", change="worsened", source="ci"),
                 _m("s2", "pleural effusion", change="new", source="rg")]
    assert derive_patient(_studies(2), appearing, PARENTS).change_conflicts() == {}
    going = [_m("s1", "pleural effusion", "present"), _m("s2", "pleural effusion", "absent"),
             _m("s2", "pleural effusion", change="improved", source="ci"),
             _m("s2", "pleural effusion", change="resolved", source="rg")]
    assert derive_patient(_studies(2), going, PARENTS).change_conflicts() == {}
    clash = going[:3] + [_m("s2", "pleural effusion", change="worsened", source="rg")]
    assert derive_patient(_studies(2), clash, PARENTS).change_conflicts() == {
        ("s2", "lungs", "pleural effusion"): ["s1"]}
    assert changes_agree(["new", "worsened"]) and not changes_agree(["no change", "worsened"])


def test_a_stated_comparison_implies_presence_in_the_prior_study():
    """"No change" against a study that said nothing: present there by implication, so no onset now; the
    strict reading keeps the onset; a stated absence in the prior wins over the implication."""
    mentions = [_m("s2", "pleural effusion", "present"), _m("s2", "pleural effusion", change="no change", source="rg",
                                                             mention_id="m7")]
    d = derive_patient(_studies(2), mentions, PARENTS)
    assert d.anatomy_state("s1", "lungs", "pleural effusion") == PRESENT
    assert d.implied == {("s1", "lungs", "pleural effusion"): ("rg:m7",)}
    assert d.study_implied == {("s1", "pleural effusion")}
    derived = {(e.anatomy, e.change, e.implied) for e in d.events if e.basis == "derived"}
    assert derived == {("lungs", "persistent", ("prior",)), (None, "persistent", ("prior",))}
    strict = derive_patient(_studies(2), mentions, PARENTS, implied_presence=False)
    assert {e.change for e in strict.events if e.basis == "derived"} == {"new"} and strict.implied == {}
    absent_before = mentions + [_m("s1", "pleural effusion", "absent")]
    d = derive_patient(_studies(2), absent_before, PARENTS)
    assert d.implied == {} and d.anatomy_state("s1", "lungs", "pleural effusion") == ABSENT
    worsened = [_m("s2", "pleural effusion", "present"), _m("s2", "pleural effusion", change="worsened")]
    assert derive_patient(_studies(2), worsened, PARENTS).implied == {}  # "worsened" may be an appearing finding


def test_an_uncertain_prior_yields_to_a_later_comparison_and_an_absent_one_does_not():
    """Uncertain is not absent: "no change" against a study that stated the finding uncertain makes it
    present there by implication (the stated uncertainty kept in implied_over), so no onset now; the
    strict reading keeps the uncertain state and its onset. A stated absence stays, and the onset with it,
    listed as a disagreement."""
    mentions = [_m("s1", "atelectasis", "uncertain", source="rg"), _m("s2", "atelectasis", "present"),
                _m("s2", "atelectasis", change="no change", source="rg", mention_id="m3")]
    d = derive_patient(_studies(2), mentions, PARENTS)
    assert d.anatomy_state("s1", "lungs", "atelectasis") == PRESENT
    assert d.implied == {("s1", "lungs", "atelectasis"): ("rg:m3",)}
    assert d.implied_over == {("s1", "lungs", "atelectasis"): "uncertain"}
    assert {(e.anatomy, e.change) for e in d.events if e.basis == "derived"} == {
        ("lungs", "persistent"), (None, "persistent")}
    strict = derive_patient(_studies(2), mentions, PARENTS, implied_presence=False)
    assert strict.anatomy_state("s1", "lungs", "atelectasis") == "uncertain" and strict.implied_over == {}
    assert {e.change for e in strict.events if e.basis == "derived"} == {"new"}
    absent = [_m("s1", "atelectasis", "absent", source="rg"), *mentions[1:]]
    d = derive_patient(_studies(2), absent, PARENTS)
    assert d.anatomy_state("s1", "lungs", "atelectasis") == ABSENT and d.implied == {}
    assert {e.change for e in d.events if e.basis == "derived"} == {"new"}
    assert d.change_conflicts() == {("s2", "lungs", "atelectasis"): ["s1"]}
