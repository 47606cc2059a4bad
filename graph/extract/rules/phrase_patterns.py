"""Token-pattern rules served by spaCy's PhraseMatcher instead of its Matcher, with the same matches.

spaCy's ``Matcher`` starts every pattern at every token and checks a ``{"IN": [...]}`` predicate with a
Python call per state: on reports of MIMIC-CXR length medspaCy ConText's 55 default pattern rules took
about half of the extractor's time. A pattern whose tokens are fixed words (``{"LOWER": word}`` or
``{"LOWER": {"IN": words}}``, optionally ``"OP": "?"``) matches a finite set of word sequences; those go to
the ``PhraseMatcher`` (one hash-trie walk per token) under the pattern's own rule id, so every match keeps
its rule, span and key. Patterns of any other shape stay with the ``Matcher``.

One order is kept as well: medspaCy prunes overlapping matches to the longest, and of two matches of the
same span keeps the Matcher's (it lists them first). A literal rule that a pattern rule shadowed that way
never matched alone, so it is removed rather than left to tie with the pattern's phrases, whose order in
the PhraseMatcher would be its hash order.

A Matcher left without patterns is swapped for one that answers no matches: spaCy's Matcher warns on every call
that it has no patterns ("[W036] The component 'matcher' does not have any patterns defined", spaCy 3.8
``spacy/matcher/matcher.pyx``, ``Matcher._require_patterns``), and medspaCy's ``MedspacyMatcher.__call__`` calls
it for every Doc.
"""

from __future__ import annotations

import functools
import itertools

#: a pattern with more word sequences than this stays a pattern (none of cxrkg's or ConText's default
#: rules comes close; the bound keeps a future rule from building a huge phrase table)
MAX_SEQUENCES = 5_000


def word_sequences(pattern: list[dict]) -> list[tuple[str, ...]] | None:
    """The lowercase word sequences a token pattern matches, or None when it is not a fixed-word pattern.

    Fixed-word tokens: ``{"LOWER": w}`` or ``{"LOWER": {"IN": [w, ...]}}``, optionally with ``"OP": "?"``.
    A word with a space in it can never equal one token and is dropped (ConText's "risks of" rule)."""
    choices = []
    for tok in pattern:
        if set(tok) - {"LOWER", "OP"} or tok.get("OP", "?") != "?":
            return None
        low = tok.get("LOWER")
        words = low["IN"] if isinstance(low, dict) and set(low) == {"IN"} else [low] if isinstance(low, str) else None
        if words is None:
            return None
        words = [w.lower() for w in words if isinstance(w, str) and " " not in w]
        choices.append(([None] if "OP" in tok else []) + words)
    out = []
    for combo in itertools.product(*choices):
        seq = tuple(w for w in combo if w is not None)
        if seq:
            out.append(seq)
        if len(out) > MAX_SEQUENCES:
            return None
    return list(dict.fromkeys(out))


def patterns_to_phrases(component, nlp) -> int:
    """Move the fixed-word pattern rules of a medspaCy component (a TargetMatcher or ConText, holding its
    rules already) from its Matcher to its PhraseMatcher (module docstring); returns how many rules moved.

    medspaCy 1.3 gives no public handle on a component's ``MedspacyMatcher`` or on that matcher's spaCy
    matchers, so they are read from the objects' attributes; nothing moves (0) when the phrase matcher
    does not match on ``LOWER`` (medspaCy's default). A Matcher left with no pattern is swapped for a quiet
    one (module docstring).

    Raises:
        TypeError: ``component`` holds no ``MedspacyMatcher``.
    """
    from medspacy.common.medspacy_matcher import MedspacyMatcher
    from spacy.tokens import Doc

    matcher = next((m for m in vars(component).values() if isinstance(m, MedspacyMatcher)), None)
    if matcher is None:
        raise TypeError(f"{type(component).__name__} holds no medspaCy matcher")

    token_matcher = matcher._MedspacyMatcher__matcher
    phrase_matcher = matcher._MedspacyMatcher__phrase_matcher
    if str(matcher._MedspacyMatcher__phrase_matcher_attr).lower() != "lower":
        _quiet_when_empty(matcher, nlp)
        return 0
    moved: dict[str, list[tuple[str, ...]]] = {}
    for rule_id, rule in matcher.rule_map.items():
        if isinstance(rule.pattern, list) and rule.on_match is None:
            seqs = word_sequences(rule.pattern)
            if seqs is not None:
                moved[rule_id] = seqs
    shadowed = {seq for seqs in moved.values() for seq in seqs}
    for rule_id, rule in matcher.rule_map.items():
        if rule.pattern is None and rule_id in phrase_matcher:
            if tuple(t.lower_ for t in nlp.make_doc(rule.literal.lower())) in shadowed:
                phrase_matcher.remove(rule_id)
    for rule_id, seqs in moved.items():
        token_matcher.remove(rule_id)
        phrase_matcher.add(rule_id, [Doc(nlp.vocab, words=list(seq)) for seq in seqs])
    _quiet_when_empty(matcher, nlp)
    return len(moved)


def _quiet_when_empty(matcher, nlp) -> None:
    """Swap the spaCy ``Matcher`` of a medspaCy ``MedspacyMatcher`` for an empty one of
    :func:`_patternless_matcher_class` when it holds no pattern (module docstring); pattern rules added later
    still reach it."""
    if len(matcher._MedspacyMatcher__matcher) == 0:
        matcher._MedspacyMatcher__matcher = _patternless_matcher_class()(nlp.vocab)


@functools.cache
def _patternless_matcher_class():
    """spaCy's ``Matcher``, answering no matches without a warning while it holds no pattern (imported late:
    spaCy is an optional dependency)."""
    from spacy.matcher import Matcher

    class _PatternlessMatcher(Matcher):
        def __call__(self, doclike, **kwargs):
            return [] if len(self) == 0 else super().__call__(doclike, **kwargs)

    return _PatternlessMatcher
