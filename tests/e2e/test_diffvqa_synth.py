"""Medical-Diff-VQA questions generated on a synthetic cohort (graph.synth) against what its scene graphs state,
read here with plain json: every abnormality, difference and level answer equals the one computed from the files
(0 mismatches), and every question type is asked. Only the scene graphs are loaded, so the files are the graph's
whole input."""

from __future__ import annotations

import json

from graph.synth import METADATA_CSV, SCENE_GRAPH_DIR, write_cohort
from tests.fixtures.loading import load_into

# the synthetic cohort's findings with a Diff-VQA name (disease_lib.csv), in the library's order
NAMES = {"pleural effusion": "pleural effusion", "atelectasis": "atelectasis", "enlarged cardiac silhouette": "cardiomegaly",
         "pulmonary edema/hazy opacity": "edema", "vascular congestion": "vascular congestion",
         "pneumothorax": "pneumothorax", "lung opacity": "lung opacity", "pneumonia": "pneumonia",
         "tortuous aorta": "tortuosity of the thoracic aorta", "calcified nodule": "granuloma",
         "consolidation": "consolidation"}
ORDER = list(NAMES.values())
# level_lib.csv words with the vocabulary's severity scores: a finding's level is its highest, ties alphabetical
SCORES = {"minimal": 1, "small": 1, "mild": 1, "mild to moderate": 2, "moderate": 2, "moderate to large": 3,
          "moderate to severe": 3, "severe": 3, "massive": 3}


def _stated(cohort) -> tuple[dict[str, list[str]], dict[str, dict[str, str]]]:
    """study -> present Diff-VQA names (library order); study -> name -> level, from the scene graph files."""
    present, levels = {}, {}
    for path in (cohort / SCENE_GRAPH_DIR).rglob("*_SceneGraph.json"):
        g = json.loads(path.read_text())
        names, level = set(), {}
        for entry in g["attributes"]:
            for labels, cues in zip(entry["attributes"], entry["severity_cues"], strict=True):
                for label in labels:
                    _, polarity, finding = label.split("|")
                    if polarity != "yes" or finding not in NAMES:
                        continue
                    name = NAMES[finding]
                    names.add(name)
                    for word in (c.split("|")[2] for c in cues if c.split("|")[2] in SCORES):
                        level[name] = min(level.get(name, word), word, key=lambda w: (-SCORES[w], w))
        present[str(g["study_id"])] = [n for n in ORDER if n in names]
        levels[str(g["study_id"])] = level
    return present, levels


def _names(xs: list[str]) -> str:
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + ", and " + xs[-1]


def _difference(present, levels, main: str, ref: str) -> str:
    out = "".join(f"the level of {n} has changed from {levels[ref][n]} to {levels[main][n]}. " for n in present[main]
                  if n in present[ref] and levels[ref].get(n) and levels[main].get(n) and levels[ref][n] != levels[main][n])
    added = [n for n in present[main] if n not in present[ref]]
    missing = [n for n in present[ref] if n not in present[main]]
    if added:
        out += (f"the main image has {'an additional finding' if len(added) == 1 else 'additional findings'} of "
                f"{_names(added)} than the reference image. ")
    if missing:
        out += (f"the main image is missing {'the finding' if len(missing) == 1 else 'the findings'} of "
                f"{_names(missing)} than the reference image. ")
    return out or "nothing has changed."


def test_generated_answers_equal_what_the_synthetic_files_state(store, tmp_path):
    from graph.questions.generate import generate

    write_cohort(tmp_path, patients=12, seed=3)
    _, result = load_into(store, tmp_path / SCENE_GRAPH_DIR, tmp_path / METADATA_CSV)
    assert not result.rejections
    present, levels = _stated(tmp_path)
    frame = generate(store, seed=1)
    assert set(frame["question_type"]) == {"abnormality", "presence", "view", "location", "level", "type", "difference"}
    checked, wrong = 0, []
    for r in frame.itertuples():
        if r.question == "what abnormalities are seen in this image?":
            expected = ", ".join(present[r.study_id])
        elif r.question == "what has changed compared to the reference image?":
            expected = _difference(present, levels, r.study_id, r.ref_id)
        elif r.question.startswith("what level is the "):
            expected = levels[r.study_id].get(r.question[len("what level is the "):-1])
        else:
            continue
        checked += 1
        if r.answer != expected:
            wrong.append((r.study_id, r.ref_id, r.question, expected, r.answer))
    assert wrong == [] and checked > 60
    assert (frame["answer"].str.startswith("the level of")).any() and (frame["question_type"] == "level").sum() > 10
