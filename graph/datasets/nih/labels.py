"""The one mapping of NIH ChestX-ray14 labels (and Google's adjudicated labels) to the cxrkg vocabulary.

Sources: the 14 text-mined labels of ``Data_Entry_2017_v2020`` (Wang et al., CVPR 2017) and the four
radiologist-adjudicated columns of ``google2019_nih-chest-xray-labels`` (Majkowska et al., Radiology 2020).
How the converter writes them is the contract in :mod:`graph.datasets.nih.convert`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from graph.terms import Source
from graph.vocabulary import Vocabulary, VocabularyError

SOURCE_TEXT, SOURCE_GOOGLE = Source.NIH_CHESTXRAY14, Source.NIH_GOOGLE2019

NO_FINDING = "No Finding"
GOOGLE_POLARITY = {"YES": "yes", "NO": "no"}


class Target(NamedTuple):
    """Where one NIH label lands: a vocabulary finding at a vocabulary region."""

    finding: str
    anatomy: str


_MASS = "mass/nodule (not otherwise specified)"

#: The one mapping of NIH labels to the vocabulary, per source (finding names and anatomies exist in
#: graph/vocab/chest_xray.yaml; checked by :func:`check_label_map`). Mass and Nodule are one finding.
LABEL_MAP: dict[str, dict[str, Target]] = {
    SOURCE_TEXT: {
        "Atelectasis": Target("atelectasis", "lungs"),
        "Cardiomegaly": Target("enlarged cardiac silhouette", "cardiac silhouette"),
        "Consolidation": Target("consolidation", "lungs"),
        "Edema": Target("pulmonary edema/hazy opacity", "lungs"),
        "Effusion": Target("pleural effusion", "lungs"),
        "Emphysema": Target("copd/emphysema", "lungs"),
        "Fibrosis": Target("interstitial lung disease", "lungs"),
        "Hernia": Target("hernia", "mediastinum"),
        "Infiltration": Target("infiltration", "lungs"),
        "Mass": Target(_MASS, "lungs"),
        "Nodule": Target(_MASS, "lungs"),
        "Pleural_Thickening": Target("pleural/parenchymal scarring", "lungs"),
        "Pneumonia": Target("pneumonia", "lungs"),
        "Pneumothorax": Target("pneumothorax", "lungs"),
    },
    SOURCE_GOOGLE: {
        "Fracture": Target("fracture", "chest"),
        "Pneumothorax": Target("pneumothorax", "lungs"),
        "Airspace opacity": Target("airspace opacity", "lungs"),
        "Nodule or mass": Target(_MASS, "lungs"),
    },
}


def check_label_map(vocab: Vocabulary) -> None:
    """Every finding and anatomy of :data:`LABEL_MAP` exists in ``vocab``.

    Raises:
        VocabularyError: one does not (the vocabulary file changed under this module).
    """
    for source, table in LABEL_MAP.items():
        for label, target in table.items():
            if target.finding not in vocab.findings:
                raise VocabularyError(f"{source} label {label!r}: finding {target.finding!r} is not in the vocabulary")
            if target.anatomy not in vocab.regions:
                raise VocabularyError(f"{source} label {label!r}: anatomy {target.anatomy!r} is not a region")


class LabelStatement(NamedTuple):
    """One scene-graph attribute a label states: where, ``"category|yes|finding"``, and the finding's CUIs."""

    anatomy: str
    attribute: str  # "category|yes|finding"
    attribute_id: str  # CUIs joined by ";;", "" when the vocabulary has none


def _statement(vocab: Vocabulary, target: Target, polarity: str) -> LabelStatement:
    finding = vocab.findings[target.finding]
    return LabelStatement(target.anatomy, f"{finding.category}|{polarity}|{finding.name}", ";;".join(finding.cuis))


def _no_finding_template(vocab: Vocabulary) -> dict[str, list[LabelStatement]]:
    """Per anatomy, the absent statements NIH's ``No Finding`` stands for (each finding once)."""
    out: dict[str, list[LabelStatement]] = {}
    for target in dict.fromkeys(LABEL_MAP[SOURCE_TEXT].values()):
        out.setdefault(target.anatomy, []).append(_statement(vocab, target, "no"))
    return out


@dataclass
class ConversionVocabulary:
    """What the converter needs from the vocabulary, looked up once: the statements of ``No Finding``,
    of each text-mined label and of each (Google column, ``YES``/``NO``), and each region's CUIs."""

    no_finding: list[LabelStatement]
    text: dict[str, LabelStatement]
    google: dict[tuple[str, str], LabelStatement]
    region_cuis: dict[str, list[str]]


def conversion_vocabulary(vocab: Vocabulary) -> ConversionVocabulary:
    """The :class:`ConversionVocabulary` of ``vocab``.

    Raises:
        VocabularyError: :data:`LABEL_MAP` names something ``vocab`` lacks.
    """
    check_label_map(vocab)
    no_finding = [lab for labs in _no_finding_template(vocab).values() for lab in labs]
    text = {label: _statement(vocab, t, "yes") for label, t in LABEL_MAP[SOURCE_TEXT].items()}
    google = {(label, value): _statement(vocab, t, polarity) for label, t in LABEL_MAP[SOURCE_GOOGLE].items()
              for value, polarity in GOOGLE_POLARITY.items()}
    return ConversionVocabulary(no_finding, text, google, {n: list(r.cuis) for n, r in vocab.regions.items()})
