"""Findings as ``doc.ents`` in one assignment: medspaCy's TargetMatcher, with its matches set at once.

medspaCy 1.3's TargetMatcher in its ``"ents"`` mode adds each match with ``doc.ents += (span,)``: every
match reads the entity list back from the tokens and sets it again, so a report of MIMIC-CXR length (about
nine findings) rebuilds it nine times, about a tenth of the extractor's time. This component runs the same
TargetMatcher in its list mode (``result_type=None``: the same rules, matches, pruning and span attributes)
and sets the entities once, keeping medspaCy's rule for a match that overlaps an entity already set: the
earlier one wins and the later one is skipped with medspaCy's warning.
"""

from __future__ import annotations

import warnings

FACTORY = "cxr_target_ents"


class EntsTargetMatcher:
    """A spaCy component: ``target_matcher`` (a medspaCy TargetMatcher, ``result_type=None``) matches, then
    its spans are appended to ``doc.ents`` in match order, overlapping ones skipped."""

    def __init__(self, nlp, name: str) -> None:
        from medspacy.target_matcher import TargetMatcher

        self.name = name
        self.target_matcher = TargetMatcher(nlp, name=name, result_type=None)

    def add(self, rules) -> None:
        """Add TargetRules (see ``medspacy.target_matcher.TargetMatcher.add``)."""
        self.target_matcher.add(rules)

    def __call__(self, doc):
        ents = list(doc.ents)
        taken = {i for e in ents for i in range(e.start, e.end)}
        for span in self.target_matcher(doc):
            if taken.intersection(range(span.start, span.end)):
                warnings.warn(f'The result ""{span}"" conflicts with a pre-existing entity in doc.ents. This result '
                              "has been skipped.", RuntimeWarning)
                continue
            ents.append(span)
            taken.update(range(span.start, span.end))
        doc.ents = ents
        return doc


def register_factory() -> None:
    """Register :data:`FACTORY` with spaCy (once per process; spaCy must be importable)."""
    from spacy.language import Language

    if not Language.has_factory(FACTORY):
        Language.factory(FACTORY, func=EntsTargetMatcher)
