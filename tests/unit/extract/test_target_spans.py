"""The target matcher that sets its spans once gives the entities medspaCy's TargetMatcher gives in its "ents"
mode, including its rule for a match that overlaps an entity set before it, and the spans of its "group" mode.
Sentences and rules are synthetic, written for this test."""

from __future__ import annotations

import warnings

import pytest

from graph.extract.rules.target_spans import FACTORY, register_factory

pytestmark = pytest.mark.extract

SENTENCES = ["Small left pleural effusion and right lower lobe pneumonia.", "No effusion. Mild pulmonary edema.",
             "Pleural effusion, effusion, effusions and pulmonary edema versus pneumonia.", ""]


def _rules():
    from medspacy.target_matcher import TargetRule

    return [TargetRule("pleural effusion", "OBS"), TargetRule("effusion", "OBS"), TargetRule("pulmonary edema", "OBS"),
            TargetRule("edema", "OBS"), TargetRule("pneumonia", "OBS"),
            TargetRule("effusions", "OBS", pattern=[{"LOWER": {"IN": ["effusions", "effusion"]}}]),
            TargetRule("lobe pneumonia", "OBS2")]


def _nlp(factory: str, preset: bool, config: dict | None = None):
    import spacy
    from spacy.language import Language

    register_factory()
    nlp = spacy.blank("en")
    if preset:  # an entity set before the matcher runs, overlapping some matches ("left pleural")
        if not Language.has_factory("test_preset_ents"):
            @Language.component("test_preset_ents")
            def preset_ents(doc):
                doc.ents = [doc.char_span(i, i + len("left pleural"), label="ANAT")
                            for i in [doc.text.find("left pleural")] if i >= 0]
                return doc
        nlp.add_pipe("test_preset_ents")
    nlp.add_pipe(factory, config=config or {}).add(_rules())
    return nlp


@pytest.mark.parametrize("preset", [False, True])
def test_same_entities_as_medspacy_ents_mode(preset):
    ours, theirs = _nlp(FACTORY, preset), _nlp("medspacy_target_matcher", preset)
    with warnings.catch_warnings(record=True) as ours_warned:
        warnings.simplefilter("always")
        got = [[(e.start, e.end, e.label_) for e in ours(s).ents] for s in SENTENCES]
    with warnings.catch_warnings(record=True) as theirs_warned:
        warnings.simplefilter("always")
        want = [[(e.start, e.end, e.label_) for e in theirs(s).ents] for s in SENTENCES]
    assert got == want
    assert [e[2] for e in got[0]] == (["ANAT", "OBS2"] if preset else ["OBS", "OBS2"]) and len(got[2]) == 5
    assert [str(w.message) for w in ours_warned] == [str(w.message) for w in theirs_warned]
    assert bool(ours_warned) == preset  # "pleural effusion" overlaps the preset "left pleural": skipped


@pytest.mark.parametrize("prune", [False, True])
def test_same_spans_as_medspacy_group_mode(prune):
    ours = _nlp(FACTORY, False, {"span_group": "cues", "prune": prune})
    theirs = _nlp("medspacy_target_matcher", False, {"result_type": "group", "span_group_name": "cues", "prune": prune})
    got = [[(s.start, s.end, s.label_) for s in doc.spans["cues"]] for doc in map(ours, SENTENCES)]
    want = [[(s.start, s.end, s.label_) for s in doc.spans["cues"]] for doc in map(theirs, SENTENCES)]
    assert got == want and len(got[2]) == (5 if prune else 9)
    doc = ours.make_doc("Pneumonia.")
    doc.spans["cues"] = [doc[0:1]]
    assert len(ours.get_pipe(FACTORY)(doc).spans["cues"]) == 2  # added to the group's spans, as medspaCy does


def test_rule_attributes_are_refused():
    from medspacy.target_matcher import TargetRule

    nlp = _nlp(FACTORY, False)
    with pytest.raises(ValueError, match="attributes"):
        nlp.get_pipe(FACTORY).add([TargetRule("edema", "OBS", attributes={"is_negated": True})])
