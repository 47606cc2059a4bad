"""Reports through the rules extractor: streamed ``(doc_key, RadGraph document)`` pairs (``nlp.pipe``),
one report, or one RadGraph JSON file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from graph.extract.rules.document import DATA_SOURCE, doc_to_radgraph
from graph.extract.rules.sections import compose_text
from graph.extract.rules.spacy_pipeline import build_pipeline
from graph.vocabulary import Vocabulary, vocabulary


def extract(items: Iterable[tuple[str, str | Mapping[str, str]]], v: Vocabulary | None = None,
            data_source: str = DATA_SOURCE, batch_size: int = 64) -> Iterator[tuple[str, dict]]:
    """Stream ``(doc_key, RadGraph document)`` for ``(doc_key, text or {section: text})`` items (nlp.pipe)."""
    v = v or vocabulary()
    nlp = build_pipeline(v)
    keyed = ((compose_text(report), key) for key, report in items)
    for doc, key in nlp.pipe(keyed, as_tuples=True, batch_size=batch_size):
        yield key, doc_to_radgraph(doc, v, data_source)


def extract_text(text: str | Mapping[str, str], doc_key: str = "doc", v: Vocabulary | None = None) -> dict:
    """``{doc_key: document}`` for one report."""
    return dict(extract([(doc_key, text)], v))


def write_radgraph_json(items: Iterable[tuple[str, str | Mapping[str, str]]], path: Path,
                        v: Vocabulary | None = None) -> int:
    """Extract and write one RadGraph JSON object ``{doc_key: doc}`` to ``path``, streamed; returns the count."""
    n = 0
    with Path(path).open("w", encoding="utf-8") as fh:
        fh.write("{")
        for key, doc in extract(items, v):
            fh.write(("," if n else "") + "\n" + json.dumps(key) + ": " + json.dumps(doc))
            n += 1
        fh.write("\n}\n")
    return n
