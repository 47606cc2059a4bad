"""The ``rules`` extractor: report text -> RadGraph v1 / RadGraph2 JSON, offline, no model weights.

Built on spaCy's blank English pipeline and medspaCy: three medspaCy target matchers (findings as
``doc.ents``; anatomy, side, severity, change and "suggestive of" cues, and the parts of normal statements,
as span groups) and
medspaCy's ConText (``cxr_context``, :mod:`graph.extract.rules.scoped_context`) for negation / uncertainty /
history. Findings, anatomy phrases and severity words come
from :func:`graph.vocabulary.vocabulary` (one source of truth); only the change cues, side words and the few
ConText rule additions are defined in this package.

Output, per document (exactly what :func:`graph.formats.radgraph.parse_radgraph` reads)::

    {"text": "FINDINGS : Small left pleural effusion , increased .",   # spaCy tokens joined by one space
     "entities": {"1": {"tokens": "Small", "label": "OBS-DP", "start_ix": 2, "end_ix": 2,
                        "relations": [["modify", "3"]]}, ...},
     "data_source": "cxrkg-rules", "data_split": "inference"}

Labels: ANAT-DP, OBS-DP / OBS-U / OBS-DA (ConText: negated -> OBS-DA; possible, hypothetical, or stated
in the indication / history section -> OBS-U; historical stays OBS-DP; family history and the comparison
section are skipped), severity words as OBS-DP ``modify`` -> observation, a side word before/after a
finding as ANAT-DP ``modify`` -> observation, ``located_at`` observation -> nearest anatomy phrase in the
sentence, ``suggestive_of`` between observations around "suggestive of" / "consistent with" cues, and
RadGraph2 change entities (CHAN-NC, CHAN-CON-AP/WOR/IMP/RES, CHAN-DEV-AP/PLACE/DISA) ``modify`` -> the
observation they describe (how a cue finds it, including sentences that refer back such as "Unchanged.":
:func:`doc_to_radgraph`), and the direction of a scoliosis curve ("dextro", "convex to the right") as an
ANAT-DP ``modify`` (:func:`curve_side`). Sections stay in the text as ``FINDINGS :`` headers.

Modules, in the order a report meets them:
    sections: report text and its section headers (:func:`compose_text`).
    spacy_pipeline: the spaCy / medspaCy ``Language`` and its target rules (:func:`build_pipeline`);
        target_spans: the target matchers, which set ``doc.ents`` or a span group once per Doc.
    polarity: the ConText rules and the label they give a finding.
    mentions: the matched spans of a Doc, overlaps resolved.
    draft: the entities of one Doc while the rules below add to them.
    observations: observation entities, composition with the word before, severity, ``suggestive_of``.
    laterality: anatomy (``located_at``), side words, a place for sided findings stated without one.
    changes: the change cues, their classes and links (rules 1-3), the sentence classes of issue 33;
    refer_back: rule 4.
    curves: the direction of a spinal curve.
    global_statements: "No acute cardiopulmonary process." as RadGraph's OBS-DA / ANAT-DP entities, no finding.
    document: :func:`doc_to_radgraph`, the rules in order, and the numbered RadGraph document.
    stream: :func:`extract`, :func:`extract_text`, :func:`write_radgraph_json`.

Requires the optional extra ``cxrkg[extract]`` (spaCy, medspaCy); ImportError names it otherwise.
"""

from graph.extract.rules.changes.cues import CHANGE_CUES
from graph.extract.rules.curves import CURVE_FINDINGS, curve_side
from graph.extract.rules.document import DATA_SOURCE, doc_to_radgraph
from graph.extract.rules.sections import SECTION_ORDER, compose_text
from graph.extract.rules.spacy_pipeline import SUGGESTIVE_CUES, build_pipeline
from graph.extract.rules.stream import extract, extract_text, write_radgraph_json

__all__ = ["CHANGE_CUES", "CURVE_FINDINGS", "DATA_SOURCE", "SECTION_ORDER", "SUGGESTIVE_CUES", "build_pipeline",
           "compose_text", "curve_side", "doc_to_radgraph", "extract", "extract_text", "write_radgraph_json"]
