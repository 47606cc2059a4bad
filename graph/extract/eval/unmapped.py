"""What the rules extractor leaves unread in a corpus: the phrases of report text that no vocabulary entry,
cue or normal statement covers, counted by frequency, so that vocabulary gaps show
(``cxrkg eval extract --unmapped``).

The pipeline is spaCy's blank English one (no part-of-speech tagger, so no noun chunker): a candidate
phrase is a maximal run of at most :data:`MAX_WORDS` alphabetic words inside a sentence that no matched
span covers (findings, anatomy, side, severity, change, normal-statement and ConText cue spans) and that
holds no stop word (spaCy's English list), no redacted ``XXXX`` and no number; runs made only of the
words reports use around any finding (:data:`REPORT_WORDS`: "seen", "noted", "views", ...) are dropped.
Only the findings and impression sections of sectioned reports are read.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Mapping

from graph.vocabulary import Vocabulary, vocabulary

MAX_WORDS = 4
#: words that frame any statement rather than name a finding (they alone make no phrase)
REPORT_WORDS = frozenset(
    "seen noted identified demonstrated visualized visible present appear appears appearance evidence "
    "view views lateral frontal pa ap portable study studies exam examination radiograph radiographs film "
    "films image images chest limits size otherwise compared comparison prior previous interval findings "
    "finding acute active significant definite focal mild mildly small large moderate minimal slightly "
    "overlying projecting consistent likely possibly may represent representing suggest".split())
_SECTIONS = ("findings", "impression")


def unmapped_phrases(reports: Iterable[str | Mapping[str, str]], v: Vocabulary | None = None) -> Counter:
    """Phrase (lower case) -> number of occurrences over ``reports`` (texts, or ``{section: text}``).

    Raises:
        ImportError: spaCy / medspaCy are not installed (the ``extract`` extra).
    """
    from graph.extract.rules import build_pipeline

    v = v or vocabulary()
    nlp = build_pipeline(v)
    stop = nlp.Defaults.stop_words
    counts: Counter = Counter()
    for doc in nlp.pipe(_texts(reports), batch_size=64):
        covered = _covered(doc)
        for sent in doc.sents:
            run: list[str] = []
            for t in list(sent) + [None]:
                word = t.lower_ if t is not None else ""
                if t is not None and t.is_alpha and t.i not in covered and word not in stop and word != "xxxx":
                    run.append(word)
                    continue
                _count_run(run, counts)
                run = []
    return counts


def _texts(reports: Iterable[str | Mapping[str, str]]) -> Iterable[str]:
    for r in reports:
        if isinstance(r, str):
            yield r
        else:
            yield " ".join(r[k] for k in r if k.lower() in _SECTIONS and r[k])


def _covered(doc) -> set[int]:
    """Token indices inside any matched span: findings, the modifier and normal-statement groups, and the
    ConText cues."""
    spans = list(doc.ents) + list(doc.spans.get("cxr_modifiers", [])) + list(doc.spans.get("cxr_normals", []))
    graph = doc._.context_graph
    covered = {i for s in spans for i in range(s.start, s.end)}
    for m in graph.modifiers if graph is not None else []:
        start, end = m.modifier_span
        covered.update(range(start, end))
    return covered


def _count_run(run: list[str], counts: Counter) -> None:
    """Count a run of uncovered content words in pieces of at most :data:`MAX_WORDS`, unless it holds only
    :data:`REPORT_WORDS`."""
    for k in range(0, len(run), MAX_WORDS):
        piece = run[k:k + MAX_WORDS]
        if any(w not in REPORT_WORDS for w in piece):
            counts[" ".join(piece)] += 1


def without_cui(v: Vocabulary | None = None) -> dict[str, list[str]]:
    """The vocabulary entries that carry no UMLS CUI: ``{"findings": [...], "regions": [...]}``, names in
    vocabulary order, findings as ``category: name``. cxrkg writes a CUI only from a source it can cite
    (graph/vocab/chest_xray.yaml's header), so this list is the gap left for a UMLS-licensed source."""
    v = v or vocabulary()
    return {"findings": [f"{f.category}: {f.name}" for f in v.findings.values() if not f.cuis],
            "regions": [r.name for r in v.regions.values() if not r.cuis]}


def format_unmapped(counts: Counter, reports: int, top: int = 40, missing_cui: dict[str, list[str]] | None = None) -> str:
    """The ``top`` phrases by frequency, one per row (fits 80 columns), then the vocabulary entries without a
    CUI (:func:`without_cui`), when given."""
    rows = [f"unmapped phrases in {reports:,} reports ({len(counts):,} distinct); the {min(top, len(counts))} "
            f"most frequent:", f"{'count':>7}  phrase"]
    rows += [f"{n:>7}  {phrase[:70]}" for phrase, n in counts.most_common(top)]
    for kind, names in (missing_cui or {}).items():
        rows += ["", f"{kind} of the vocabulary without a UMLS CUI ({len(names)}):"] + [f"  {n}" for n in names]
    return "\n".join(rows)
