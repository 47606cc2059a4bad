"""What each CXReasonBench task asks at each stage, and the answer forms, in cxrkg's words.

Source of the stages and the answer form: CXReasonBench's public evaluation code (repository
ttumyche/CXReasonBench, ``evaluation/``: ``evaluate_reasoning.py`` asks, per image, the direct question
(``init``), the criteria (``stage1``, a list), the body parts (``stage2``, a list, each with its images), the
measurement (``stage3``) and the decision (``stage4``), each a multiple choice answered ``"(a) Yes"``, as
``prompt.py``'s system message asks (``FINAL ANSWER: (A) Yes``); a measurement's answer is a range whose ends
``metric.py`` reads as the numbers between which a model's value counts as right). The benchmark's own
question texts are in its credentialed release, not in the code: the wordings here are cxrkg's. What each task
measures, its regions and thresholds are graph.measurements' (CheXStruct's ``MD_RANGES``).
"""

from __future__ import annotations

from dataclasses import dataclass

NONE_OF_THE_ABOVE = "None of the above"
"""The option the evaluation's criteria and body-part scoring treat as declining (``'N/A'``)."""
YES, NO = "Yes", "No"


@dataclass(frozen=True)
class Task:
    """One diagnostic task: its name (CheXStruct's), the Measurement that decides it, the words of the
    finding and of the measurement, the criterion, how a threshold reads (``at least`` / ``below``), the step
    of the threshold choices and the width of the measurement's ranges (in hundredths; 0: no threshold or
    range), and its decision question."""

    name: str
    measurement: str
    finding: str
    measure: str
    criterion: str
    comparison: str
    step: int
    width: int
    decision: str


TASKS: dict[str, Task] = {t.name: t for t in (
    Task("cardiomegaly", "cardiothoracic_ratio", "cardiomegaly", "cardiothoracic ratio",
         "The cardiothoracic ratio: the cardiac silhouette's width over the thoracic width", "at least", 5, 5,
         "Does this chest X-ray show cardiomegaly?"),
    Task("mediastinal_widening", "mediastinal_width_ratio", "mediastinal widening", "mediastinal width ratio",
         "The mediastinal width ratio: the upper mediastinum's width over the thoracic width", "at least", 4, 4,
         "Does this chest X-ray show mediastinal widening?"),
    Task("trachea_deviation", "tracheal_deviation", "tracheal deviation", "tracheal position",
         "The trachea's position against the midline through the spine", "", 0, 0,
         "Is the trachea deviated on this chest X-ray?"),
    Task("aortic_knob_enlargement", "aortic_knob_ratio", "aortic knob enlargement", "aortic knob ratio",
         "The aortic knob ratio: the aortic knob's width beyond the trachea over the trachea's width", "at least",
         50, 50, "Does this chest X-ray show an enlarged aortic knob?"),
    Task("rotation", "rotation_ratio", "rotation", "rotation ratio",
         "The rotation ratio: the smaller over the larger distance from the clavicles' medial ends to the "
         "midline through the spine", "below", 10, 10, "Is the patient rotated on this chest X-ray?"),
    Task("inclusion", "inclusion", "inclusion", "inclusion of the lungs",
         "Whether the lung apices, the lateral lung margins and the costophrenic angles lie within the film", "",
         0, 0, "How completely are the lungs included on this chest X-ray?"),
)}
"""The tasks in CheXStruct's order of graph.measurements (``TASKS`` there)."""

INIT = "{decision} Choose one: {options}."
CRITERION = ("Which criterion decides {finding} on a frontal chest X-ray? Choose one: {options}.")
THRESHOLD = ("For the {view} view, which value of the {measure} decides {finding}? Choose one: {options}.")
BODYPART = ("Which box, as (x1, y1, x2, y2) in the image's original pixels, outlines the {region}? "
            "Choose one: {options}.")
MEASUREMENT = "What is the {measure} of this chest X-ray, measured from its anatomy boxes? Choose one: {options}."
TRACHEA_MEASUREMENT = "Where does the trachea lie against the midline through the spine? Choose one: {options}."
TRACHEA_OPTIONS = {"right": "On the patient's right of the midline", None: "Across the midline",
                   "left": "On the patient's left of the midline"}
INCLUSION_MEASUREMENT = ("Which parts of the lungs are not fully included on the film? Choose all that apply: "
                         "{options}.")
#: the inclusion parts (graph.measurements ``inclusion_<part>``) as the options name them, in that order
INCLUSION_PARTS = {"apex_right": "The right lung apex", "apex_left": "The left lung apex",
                   "side_right": "The right lateral lung margin", "side_left": "The left lateral lung margin",
                   "bottom_right": "The right costophrenic angle", "bottom_left": "The left costophrenic angle"}
NONE_OF_THEM = "None of them"
FINAL = "{decision} Given the {measure} and the threshold for the {view} view, choose one: {options}."
FINAL_NO_THRESHOLD = "{decision} Given the {measure}, choose one: {options}."
INCLUSION_DECISIONS = {"complete": "Complete", "mixed": "Partly: a costophrenic angle only partly included",
                       "cut off": "No: a part is cut off"}


def lettered(texts: list[str]) -> list[str]:
    """``["(a) Yes", "(b) No"]`` from ``["Yes", "No"]``."""
    return [f"({chr(ord('a') + i)}) {t}" for i, t in enumerate(texts)]


def listed(options: list[str]) -> str:
    """The options as a question lists them: ``"(a) Yes, (b) No"``."""
    return ", ".join(options)


def hundredths(value: int) -> str:
    """``50`` -> ``"0.50"``, ``250`` -> ``"2.50"``."""
    return f"{value / 100:.2f}"
