"""medspaCy's ConText, with each modifier paired only with the targets and modifiers its scope can reach.

medspaCy 1.3.1's ``ConTextGraph.apply_modifiers`` asks every modifier of a document whether it modifies every
target of the document, and ``update_scopes`` lets every pair of modifiers limit each other. A modifier's scope
lies within a few tokens or its sentence, so on a report of MIMIC-CXR length (about 12 sentences, 9 findings and
8 modifiers) nine in ten of those calls are about pairs whose spans are apart, and ConText was about a fifth of the
extractor's CPU time, half of it in ``modifies``.

:class:`ScopedConTextGraph` leaves out only pairs that medspaCy's own checks reject: a target none of whose tokens
lies in a modifier's scope (the entities of ``doc.ents`` are sorted and do not overlap, so a bisection finds the
ones that do), and two modifiers whose scopes are apart. The pairs it keeps are decided by medspaCy's
``modifies`` and ``limit_scope``, in medspaCy's order, so the edges and the span attributes are the same
(``tests/unit/test_scoped_context.py`` compares the two components on report sentences).
"""

from __future__ import annotations

from bisect import bisect_right

from medspacy.context import ConText
from medspacy.context.context_graph import ConTextGraph
from medspacy.context.context_modifier import ConTextModifier
from spacy.language import Language
from spacy.tokens import Span

FACTORY = "cxr_context"


class ScopedConTextGraph(ConTextGraph):
    """A ``ConTextGraph`` whose scope updates and modifier-target pairing skip pairs whose spans are apart."""

    def update_scopes(self) -> None:
        """medspaCy's pairwise scope limits (same category, TERMINATE, ``terminated_by``), over the pairs of
        modifiers whose current scopes touch: ``limit_scope`` changes nothing for the others."""
        modifiers = self.modifiers
        for i, first in enumerate(modifiers):
            for second in modifiers[i + 1:]:
                a, b = first.scope_span, second.scope_span
                if a[0] <= b[1] and b[0] <= a[1]:
                    first.limit_scope(second)
                    second.limit_scope(first)

    def apply_modifiers(self) -> None:
        """Edges from each modifier to the targets it modifies (medspaCy's ``modifies``, then ``max_targets``),
        asking only the targets that share a token with its scope.

        Falls back to medspaCy's own pairing when modifiers overlapping a target are to be pruned first."""
        if self.prune_on_modifier_overlap:
            super().apply_modifiers()
            return
        targets = list(self.targets)
        ends = [t.end for t in targets]
        for modifier in self.modifiers:
            scope_start, scope_end = modifier.scope_span
            for target in targets[bisect_right(ends, scope_start):]:
                if target.start >= scope_end:
                    break
                if modifier.modifies(target):
                    modifier.modify(target)
        edges: list[tuple[Span, ConTextModifier]] = []
        for modifier in self.modifiers:
            modifier.reduce_targets()
            edges.extend((target, modifier) for target in modifier._targets)
        self.edges = edges


class ScopedConText(ConText):
    """medspaCy's ``ConText`` component (same rules, configuration and span attributes) on
    :class:`ScopedConTextGraph` when its targets are ``doc.ents``; with other targets (span groups or a ``Doc``
    extension, which may overlap, so the bisection does not apply) it is medspaCy's component unchanged."""

    def __call__(self, doc, targets: str | None = None):
        """ConText on ``doc`` as medspaCy 1.3.1's ``ConText.__call__`` runs it: match modifiers, set and limit
        their scopes, link them to the targets (``Span._.modifiers``, ``Doc._.context_graph``) and set the span
        attributes of their categories (``is_negated``, ``is_uncertain``, ...)."""
        if targets or self.input_span_type != "ents":
            return super().__call__(doc, targets)
        graph = ScopedConTextGraph(prune_on_modifier_overlap=self.prune_on_target_overlap)
        graph.targets = doc.ents
        matcher = self._ConText__matcher  # ConText keeps its matcher name-mangled and offers no accessor
        graph.modifiers = [ConTextModifier(matcher.rule_map[self.nlp.vocab[match_id].text], start, end, doc,
                                           max_scope=self.max_scope)
                           for match_id, start, end in matcher(doc)]
        graph.update_scopes()
        graph.apply_modifiers()
        for target, modifier in graph.edges:
            target._.modifiers += (modifier,)
        if self.context_attributes_mapping:
            self.set_context_attributes(graph.edges)
        doc._.context_graph = graph
        return doc


def register_factory() -> None:
    """Register :data:`FACTORY` with spaCy (once per process)."""
    if not Language.has_factory(FACTORY):
        Language.factory(FACTORY, func=ScopedConText)
