"""The entities of one Doc while the rules add to them, and the sentence lookups the rules share.

An entity is a dict ``{"_start", "_end" (spaCy token indices, end exclusive), "label", "rel": [(relation,
target entity)], ...}``; ``"_mod": True`` marks a modifier that goes when nothing keeps it, ``"_finding"``
an observation's finding. :func:`graph.extract.rules.document.radgraph_document` numbers them at the end.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graph.extract.rules.mentions import Mention, gap
from graph.extract.rules.sections import SECTION_ORDER
from graph.formats.radgraph import token_sections
from graph.vocabulary import Vocabulary


@dataclass
class Draft:
    """Per-Doc state: ``sections[i]`` / ``sent_of[i]`` give token i's section and sentence number;
    ``obs_items`` pairs each kept observation mention with its entity; ``changed`` holds the ``id()`` of the
    observation entities that a change cue already modifies."""

    doc: object
    v: Vocabulary
    sections: list[str | None]
    sent_of: list[int]
    mods: list[Mention] = field(default_factory=list)
    obs_tokens: set[int] = field(default_factory=set)
    entities: list[dict] = field(default_factory=list)
    obs_items: list[tuple[Mention, dict]] = field(default_factory=list)
    changed: set[int] = field(default_factory=set)

    @classmethod
    def start(cls, doc, v: Vocabulary) -> "Draft":
        """An empty draft with the Doc's section and sentence of every token."""
        sections = token_sections([t.text for t in doc], SECTION_ORDER)
        sent_of = [0] * len(doc)
        for n, sent in enumerate(doc.sents):
            for i in range(sent.start, sent.end):
                sent_of[i] = n
        return cls(doc, v, sections, sent_of)

    def drop(self, dropped: set[int]) -> None:
        """Remove the observations whose entity ``id()`` is in ``dropped``, the relations to them and the
        modifiers left without a target."""
        if not dropped:
            return
        self.obs_items = [(o, it) for o, it in self.obs_items if id(it) not in dropped]
        entities = [e for e in self.entities if id(e) not in dropped]
        for e in entities:
            e["rel"] = [(r, tgt) for r, tgt in e["rel"] if id(tgt) not in dropped]
        targeted = {id(tgt) for e in entities for _, tgt in e["rel"]}
        self.entities = [e for e in entities if not (e.get("_mod") and not e["rel"] and id(e) not in targeted)]

    def same_sentence(self, m: Mention) -> list[tuple[Mention, dict]]:
        """The observation items in ``m``'s sentence, in text order."""
        return [(o, it) for o, it in self.obs_items if self.sent_of[o.start] == self.sent_of[m.start]]

    def nearest(self, m: Mention, max_gap: int, only_after: bool = False) -> tuple[Mention, dict] | None:
        """The observation item of ``m``'s sentence at most ``max_gap`` tokens away (after ``m`` only, if
        asked); on a tie the one after ``m`` wins."""
        cands = [(o, it) for o, it in self.same_sentence(m)
                 if gap(m, o) <= max_gap and (not only_after or o.start >= m.end)]
        return min(cands, key=lambda p: (gap(m, p[0]), p[0].start < m.start)) if cands else None
