"""The documents of a RadGraph-family file in every spelling, one ``(doc_key, doc)`` at a time.

Spellings (docs/formats.md §2-§3): ``{doc_key: doc}`` (RadGraph v1 / RadGraph2, the ``radgraph`` package
keyed ``"0"``, ``"1"`` ...), its ``test.json`` variant with ``labeler_1`` / ``labeler_2`` per document, a list
of the package's outputs (one ``{"0": doc}`` per call, as Stanford-AIMI/radgraph's ``tests/`` store them), the
package's processed-annotations list, and RadGraph-XL DyGIE JSONL (gold ``ner`` / ``relations``, or a DyGIE
prediction file's ``predicted_ner`` / ``predicted_relations`` with their scores). Every doc is normalised to
``{"text", "entities"}`` (v1-style entities) or is the :class:`~graph.records.InputError` that rejects it; a
doc read from a variant spelling also carries :data:`VARIANT` (its name, counted in ``ParsedFile.variants``).
:func:`iter_documents` reads a JSON file whole; :mod:`graph.formats.radgraph.stream` streams one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from graph.records import InputError

#: The key a normalised doc carries when it was read from a variant spelling: the variant's name.
VARIANT = "cxrkg_variant"
TEST_LABELERS = "radgraph test.json: labeler_1 read, labeler_2 not"
PACKAGE_OUTPUTS = "radgraph package: list of per-call outputs"
PROCESSED_ANNOTATIONS = "radgraph package: processed-annotations list"
DYGIE_PREDICTIONS = "radgraph-xl DyGIE: predicted_ner / predicted_relations read"


def _jsonl_doc(line: dict, file: str) -> tuple[str, str, dict, str | None]:
    """Convert one DyGIE-style RadGraph-XL line to (doc_key, text, v1-style entities, variant or None).

    A gold line has ``ner`` (and ``relations``, absent meaning none); a DyGIE prediction line has
    ``predicted_ner`` / ``predicted_relations`` instead, each item followed by its logit and probability
    (read as the gold items, the scores dropped; the ``radgraph`` package reads its predictions so).
    """
    doc_key = str(line.get("doc_key", ""))
    variant = None
    ner_key, rel_key = "ner", "relations"
    if "ner" not in line and "predicted_ner" in line:
        ner_key, rel_key, variant = "predicted_ner", "predicted_relations", DYGIE_PREDICTIONS
    sentences, ner, rels = line.get("sentences"), line.get(ner_key), line.get(rel_key) or []
    if not isinstance(sentences, list) or not isinstance(ner, list):
        raise InputError(file, doc_key, "sentences" if not isinstance(sentences, list) else ner_key,
                         "expected a list")
    tokens = [t for sent in sentences for t in sent]
    entities: dict[str, dict[str, Any]] = {}
    by_span: dict[tuple[int, int], str] = {}
    for sent in ner:
        for span in sent:
            s, e, label = span if variant is None else span[:3]
            eid = str(len(entities) + 1)
            entities[eid] = {"tokens": " ".join(tokens[s:e + 1]), "label": label, "start_ix": s, "end_ix": e, "relations": []}
            by_span[(s, e)] = eid
    for sent in rels:
        for relation in sent:
            s1, e1, s2, e2, label = relation if variant is None else relation[:5]
            if (s1, e1) not in by_span or (s2, e2) not in by_span:
                raise InputError(file, doc_key, rel_key, f"{label} relation between spans that are not entities")
            entities[by_span[(s1, e1)]]["relations"].append([label, by_span[(s2, e2)]])
    return doc_key, " ".join(tokens), entities, variant


def jsonl_documents(path: Path, file: str) -> Iterator[tuple[str, Any]]:
    """JSONL, one line at a time: each line is a record of its own (an unreadable line is rejected alone)."""
    with path.open("rb") as fh:
        for n, raw_line in enumerate(fh, start=1):
            if not raw_line.strip():
                continue
            try:
                line = json.loads(raw_line)
                doc_key, text, ents, variant = _jsonl_doc(line, file)
                doc = {"text": text, "entities": ents} | ({VARIANT: variant} if variant else {})
                yield doc_key or f"line {n}", doc
            except json.JSONDecodeError as exc:
                yield f"line {n}", InputError(file, f"line {n}", None, f"invalid JSON: {exc}")
            except InputError as exc:
                yield exc.record or f"line {n}", exc
            except (TypeError, ValueError) as exc:
                yield f"line {n}", InputError(file, f"line {n}", "ner", f"malformed span: {exc}")


def list_documents(n: int, item: Any, file: str) -> Iterator[tuple[str, Any]]:
    """The documents of item ``n`` of a JSON list, as ``(doc_key, doc or InputError)``.

    Two lists are known: the package's processed-annotations list (items ``{report_id, report_text,
    processed_annotations: {radgraph_annotations: {"0": doc}}}``, keyed by report_id), and a list of the
    package's outputs, one ``{"0": doc}`` per call (keyed by the item's position ``n``, as the package keys
    its inputs; an item of several documents ``{"0": doc, "1": doc}`` is keyed ``n.0``, ``n.1``).
    """
    if isinstance(item, dict) and "report_id" not in item and item and all(
            isinstance(doc, dict) and ("text" in doc or "entities" in doc) for doc in item.values()):
        for key, doc in item.items():
            yield (str(n) if len(item) == 1 else f"{n}.{key}"), {**doc, VARIANT: PACKAGE_OUTPUTS}
        return
    if not isinstance(item, dict) or "report_id" not in item:
        yield f"[{n}]", InputError(file, f"[{n}]", "report_id", "list items need report_id (a processed-"
                                   "annotations list) or are {\"0\": doc} (a list of the package's outputs)")
        return
    doc = (item.get("processed_annotations") or {}).get("radgraph_annotations", {}).get("0")
    yield str(item["report_id"]), {**doc, VARIANT: PROCESSED_ANNOTATIONS} if isinstance(doc, dict) else \
        doc if doc is not None else InputError(file, str(item["report_id"]),
                                               "processed_annotations.radgraph_annotations.0", "missing")


def with_labeler_1(doc: Any) -> Any:
    """The ``test.json`` variant: a document without ``entities`` but with ``labeler_1`` reads labeler_1."""
    if isinstance(doc, dict) and "entities" not in doc and "labeler_1" in doc:
        return {**doc, "entities": (doc["labeler_1"] or {}).get("entities"), VARIANT: TEST_LABELERS}
    return doc


def iter_documents(path: Path, file: str, data: bytes | None = None) -> Iterator[tuple[str, Any]]:
    """Yield ``(doc_key, doc)`` with doc = ``{"text", "entities"}`` or an InputError for a bad record.

    Reads a JSON file whole (see :func:`graph.formats.radgraph.stream.stream_documents` for big files); JSONL line by line.

    Args:
        path: the file.
        file: the file's name in rejections.
        data: the JSON file's bytes when the caller read them already (else they are read from ``path``).

    Raises:
        InputError: the whole file is unreadable (invalid JSON, unexpected top level).
    """
    if path.suffix == ".jsonl":
        yield from jsonl_documents(path, file)
        return
    try:
        raw = json.loads(path.read_bytes() if data is None else data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(file, None, None, f"invalid JSON: {exc}") from exc
    if isinstance(raw, list):  # the radgraph package's processed annotations, or a list of its outputs
        for n, item in enumerate(raw):
            yield from list_documents(n, item, file)
        return
    if not isinstance(raw, dict):
        raise InputError(file, None, None, f"top level is {type(raw).__name__}, expected an object or list")
    for doc_key, doc in raw.items():
        yield doc_key, with_labeler_1(doc)
