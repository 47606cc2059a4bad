"""Medical-Diff-VQA's seven question types, their templates and its answer libraries, as facts.

Source: the dataset's public question generator, repository Holipori/MIMIC-Diff-VQA (Hu et al., "Expert
Knowledge-Aware Image Difference Graph Representation Learning for Difference-Aware Medical Visual Question
Answering", KDD 2023): ``code/question_gen.py`` (``create_question_set``, ``sub_ques_pres_loc``,
``diff_ques``, ``get_caption``) and ``code/libs/*.csv`` (``disease_lib.csv``, ``level_lib.csv``,
``location_lib.csv``, ``type_lib.csv``, ``postlocation_lib.csv``, ``position_change.csv``). The tuples below
restate those files' values; the code around them is cxrkg's own.
"""

from __future__ import annotations

QUESTION_TYPES = ("abnormality", "presence", "view", "location", "level", "type", "difference")
"""The seven question types, in the order the generator asks them for a pair."""

#: question type -> its templates as ``create_question_set`` writes them; ``xxx`` is a disease name, ``lxxx``
#: a location. Two wordings the generator writes outside the table are added at the end of their type:
#: ``sub_ques_pres_loc``'s "is the xxx bilateral?" and ``diff_ques``'s "what has changed in the lxxx area?"
#: (already in the table).
TEMPLATES: dict[str, tuple[str, ...]] = {
    "abnormality": ("what abnormalities are seen in this image?", "what abnormalities are seen in the xxx?",
                    "is there evidence of any abnormalities in this image?"),
    "presence": ("is there evidence of xxx in this image?", "is there xxx?", "is there xxx in the lxxx?",
                 "is the xxx bilateral?"),
    "view": ("which view is this image taken?", "is this PA view?", "is this AP view?"),
    "location": ("where in the image is the xxx located?", "where is the xxx?",
                 "is the xxx located on the left side or right side?"),
    "level": ("what level is the xxx?",),
    "type": ("what type is the xxx?",),
    "difference": ("what has changed compared to the reference image?", "what has changed in the lxxx area?"),
}

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
#: ``postlocation_lib.csv``: the phrases after a finding ("... in the left lower lobe") the generator keeps.
POST_LOCATIONS = (
    "the lower and probably also middle lobe", "the lower lobe", "the upper lobe", "the middle lobe",
    "the left lung base", "the right lung base", "the lung bases", "the left base", "the right base",
    "the right upper lung", "the left upper lung", "the right middle lung", "the left middle lung",
    "the right mid lung", "the left mid lung", "the right lower lung", "the left lower lung", "the right upper lobe",
    "the left upper lobe", "the right middle lobe", "the left middle lobe", "the right mid lobe", "the left mid lobe",
    "the right lower lobe", "the left lower lobe", "the left apical area", "the left apical region",
    "the right apical area", "the right apical region", "the apical region", "the apical area",
    "the right mid to lower lung", "the left mid to lower lung", "the medial right lung base",
    "the medial left lung base", "the upper lungs", "the lower lungs", "the upper lobes", "the lower lobes",
    "the right mid to lower hemithorax", "the left mid to lower hemithorax", "the soft tissues",
)

VIEWS = {"PA": "PA view", "AP": "AP view"}
"""Frontal views the generator asks about (``view_ques``: postero-anterior, antero-posterior) and its answers."""

YES, NO = "yes", "no"
NOTHING_CHANGED = "nothing has changed."
