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
from graph.records import Rejection

MODEL_TYPES = ("radgraph", "radgraph-xl", "modern-radgraph-xl")
HUB_REPO = "StanfordAIMI/RRG_scorers"
PACKAGE_VERSION = "0.1.18"
_LABELS = {
    "Anatomy::definitely present": "ANAT-DP",
    "Observation::definitely present": "OBS-DP",
    "Observation::definitely absent": "OBS-DA",
    "Observation::uncertain": "OBS-U",
    "Observation::measurement::definitely present": "OBS-DP",
    "Observation::measurement::definitely absent": "OBS-DA",
    "Observation::measurement::uncertain": "OBS-U",
}
_V1 = {"ANAT-DP", "OBS-DP", "OBS-DA", "OBS-U"}


class RadGraphUnavailable(CxrkgError, RuntimeError):
    """The radgraph model cannot be loaded: package missing, or weights neither cached nor downloadable."""


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
        ValueError: unknown model type.
        RadGraphUnavailable: the package is not installed, or the weights are not cached and cannot be
            downloaded (the message says how to pre-seed the cache;
            docs/extraction.md#what-the-extractor-does has the steps).
    """
    if model_type not in MODEL_TYPES:
        raise ValueError(f"unknown radgraph model {model_type!r}: choose one of {', '.join(MODEL_TYPES)}")
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


def convert_document(doc: Mapping, data_source: str) -> dict:
    """One package document -> cxrkg's RadGraph v1 document (labels mapped, spans checked).

    Raises:
        ValueError: an unknown label, a span outside the text or whose tokens differ from the text, or a
            relation to a missing entity.
    """
    text = doc.get("text")
    if not isinstance(text, str):
        raise ValueError("no text")
    tokens = text.split(" ")
    entities = doc.get("entities") or {}
    out = {}
    for eid, ent in entities.items():
        label = ent.get("label")
        if label in _LABELS:
            label = _LABELS[label]
        elif label not in _V1 and label != "Anatomy::definitely absent":
            raise ValueError(f"entity {eid}: unknown label {label!r}")
        s, e = ent.get("start_ix"), ent.get("end_ix")
        if not isinstance(s, int) or not isinstance(e, int) or not 0 <= s <= e < len(tokens):
            raise ValueError(f"entity {eid}: span {s!r}..{e!r} outside the {len(tokens)} tokens")
        if " ".join(tokens[s:e + 1]) != ent.get("tokens"):
            raise ValueError(f"entity {eid}: tokens {ent.get('tokens')!r} differ from the text at {s}..{e}")
        rels = [[str(r), str(t)] for r, t in ent.get("relations", [])]
        for _, t in rels:
            if t not in entities:
                raise ValueError(f"entity {eid}: relation to missing entity {t!r}")
        out[str(eid)] = {"tokens": ent["tokens"], "label": label, "start_ix": s, "end_ix": e, "relations": rels}
    return {"text": text, "entities": out, "data_source": data_source, "data_split": "inference"}


def convert_output(output: Mapping[str, Mapping], keys: Sequence[str], data_source: str = "radgraph-xl",
                   file: str = "radgraph") -> Iterator[tuple[str, dict | Rejection]]:
    """Map one ``model(texts)`` result (keyed ``"0"``.. by position) back to ``keys``; a missing or
    malformed document becomes a Rejection naming the doc_key."""
    for i, key in enumerate(keys):
        doc = output.get(str(i))
        if doc is None:
            yield key, Rejection(file, key, None, "the radgraph model returned no output for this report")
            continue
        try:
            yield key, convert_document(doc, data_source)
        except ValueError as exc:
            yield key, Rejection(file, key, "entities", f"radgraph output: {exc}")


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
