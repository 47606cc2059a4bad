"""The ``radgraph`` extractor: an adapter over the official ``radgraph`` package (Stanford-AIMI, MIT).

Install with the optional extra ``pip install 'cxrkg[radgraph]'`` (radgraph 0.1.18, which pulls torch,
transformers, huggingface_hub, h5py, nltk, dotmap; not part of the default install).

What the package does (read from its source, radgraph 0.1.18 ``radgraph/radgraph.py`` and ``utils.py``):

* ``RadGraph(model_type="radgraph-xl", model_cache_dir=DIR)`` looks for ``DIR/<model_type>/`` holding
  ``config.json``, ``vocabulary/`` and ``weights.th``; when that folder is missing or empty it downloads
  ``<model_type>.tar.gz`` from the Hugging Face repository ``StanfordAIMI/RRG_scorers`` and unpacks it
  there. The default DIR is ``appdirs.user_cache_dir("radgraph")/<package version>``. Its BERT tokenizer
  and encoder also come from the hub (``transformers`` cache; ``HF_HOME``, ``HF_HUB_OFFLINE=1``).
* ``model(list_of_texts)`` returns ``{"0": doc, "1": doc, ...}`` keyed by the position in the list, each
  ``doc = {"text": tokens joined by spaces, "entities": {"1": {"tokens", "label", "start_ix", "end_ix",
  "relations": [[type, target_id], ...]}}, "data_source": None, "data_split": "inference"}``; a document
  that fails post-processing is left out of the dict (the package prints the traceback and goes on).
  Labels: ``Anatomy::definitely present``, ``Observation::definitely present|absent|uncertain`` and
  ``Observation::measurement::...`` for RadGraph-XL; ``ANAT-DP``, ``OBS-DP`` ... for the v1 model.

This module keeps that loading code (:func:`load_model`), maps the output back to the caller's doc_keys and
converts labels to the RadGraph v1 spelling cxrkg writes (:func:`convert_output`), so the output of both
extractors reads the same in ``graph.formats.radgraph``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

from graph.errors import CxrkgError
from graph.formats.radgraph import document_entities
from graph.formats.radgraph.schema import V1_LABELS
from graph.records import InputError, Rejection
from graph.vocabulary import Vocabulary, vocabulary

MODEL_TYPES = ("radgraph", "radgraph-xl", "modern-radgraph-xl")
HUB_REPO = "StanfordAIMI/RRG_scorers"
PACKAGE_VERSION = "0.1.18"
#: (kind, polarity) -> its RadGraph v1 label (``("OBS", "absent")`` -> ``OBS-DA``)
_V1_SPELLING: dict[tuple[str, str | None], str] = {kp: label for label, kp in V1_LABELS.items()}


class RadGraphUnavailable(CxrkgError, RuntimeError):
    """The radgraph model cannot be loaded: package missing, or weights neither cached nor downloadable."""


class UnknownRadGraphModel(CxrkgError, ValueError):
    """A radgraph model type the package does not have (the line lists those it has)."""


def default_cache() -> Path:
    """``$CXRKG_RADGRAPH_CACHE``, else the package's own default (``appdirs.user_cache_dir("radgraph")/0.1.18``)."""
    from graph.settings import settings

    if (cache := settings().radgraph_cache) is not None:
        return cache
    try:
        from appdirs import user_cache_dir
    except ImportError:
        return Path.home() / ".cache" / "radgraph" / PACKAGE_VERSION
    return Path(user_cache_dir("radgraph")) / PACKAGE_VERSION


def load_model(model_type: str = "radgraph-xl", model_cache_dir: Path | None = None, batch_size: int = 1,
               cuda: int | None = None):
    """The package's ``RadGraph`` model, loaded from ``model_cache_dir/<model_type>/`` (downloaded there by
    the package when missing and the hub is reachable).

    Raises:
        UnknownRadGraphModel: unknown model type.
        RadGraphUnavailable: the package is not installed, or the weights are not cached and cannot be
            downloaded (the message says how to pre-seed the cache;
            docs/extraction.md#what-the-extractor-does has the steps).
    """
    if model_type not in MODEL_TYPES:
        raise UnknownRadGraphModel(f"unknown radgraph model {model_type!r}: choose one of {', '.join(MODEL_TYPES)}")
    try:
        from radgraph import RadGraph
    except ImportError as exc:
        # make install puts the package in without its model's dependencies (its reward functions score reports)
        raise RadGraphUnavailable(f"the radgraph extractor needs the radgraph package and its model's dependencies "
                                  f"(missing: {exc.name or exc}): pip install 'cxrkg[radgraph]'") from exc
    cache = Path(model_cache_dir) if model_cache_dir else default_cache()
    model_dir = cache / model_type
    try:
        return RadGraph(model_type=model_type, model_cache_dir=str(cache), batch_size=batch_size, cuda=cuda)
    except Exception as exc:  # the package wraps hub errors in a bare Exception
        if model_dir.exists() and not any(model_dir.iterdir()):
            model_dir.rmdir()  # the package creates it before downloading; leave no empty folder behind
        raise RadGraphUnavailable(
            f"cannot load radgraph model {model_type!r} from {model_dir} ({exc}). Offline, pre-seed it: copy "
            f"{model_type}.tar.gz from the Hugging Face repository {HUB_REPO} and unpack it into {model_dir} "
            "(config.json, vocabulary/, weights.th), and put the BERT tokenizer/encoder it names in the "
            "transformers cache with HF_HUB_OFFLINE=1") from exc


def convert_document(doc: Mapping, data_source: str, vocab: Vocabulary | None = None, key: str = "0",
                     file: str = "radgraph") -> dict:
    """One package document -> cxrkg's RadGraph v1 document: checked as ingestion checks a document
    (:func:`~graph.formats.radgraph.document_entities`), each entity's tokens those of the text at its span,
    and its label in RadGraph v1's spelling where that has one (``Anatomy::definitely absent`` has none and is
    kept).

    Args:
        doc: ``{"text", "entities"}`` as the package returns it.
        data_source: the document's ``data_source`` (the model type).
        vocab: the vocabulary whose change labels are known (the packaged one when None).
        key: the doc_key a rejection names.
        file: the file name a rejection names.

    Raises:
        InputError: a fault of :func:`~graph.formats.radgraph.document_entities`, or tokens that differ
            from the text at the entity's span (field ``entities.<id>.tokens``).
    """
    text, entities = document_entities(key, doc, file, vocab or vocabulary())
    labels = {str(eid): ent["label"] for eid, ent in doc["entities"].items()}  # each a known label now
    tokens = text.split(" ")
    out = {}
    for eid, ent in entities.items():
        if " ".join(tokens[ent.start:ent.end + 1]) != ent.tokens:
            raise InputError(file, key, f"entities.{eid}.tokens",
                             f"{ent.tokens!r} differ from the text at {ent.start}..{ent.end}")
        label = _V1_SPELLING.get((ent.kind, ent.polarity)) or labels[eid]
        out[eid] = {"tokens": ent.tokens, "label": label, "start_ix": ent.start, "end_ix": ent.end,
                    "relations": [list(r) for r in ent.relations]}
    return {"text": text, "entities": out, "data_source": data_source, "data_split": "inference"}


def convert_output(output: Mapping[str, Mapping], keys: Sequence[str], data_source: str = "radgraph-xl",
                   file: str = "radgraph", vocab: Vocabulary | None = None) -> Iterator[tuple[str, dict | Rejection]]:
    """Map one ``model(texts)`` result (keyed ``"0"``.. by position) back to ``keys``; a missing or
    malformed document becomes a Rejection naming the doc_key (and the field, for a malformed one)."""
    for i, key in enumerate(keys):
        doc = output.get(str(i))
        if doc is None:
            yield key, Rejection(file, key, None, "the radgraph model returned no output for this report")
            continue
        try:
            yield key, convert_document(doc, data_source, vocab, key, file)
        except InputError as exc:
            yield key, Rejection.from_error(exc)


class RadGraphExtractor:
    """Callable extractor: ``[(doc_key, text or {section: text})] -> (doc_key, doc | Rejection)``.

    Sections are joined with their headers (``FINDINGS: ...``) as for the rules extractor; the package
    tokenizes the text itself (wordpunct), so the headers become ``FINDINGS :`` tokens.
    """

    name = "radgraph"

    def __init__(self, model_type: str = "radgraph-xl", model_cache_dir: Path | None = None, batch_size: int = 8,
                 cuda: int | None = None, model=None):
        self.model_type = model_type
        self.batch_size = batch_size
        self.model = model if model is not None else load_model(model_type, model_cache_dir, cuda=cuda)

    def __call__(self, items: Iterable[tuple[str, str | Mapping[str, str]]]) -> Iterator[tuple[str, dict | Rejection]]:
        from graph.extract.rules import compose_text

        batch: list[tuple[str, str]] = []
        for key, report in items:
            batch.append((key, compose_text(report)))
            if len(batch) >= self.batch_size:
                yield from self._run(batch)
                batch = []
        if batch:
            yield from self._run(batch)

    def _run(self, batch: list[tuple[str, str]]):
        output = self.model([text for _, text in batch])
        yield from convert_output(output, [k for k, _ in batch], self.model_type)
