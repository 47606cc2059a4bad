"""Question wordings and answer forms of the CXRTrek stages cxrkg writes, after the public demo file.

Source: CXRTrek's demo file (repository guanjinquan/CXRTrekReasoner, ``dataset/train_swift_demo.json``): its
system prompt, its yes/no, choice and detection question wordings (a ``{x}`` stands for the finding or region
its questions name), its answer forms (yes/no ``"Yes."`` / ``"No."``; choices ``"B. Yes."``, options listed
``"A. No. or B. Yes."`` and ``"[ 1. ...; 2. ... or 3. ... ]"``; detection ``"Detected X at: <|ref|> x <|/ref|>
<|box|>(x1, y1), (x2, y2)<|/box|>."``) and its way of showing images (``<image>`` tokens: the current image in
the first question, the reference image in the first comparison question). Wordings of the later stages that
the demo writes only as captions (the change against the prior, the next study) are cxrkg's, in the same form.
"""

from __future__ import annotations

from graph.terms import Change, State

SYSTEM_PROMPT = ("You are a helpful radiology assistant to help radiologists analyze, interpret medical images and "
                 "answer clinical questions.")
CURRENT_IMAGE = " Here is the current X-ray image: <image> ."
REFERENCE_IMAGE = " Reference X-ray: <image> ."
ANSWER_ONLY = " Respond to question with the answer only, no explanation."
YES, NO = "Yes.", "No."
"""The yes/no answers, as the demo file writes them (also the options of a Yes/No choice)."""

#: Quality_Assessment (stage 1, a caption): the demo file's question wordings (one drawn per image) and its
#: answer sentences where it has one (rotation, a part not included, technical limits); the sentences of a
#: complete film, a part partly included and of what the boxes cannot measure are cxrkg's, in the same form.
QUALITY_QUESTIONS = (
    "What is the assessment of the overall image quality, and are there any notable findings that may impact "
    "interpretation?",
    "What are the technical details of the current chest X-ray study, and are there any issues with image quality?",
    "Are there any technical deficiencies in the current X-ray study, particularly regarding positioning, "
    "inspiration, exposure, or rotation?",
    "What is the meta-information and image quality of the current chest X-ray study?",
)
ROTATED = ("The image quality is compromised due to patient rotation, as evidenced by the unequal distance between "
           "the medial ends of the clavicles and the spinous processes.")
NOT_ROTATED = ("There is no evidence of patient rotation, as the medial ends of the clavicles are equidistant from "
               "the spinous processes.")
CUT_OFF = "The study is limited due to the {parts} not being included on the film."
PARTLY_INCLUDED = "The {parts} {verb} only partly included on the film."
COMPLETE = "The lung apices, lateral lung margins and costophrenic angles are included on the film."
TECHNICALLY_LIMITED = "The examination is technically limited, as evidenced by {findings}."
NO_DEFICIENCY = "No technical deficiencies are noted."
NOT_MEASURED = "Rotation and inclusion cannot be measured on this image ({reasons})."
#: The inclusion parts (graph.measurements ``inclusion_<part>``) as the answers name them; both sides of one
#: part are named together, as the demo does ("the bilateral lung apices").
INCLUSION_PART_WORDS = {"apex": ("lung apex", "bilateral lung apices"),
                        "side": ("lateral lung margin", "bilateral lateral lung margins"),
                        "bottom": ("costophrenic angle", "bilateral costophrenic angles")}
#: The vocabulary's technical-assessment findings (category ``technicalassessment``) as a sentence names them.
TECHNICAL_WORDS = {"low lung volumes": "low lung volumes", "rotated": "patient rotation", "artifact": "an artifact",
                   "skin fold": "a skin fold", "breast/nipple shadows": "breast or nipple shadows"}

VIEW_CHOICE = "View(s) Of X-ray: ______ Select the correct answer from choices below: {options}" + ANSWER_ONLY
VIEW_OPTIONS = {"PA": "Postero-anterior.", "AP": "Antero-posterior."}
VIEW_CAPTION = "What is the primary angle of this X-ray image?"
VIEW_CAPTION_ANSWER = "The X-ray image is taken in {view} view."

FINDINGS_CAPTION = "What are the notable findings on the current chest X-ray study?"
FINDINGS_CAPTION_ANSWER = "The chest X-ray shows {findings}."
NO_FINDINGS_ANSWER = "No finding is stated present on the current chest X-ray study."

YES_NO = (
    "Is there any evidence of {x} in the main study X-ray?",
    "Is {x} visible in this X-ray?",
    "Pick yes or no: Does this X-ray show evidence of {x}?",
    "Is {x} clearly visible in the X-ray image? Answer with yes or no only.",
    "Choose between yes or no: Do you find {x} in the X-ray image?",
)
YES_NO_CHOICE = (
    "Is {x} evident in the X-ray? Only one answer is valid: {options}",
    "Are there any abnormalities suggesting {x} in the X-ray? Mark the most appropriate response: [ {options} ]. "
    "Answer the question directly, without any additional text.",
    "Give only the answer to: Is there any {x} identified in the X-ray? Select the correct answer from choices "
    "below: [ {options} ].",
)
FOREIGN_BODY = "Does the X-ray image show any foreign bodies or medical equipment? Answer with yes or no only."

LOCATION_CAPTION = "Where is the {x} located on the X-ray?"
LOCATION_CAPTION_ANSWER = "The {x} is located in the {places}."
LOCATION_CHOICE = ("Can you provide a precise anatomical description of where {x} is located? Identify the correct "
                   "choice: [ {options} ]." + ANSWER_ONLY)
SEVERITY_CAPTION = "How severe is the {x} in the {place}?"
SEVERITY_CAPTION_ANSWER = "The {x} in the {place} is {severity}."
DETECTION = ("[detection] Locate this phrase: {x} in the X-ray, output bounding box(s) In the format "
             "<|box|>(x1, y1), (x2, y2)<|/box|>.")
DETECTION_ANSWER = "Detected {x} at: <|ref|> {x} <|/ref|> <|box|>({x1}, {y1}), ({x2}, {y2})<|/box|>."

CHANGE_CHOICE = ("How has the {x} in the {place} changed compared with the reference X-ray? Select the correct answer "
                 "from the options below: [ {options} ]." + ANSWER_ONLY)
#: The derived changes (graph.longitudinal.events) as options, in this order.
DERIVED_OPTIONS = {"new": "New.", "persistent": "Still present.", "resolved": "Resolved.",
                   "no longer mentioned": "No longer mentioned."}
STATED_CHOICE = ("What change does the report state for the {x} in the {place} against the reference X-ray? Select "
                 "the correct answer from the options below: [ {options} ]." + ANSWER_ONLY)
#: The stated changes (Chest ImaGenome comparisons, RadGraph2 change entities) as options, in this order.
STATED_OPTIONS: dict[str, str] = {
    Change.NEW: "New.", Change.WORSENED: "Worsened.", Change.NO_CHANGE: "No change.", Change.IMPROVED: "Improved.",
    Change.RESOLVED: "Resolved.", Change.REPOSITIONED: "Repositioned."}
OVERALL_CHANGE_CHOICE = ("What best describes the differences in the findings between the current and previous "
                         "images? Select the correct answer from choices below: [ {options} ]." + ANSWER_ONLY)
#: The whole study against the previous one, as options, in this order: ``no change`` where every
#: PROGRESSION edge says persistent or no change (or there is none: nothing stated present on either side),
#: ``changed`` otherwise. The first is the demo's own wording ("C. It shows an unchanged trend.").
OVERALL_OPTIONS = {"no change": "It shows an unchanged trend.", "changed": "The findings have changed."}
#: The changes that leave a study unchanged against its previous one.
UNCHANGED = frozenset({"persistent", "no change"})
CHANGE_CAPTION = ("What changes, if any, can be observed in the {x} in the {place} between the current and prior "
                  "chest X-ray images?")
CHANGE_WORDS = {"new": "new", "persistent": "still present", "resolved": "resolved",
                "no longer mentioned": "no longer mentioned", "worsened": "worse", "no change": "unchanged",
                "improved": "improved", "repositioned": "repositioned"}
CHANGE_CAPTION_ANSWER = "Compared with the prior study, the {x} in the {place} is {change}{severity}."
CHANGE_SEVERITY = " (severity {before} before, {after} now)"
"""Added to :data:`CHANGE_CAPTION_ANSWER` where a severity is stated on either side."""
NOT_STATED = "not stated"

NEXT_YES_NO = "Will the {x} still be seen on the next chest X-ray study?"
NEXT_CHOICE = ("What does the next chest X-ray study show of the {x}? Select the correct answer from the options "
               "below: [ {options} ]." + ANSWER_ONLY)
#: What the next study states of a finding, as options, in this order.
NEXT_OPTIONS: dict[str, str] = {State.PRESENT: "Still present.", State.ABSENT: "Resolved.",
                                State.NOT_MENTIONED: "Not mentioned."}


def lettered(texts: list[str]) -> list[str]:
    """``["A. No.", "B. Yes."]`` from ``["No.", "Yes."]``."""
    return [f"{chr(ord('A') + i)}. {t}" for i, t in enumerate(texts)]


def numbered(texts: list[str]) -> list[str]:
    """``["1. Left lung.", ...]`` from ``["Left lung.", ...]``."""
    return [f"{i + 1}. {t}" for i, t in enumerate(texts)]


def listed_options(options: list[str]) -> str:
    """Options as the demo lists them in a question: ``"A. No. or B. Yes."``, ``"1. X; 2. Y or 3. Z."``."""
    if len(options) <= 2:
        return " or ".join(options)
    return "; ".join(o.rstrip(".") for o in options[:-1]) + " or " + options[-1]


def joined(words: list[str]) -> str:
    """``"a"``, ``"a and b"``, ``"a, b and c"``."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def sentence(text: str) -> str:
    """The text with a capital first letter and a final full stop."""
    return text[:1].upper() + text[1:].rstrip(".") + "."
