"""The spaCy ``Language`` of the rules extractor: spaCy's blank English tokenizer (hyphen / slash words kept
whole), a sentencizer, three medspaCy target matchers (:mod:`graph.extract.rules.target_spans`: findings as
``doc.ents``; anatomy, side, severity, change and "suggestive of" cues as the ``cxr_modifiers`` span group; the
subjects and predicates of normal statements as the ``cxr_normals`` span group) and ConText
(:mod:`graph.extract.rules.polarity`). Findings, anatomy phrases and severity words come from
:func:`graph.vocabulary.vocabulary`; change cues from :mod:`graph.extract.rules.changes.cues`."""

from __future__ import annotations

import importlib.abc
import sys

from graph.errors import CxrkgError
from graph.extract.rules.changes.cues import CHANGE_CUES
from graph.extract.rules.mentions import SIDE_COORDINATIONS, SIDE_WORDS, quantity_next_to
from graph.extract.rules.normals import normal_rules
from graph.extract.rules.phrase_patterns import patterns_to_phrases
from graph.extract.rules.polarity import add_context
from graph.extract.rules.target_spans import FACTORY, register_factory
from graph.vocabulary import Vocabulary, normalise_phrase, vocabulary


class ExtractorUnavailable(CxrkgError, ImportError):
    """The rules extractor's libraries (spaCy, medspaCy: the ``extract`` extra) are not installed."""

SUGGESTIVE_CUES = ("suggestive of", "consistent with", "compatible with", "may represent", "could represent",
                   "likely represents", "likely representing", "representing", "represents", "due to",
                   "concerning for", "secondary to", "reflecting", "reflects")
#: adverbs of degree allowed inside a predicate ("the heart is slightly large")
_DEGREE_WORDS = ("slightly", "mildly", "moderately", "markedly", "very", "quite", "somewhat", "again", "still")

_PIPELINES: dict[int, object] = {}


def build_pipeline(v: Vocabulary | None = None):
    """The spaCy ``Language`` (built once per vocabulary): tokenizer (hyphen / slash words kept whole),
    sentencizer, target matchers, ConText."""
    v = v or vocabulary()
    if id(v) not in _PIPELINES:
        _PIPELINES[id(v)] = _build(v)
    return _PIPELINES[id(v)]


def _require_spacy():
    """spaCy and medspaCy, imported with PyTorch hidden when no one has imported it yet: spaCy's thinc
    imports PyTorch whenever it is installed (the ``gnn`` extra installs it), about 500 MB of resident memory
    per process, though a blank pipeline has no model to run on it. PyTorch stays importable afterwards
    (the ``radgraph`` extractor and the GNN import it themselves); only thinc's own PyTorch support is off
    in a process that imported spaCy this way."""
    hider = None if "torch" in sys.modules else _HideTorch()
    if hider:
        sys.meta_path.insert(0, hider)
    try:
        import medspacy  # noqa: F401
        import spacy
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ExtractorUnavailable("the rules extractor needs spaCy and medspaCy: pip install 'cxrkg[extract]'") \
            from exc
    finally:
        if hider:
            sys.meta_path.remove(hider)
    return spacy


class _HideTorch(importlib.abc.MetaPathFinder):
    """An import finder under which ``import torch`` fails as if PyTorch were not installed."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r} (hidden while spaCy is imported)", name=name)
        return None


def _build(v: Vocabulary):
    spacy = _require_spacy()
    nlp = spacy.blank("en")
    _keep_words_whole(nlp)
    nlp.add_pipe("sentencizer", config={"punct_chars": [".", "?", "!", ":", ";", "..", "..."]})
    register_factory()
    findings = nlp.add_pipe(FACTORY, name="cxr_findings")
    findings.add(_finding_rules(v) + _predicate_rules(v))
    findings.keep = _subject_beside_quantity(v)
    mods = nlp.add_pipe(FACTORY, name="cxr_modifiers", config={"span_group": "cxr_modifiers", "prune": False})
    mods.add(_modifier_rules(v))
    normals = nlp.add_pipe(FACTORY, name="cxr_normals", config={"span_group": "cxr_normals", "prune": False})
    normals.add(normal_rules(v))
    context = add_context(nlp)
    for component in (findings, mods, normals, context):
        patterns_to_phrases(component, nlp)
    return nlp


#: a period between a word and the capitalised word of the next sentence, the space after it missing ("within
#: normal limits.The lungs are clear": the annotation guide's §1 cuts only at a period before whitespace, but the
#: period still ends a sentence for the reader; spaCy's own rule for it went with the infixes dropped below)
_RUN_ON_PERIOD = r"(?<=[a-zA-Z]{2})\.(?=[A-Z][a-z])"


def _keep_words_whole(nlp) -> None:
    """Hyphenated and slashed words stay whole ("left-sided", "and/or"), except two words joined by a slash
    ("atelectasis/scarring"), which are two findings; a period with no space after it between two sentences is
    a token of its own (:data:`_RUN_ON_PERIOD`)."""
    from spacy.util import compile_infix_regex

    infixes = [p for p in nlp.Defaults.infixes if "-" not in p and "/" not in p] + [r"(?<=[a-zA-Z]{3})/(?=[a-zA-Z]{3})",
                                                                                  _RUN_ON_PERIOD]
    nlp.tokenizer.infix_finditer = compile_infix_regex(infixes).finditer


def _finding_rules(v: Vocabulary) -> list:
    """One OBS rule per surface form of a finding (name, synonyms and change subjects) that the vocabulary maps
    back to it."""
    from medspacy.target_matcher import TargetRule

    rules = []
    for f in v.findings.values():
        for form in dict.fromkeys(normalise_phrase(x) for x in (f.name, *f.synonyms, *f.subjects)):
            if form and v.finding_for(form) == f.name:
                rules.append(TargetRule(form, "OBS", attributes=None, metadata={"finding": f.name}))
    return rules


def _subject_beside_quantity(v: Vocabulary):
    """The findings matcher's test: a change subject of the vocabulary ("heart", "heart size": nearly every report
    names them as normal structures) is kept only beside a quantity word
    (:func:`graph.extract.rules.mentions.quantity_next_to`), as :func:`~graph.extract.rules.mentions.has_subject`
    would keep it later, so that ConText and the rules never see the others."""
    forms = {normalise_phrase(s) for f in v.findings.values() for s in f.subjects}

    def keep(span) -> bool:
        if normalise_phrase(span.text) not in forms:
            return True
        sent = span.sent
        return quantity_next_to(span.start, span.end, _LowerTokens(span.doc), (sent.start, sent.end))

    return keep


class _LowerTokens:
    """A Doc's lower-case token texts, by index, without a list built per Doc."""

    def __init__(self, doc) -> None:
        self.doc = doc

    def __getitem__(self, i: int) -> str:
        return self.doc[i].lower_


def _predicate_rules(v: Vocabulary) -> list:
    """Findings named by a predicate (label OBS_PRED; the observation is the predicate's last word).

    "the heart is large": "large" is a severity word elsewhere, so only this predicate names cardiomegaly;
    the observation is the word "large", located at the heart (RadGraph's "heart" + "large", which the
    vocabulary composes as "heart large")."""
    from medspacy.target_matcher import TargetRule

    return [TargetRule("heart is large", "OBS_PRED", pattern=[
        {"LOWER": {"IN": ["heart", "cardiac"]}}, {"LOWER": {"IN": ["size", "silhouette", "shadow", "xxxx"]}, "OP": "?"},
        {"LOWER": {"IN": ["is", "remains", "appears", "appear", "was"]}},
        {"LOWER": {"IN": list(_DEGREE_WORDS)}, "OP": "?"}, {"LOWER": "large"}],
        metadata={"finding": v.finding_for("heart large")})]


def _modifier_rules(v: Vocabulary) -> list:
    """ANAT (every region name and synonym), SIDE, SEV (the vocabulary's severity words), CHANGE and SUGG rules."""
    from medspacy.target_matcher import TargetRule

    return ([TargetRule(form, "ANAT") for form in _region_forms(v)]
            + [TargetRule(w, "SIDE") for w in SIDE_WORDS + SIDE_COORDINATIONS]
            + [TargetRule(w, "SEV") for w in v.severity_scores]
            + [TargetRule(w, "CHANGE") for w in CHANGE_CUES]
            + [TargetRule(w, "SUGG") for w in SUGGESTIVE_CUES])


def _region_forms(v: Vocabulary) -> list[str]:
    """Every anatomy surface form the vocabulary knows (region names and region synonyms)."""
    return sorted(set(getattr(v, "_region_forms", {})) | {normalise_phrase(n) for n in v.regions})
