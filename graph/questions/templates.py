"""Medical-Diff-VQA's seven question types, their templates and its answer libraries, as facts.

Source: the dataset's public question generator, repository Holipori/MIMIC-Diff-VQA (Hu et al., "Expert
Knowledge-Aware Image Difference Graph Representation Learning for Difference-Aware Medical Visual Question
Answering", KDD 2023): ``code/question_gen.py`` (``create_question_set``, ``sub_ques_pres_loc``,
``diff_ques``, ``get_caption``) and ``code/libs/*.csv`` (``disease_lib.csv``, ``level_lib.csv``,
``location_lib.csv``, ``type_lib.csv``, ``position_change.csv``). The tuples below
restate those files' values; the template keys and the code around them are cxrkg's own. Every module picks a
template by its key (:data:`TEMPLATE`), never by its place in a tuple.
"""

from __future__ import annotations

from typing import NamedTuple

QUESTION_TYPES = ("abnormality", "presence", "view", "location", "level", "type", "difference")
"""The seven question types, in the order the generator asks them for a pair."""


class Template(NamedTuple):
    """One question template: ``key``, cxrkg's name for it (``<question type>_<what it asks>``, what the code
    picks it by), and ``text``, the wording as ``create_question_set`` writes it (``xxx``: a disease name,
    ``lxxx``: a location)."""

    key: str
    text: str


#: question type -> its templates in ``create_question_set``'s order. Two wordings the generator writes
#: outside the table are added at the end of their type: ``sub_ques_pres_loc``'s "is the xxx bilateral?" and
#: ``diff_ques``'s "what has changed in the lxxx area?" (already in the table).
TEMPLATES: dict[str, tuple[Template, ...]] = {
    "abnormality": (Template("abnormality_list", "what abnormalities are seen in this image?"),
                    Template("abnormality_in_place", "what abnormalities are seen in the xxx?"),
                    Template("abnormality_any", "is there evidence of any abnormalities in this image?")),
    "presence": (Template("presence_evidence", "is there evidence of xxx in this image?"),
                 Template("presence", "is there xxx?"),
                 Template("presence_in_place", "is there xxx in the lxxx?"),
                 Template("presence_bilateral", "is the xxx bilateral?")),
    "view": (Template("view_which", "which view is this image taken?"),
             Template("view_is_pa", "is this PA view?"),
             Template("view_is_ap", "is this AP view?")),
    "location": (Template("location_in_image", "where in the image is the xxx located?"),
                 Template("location_where", "where is the xxx?"),
                 Template("location_side", "is the xxx located on the left side or right side?")),
    "level": (Template("level", "what level is the xxx?"),),
    "type": (Template("type", "what type is the xxx?"),),
    "difference": (Template("difference", "what has changed compared to the reference image?"),
                   Template("difference_in_area", "what has changed in the lxxx area?")),
}
TEMPLATE: dict[str, Template] = {t.key: t for templates in TEMPLATES.values() for t in templates}
"""Template key -> :class:`Template`: how every module picks a template."""
QUESTION_TYPE: dict[str, str] = {t.key: qtype for qtype, templates in TEMPLATES.items() for t in templates}
"""Template key -> its question type."""

#: ``disease_lib.csv``: the 30 official names in the library's order (answers list findings in this order,
#: ``fix_order``), each with the report wordings the generator matches (its ``report_name`` column). Entry 12
#: ends with a space in the library ("tortuosity of the descending aorta "); it is kept as written.
DISEASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("pleural effusion", ("pleural effusions", "pleural effusion", "effusion", "effusions", "pleural fluid")),
    ("atelectasis", ("volume loss", "collapse", "atelectasis", "atelectases", "atelectatic changes",
                     "atelectatic change")),
    ("cardiomegaly", ("cardiomegaly", "enlarged")),
    ("enlargement of the cardiac silhouette", ("enlargement of the cardiac silhouette",)),
    ("edema", ("pulmonary edema", "edema")),
    ("hernia", ("hiatal hernia", "hiatus hernia", "hernia")),
    ("vascular congestion", ("pulmonary vascular congestion", "vascular congestion")),
    ("hilar congestion", ("hilar congestion",)),
    ("pneumothorax", ("pneumothorax",)),
    ("heart failure", ("cardiac decompensation", "chf", "congestive heart failure", "heart failure")),
    ("lung opacity", ("lung opacification", "airspace opacities", "airspace opacity", "opacification", "opacity",
                      "opacities", "lung opacity", "lung opacities")),
    ("pneumonia", ("pneumonia", "infection")),
    ("tortuosity of the descending aorta ", ("tortuosity of the descending aorta ",)),
    ("scoliosis", ("thoracolumbar scoliosis", "scoliosis")),
    ("gastric distention", ("gastric distention",)),
    ("hypoxemia", ("hypoxemia",)),
    ("hypertensive heart disease", ("hypertensive heart disease", "htn")),
    ("hematoma", ("hematoma",)),
    ("tortuosity of the thoracic aorta", ("tortuosity of the thoracic aorta",)),
    ("contusion", ("pulmonary contusion", "contusion")),
    ("emphysema", ("emphysema",)),
    ("granuloma", ("granulomatous disease", "granuloma")),
    ("calcification", ("calcifications", "calcification")),
    ("pleural thickening", ("pleural thickening",)),
    ("thymoma", ("thymoma",)),
    ("blunting of the costophrenic angle", ("blunting of the costophrenic angles", "blunting of the right costophrenic angle",
                                            "blunting of the left costophrenic angle", "blunting of the costophrenic angle",
                                            "blunting of the left costodiaphragmatic",
                                            "blunting of the right costodiaphragmatic")),
    ("consolidation", ("consolidation",)),
    ("fracture", ("fractures", "fracture")),
    ("pneumomediastinum", ("pneumomediastinum",)),
    ("air collection", ("air collection",)),
)
DISEASE_NAMES: tuple[str, ...] = tuple(name for name, _ in DISEASES)
DISEASE_ORDER: dict[str, int] = {name: i for i, name in enumerate(DISEASE_NAMES)}

#: ``level_lib.csv`` (its duplicate "moderate to large" once).
LEVELS = ("moderately", "moderate", "acute", "mildly", "mild", "small", "severe", "moderate to large",
          "moderate to severe", "mild to moderate", "minimal", "subtle", "massive", "minimally", "increasing",
          "decreasing", "minor")
#: ``location_lib.csv``.
LOCATIONS = ("mid to lower", "left", "right", "retrocardiac", "pericardial", "bibasilar", "bilateral", "basilar",
             "apicolateral", "basal", "left-sided", "lobe", "lung", "area", "base", "right-sided", "apical",
             "pleural", "upper", "lower", "middle", "mid", "rib")
#: ``type_lib.csv``.
TYPES = ("interstitial", "layering", "dense", "parenchymal", "compressive", "obstructive", "linear", "plate-like",
         "patchy", "ground-glass", "calcified", "scattered", "focal", "multifocal", "multi-focal")

VIEWS = {"PA": "PA view", "AP": "AP view"}
"""Frontal views the generator asks about (``view_ques``: postero-anterior, antero-posterior) and its answers."""

YES, NO = "yes", "no"
NOTHING_CHANGED = "nothing has changed."
