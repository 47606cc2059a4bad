"""Fixed-word token patterns moved to the PhraseMatcher match exactly what the Matcher matched.

The sentences are synthetic, written for these tests to hit ConText's default pattern rules (optional
words, word alternatives, a pattern that shadows a literal rule of the same span).
"""

from __future__ import annotations

import pytest

from graph.extract.rules.phrase_patterns import patterns_to_phrases, word_sequences

pytestmark = pytest.mark.extract

SENTENCES = [
    "No evidence of pneumothorax but there is a small effusion.",
    "No new focal consolidation; pneumonia may be ruled out.",
    "Edema has been ruled out. Family history of cancer, however the lungs are clear.",
    "The patient was not febrile although atelectasis might be present, though not certain.",
    "Pleural effusion is not significant. Negative for fracture. Risk of aspiration.",
    "Mother's history of emphysema; rule him out for pneumonia. Sufficient to rule out effusion.",
]


def test_word_sequences_expand_alternatives_and_optional_words():
    pattern = [{"LOWER": "no"}, {"LOWER": {"IN": ["new", "other"]}, "OP": "?"}, {"LOWER": "evidence"}]
    assert word_sequences(pattern) == [("no", "evidence"), ("no", "new", "evidence"), ("no", "other", "evidence")]
    assert word_sequences([{"LOWER": {"IN": ["risks of", "risk"]}}]) == [("risk",)]  # a spaced word never matches
    assert word_sequences([{"LOWER": "no"}, {"IS_ALPHA": True}]) is None
    assert word_sequences([{"LOWER": "no"}, {"LOWER": "x", "OP": "+"}]) is None
    assert word_sequences([{"LOWER": {"REGEX": "^no"}}]) is None


def _context_nlp(move: bool):
    import medspacy  # noqa: F401 (registers medspaCy's spaCy factories)
    import spacy

    nlp = spacy.blank("en")
    context = nlp.add_pipe("medspacy_context")
    if move:
        assert patterns_to_phrases(context, nlp) > 40  # ConText's default rules: 55 patterns, nearly all fixed words
    return nlp, context


def _matches(nlp, context, text):
    from medspacy.common.medspacy_matcher import MedspacyMatcher

    matcher = next(m for m in vars(context).values() if isinstance(m, MedspacyMatcher))
    return [(nlp.vocab.strings[k], s, e) for k, s, e in matcher(nlp.make_doc(text))]


def test_context_matches_are_the_same_after_the_move():
    before, after = _context_nlp(False), _context_nlp(True)
    for text in SENTENCES:
        expected = _matches(*before, text)
        assert expected  # the sentence exercises the rules
        assert _matches(*after, text) == expected, text


def test_a_component_without_a_medspacy_matcher_is_refused():
    import spacy

    nlp = spacy.blank("en")
    with pytest.raises(TypeError, match="Sentencizer"):
        patterns_to_phrases(nlp.add_pipe("sentencizer"), nlp)


def test_matchers_left_without_patterns_run_without_a_warning():
    """Every pattern of the extractor's components moved to the PhraseMatcher: the emptied spaCy Matchers
    answer no matches without spaCy's W036 ("does not have any patterns defined") on every report, and a
    pattern rule added afterwards still matches."""
    import warnings

    import medspacy  # noqa: F401 (registers medspaCy's spaCy factories)
    import spacy
    from medspacy.common.medspacy_matcher import MedspacyMatcher
    from medspacy.target_matcher import TargetRule

    from graph.extract.rules import build_pipeline, extract_text

    report = {"findings": "Small left pleural effusion, unchanged. No pneumothorax."}
    first = extract_text(report)  # imports and builds the pipeline outside the check
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert extract_text(report) == first and len(first["doc"]["entities"]) >= 4
    emptied = [m for _, c in build_pipeline().pipeline for m in vars(c).values() if isinstance(m, MedspacyMatcher)]
    assert emptied and all(len(m._MedspacyMatcher__matcher) == 0 for m in emptied)

    nlp = spacy.blank("en")
    target = nlp.add_pipe("medspacy_target_matcher")
    target.add([TargetRule("effusion", "OBS")])
    patterns_to_phrases(target, nlp)
    target.add([TargetRule("effusions", "OBS", pattern=[{"LOWER": "effusions"}, {"IS_PUNCT": True}])])
    assert [e.text for e in nlp("Effusions. No effusion.").ents] == ["Effusions.", "effusion"]
