"""The entities of one Doc while the rules add to them, and the sentence lookups the rules share.

An entity is a dict ``{"_start", "_end" (spaCy token indices, end exclusive), "label", "rel": [(relation,
target entity)], ...}``; ``"_mod": True`` marks a modifier that goes when nothing keeps it, ``"_finding"``
an observation's finding. :func:`graph.extract.rules.document.radgraph_document` numbers them at the end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from graph.extract.rules.mentions import Mention, gap
from graph.extract.rules.sections import SECTION_ORDER
from graph.formats.radgraph import token_sections
from graph.vocabulary import Vocabulary

if TYPE_CHECKING:  # spaCy is the optional extract extra; the rules import it only where they run it
    from spacy.tokens import Doc, Span


@dataclass
class Draft:
    """Per-Doc state: ``sections[i]`` / ``sent_of[i]`` / ``lower[i]`` / ``texts[i]`` give token i's section,
    sentence number, lower-case text (``str.lower`` of the text, as spaCy's ``LOWER`` attribute:
    spacy/lang/lex_attrs.py) and text; ``text`` is the Doc's text (``Doc.text``, which spaCy joins anew from
    Token objects at each call); ``sent_bounds[n]`` is sentence n's (start, end) token
    range; ``obs_items`` pairs each kept observation mention with its entity; ``changed`` holds the
    ``id()`` of the observation entities that a change cue already modifies. The rules read the per-token
    lists rather than the Doc: each ``doc[i]`` builds a new Token object, millions per shard."""

    doc: Doc
    v: Vocabulary
    sections: list[str | None]
    sent_of: list[int]
    lower: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    text: str = ""
    sent_bounds: list[tuple[int, int]] = field(default_factory=list)
    mods: list[Mention] = field(default_factory=list)
    obs_tokens: set[int] = field(default_factory=set)
    entities: list[dict] = field(default_factory=list)
    obs_items: list[tuple[Mention, dict]] = field(default_factory=list)
    changed: set[int] = field(default_factory=set)

    @classmethod
    def start(cls, doc: Doc, v: Vocabulary) -> "Draft":
        """An empty draft with the Doc's section and sentence of every token.

        The token texts and the Doc's text come from the Doc's ORTH and SPACY (trailing space) arrays, as
        ``Token.text`` and ``Doc.text`` give them, without a Token object per token."""
        from spacy.attrs import ORTH, SPACY

        strings = doc.vocab.strings
        attrs = doc.to_array([ORTH, SPACY]).tolist() if len(doc) else []
        texts = [strings[orth] for orth, _ in attrs]
        text = "".join([t + " " if space else t for t, (_, space) in zip(texts, attrs, strict=True)])
        bounds = [(sent.start, sent.end) for sent in doc.sents]
        sent_of = [0] * len(doc)
        for n, (start, end) in enumerate(bounds):
            sent_of[start:end] = [n] * (end - start)
        return cls(doc, v, token_sections(texts, SECTION_ORDER), sent_of,
                   [t.lower() for t in texts], texts, text, bounds)

    def sentence(self, n: int) -> Span:
        """Sentence ``n`` as a Span of the Doc (the sentencizer's sentences are contiguous)."""
        return self.doc[self.sent_bounds[n][0]:self.sent_bounds[n][1]]

    def sentence_of(self, i: int) -> tuple[int, int]:
        """The (start, end) token range of token ``i``'s sentence."""
        return self.sent_bounds[self.sent_of[i]]

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


#: words that offer another reading of the same image feature ("atelectasis versus scarring"); ConText makes
#: the reading after them uncertain (graph.extract.rules.polarity), :func:`before_alternative` the one before
#: (the annotation guide's §3)
_ALTERNATIVES = {"versus", "vs", "vs."}
_ALTERNATIVE_GAP = 2


def before_alternative(d: Draft, o: Mention) -> bool:
    """The finding is followed, within :data:`_ALTERNATIVE_GAP` tokens of its sentence and before any other
    finding, by "versus" ("atelectasis versus scarring", "scarring, versus effusion")."""
    return _alternative_word(d, range(o.end, min(o.end + _ALTERNATIVE_GAP, d.sentence_of(o.start)[1])))


def is_alternative(d: Draft, o: Mention) -> bool:
    """The finding is one of two readings joined by "versus" (right before or after it): uncertain, yet a
    change cue of its sentence applies to it ("Stable left basilar atelectasis versus scarring": the feature
    is stable, whichever it is)."""
    start = d.sentence_of(o.start)[0]
    return before_alternative(d, o) or _alternative_word(
        d, range(o.start - 1, max(o.start - 1 - _ALTERNATIVE_GAP, start - 1), -1))


def _alternative_word(d: Draft, tokens: range) -> bool:
    """An alternative word among ``tokens`` (in order) before any finding."""
    for i in tokens:
        if d.lower[i] in _ALTERNATIVES:
            return True
        if i in d.obs_tokens:
            return False
    return False
