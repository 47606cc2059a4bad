"""medspaCy's target matching with its spans set once: findings as ``doc.ents``, cues as a span group.

medspaCy 1.3's TargetMatcher gives every match a ``Span._.target_rule`` (an extension write, with one
``Underscore`` object per span) and, in its ``"ents"`` mode, adds each match with ``doc.ents += (span,)``, which
reads the entity list back from the tokens and sets it again. On a report of MIMIC-CXR length (about 10 findings
and 30 cue spans) that was two thirds of the three matchers' time, for an attribute nothing here reads. This
component runs the same ``MedspacyMatcher`` TargetMatcher runs (the same rules, matches and pruning), labels each
span with its rule's category and sets the spans at once: to ``doc.ents``, keeping medspaCy's rule for a match
that overlaps an entity already set (the earlier one wins; the later one is skipped with medspaCy's warning), or
to the span group ``span_group``, added to any spans the group holds, as TargetMatcher's ``"group"`` mode does.
"""

from __future__ import annotations

import warnings

FACTORY = "cxr_target_spans"


class TargetSpans:
    """A spaCy component: ``matcher`` (a medspaCy ``MedspacyMatcher`` of TargetRules) matches, then its spans go
    to ``doc.ents`` in match order, overlapping ones skipped (``span_group`` None), or to ``doc.spans[span_group]``.

    Raises:
        ValueError (from :meth:`add`): a rule sets span attributes, which this component does not set.
    """

    def __init__(self, nlp, name: str, span_group: str | None = None, prune: bool = True) -> None:
        from medspacy.common.medspacy_matcher import MedspacyMatcher

        self.name = name
        self.span_group = span_group
        self.matcher = MedspacyMatcher(nlp, name=name, phrase_matcher_attr="LOWER", prune=prune)
        #: a test a matched span must pass to be set (None: every span is), so that a form that names a finding
        #: only in some company ("heart size" beside "has increased") costs the later components nothing elsewhere
        self.keep = None

    def add(self, rules) -> None:
        """Add TargetRules (see ``medspacy.target_matcher.TargetMatcher.add``)."""
        rules = list(rules)
        if any(r.attributes for r in rules):
            raise ValueError(f"{self.name}: TargetRule attributes are not set by this component")
        self.matcher.add(rules)

    def __call__(self, doc):
        from spacy.tokens import Span

        strings, rule_map = doc.vocab.strings, self.matcher.rule_map
        spans = [Span(doc, start, end, label=rule_map[strings[match_id]].category)
                 for match_id, start, end in self.matcher(doc)]
        if self.keep is not None:
            spans = [span for span in spans if self.keep(span)]
        if self.span_group is not None:
            group = doc.spans.get(self.span_group)
            doc.spans[self.span_group] = list(group) + spans if group is not None else spans
            return doc
        ents = list(doc.ents)
        taken = {i for e in ents for i in range(e.start, e.end)}
        for span in spans:
            if taken.intersection(range(span.start, span.end)):
                warnings.warn(f'The result ""{span}"" conflicts with a pre-existing entity in doc.ents. This result '
                              "has been skipped.", RuntimeWarning, stacklevel=2)
                continue
            ents.append(span)
            taken.update(range(span.start, span.end))
        doc.ents = ents
        return doc


def register_factory() -> None:
    """Register :data:`FACTORY` with spaCy (once per process; spaCy must be importable)."""
    from spacy.language import Language

    if not Language.has_factory(FACTORY):
        Language.factory(FACTORY, func=TargetSpans)
