"""One CXReasonBench-style item: an image's staged questions for one task, each answer with its basis. Pure.

An item is one JSON object (docs/cxreasonbench.md): the task, the image (``dicom``, as the evaluation names
an image) with its study, patient and view, ``img_path`` (the graph's image id: the graph holds no paths),
``path1`` (the reasoning path, its stages in the evaluation's order, each with ``qa_dir``, the folder under
the task's ``qa/`` where the evaluation reads that stage) and ``basis``:

- ``init``: the decision asked directly (``question``, ``options``, ``answer``, ``img_path``);
- ``criteria``: lists of questions, options and answers: which criterion decides the task; for a task with a
  threshold, which threshold for the image's view;
- ``bodypart``: per region the measurement reads, which of the image's boxes outlines it (the region's own
  box among up to three other regions' boxes of the image, and None of the above), ``img_path`` per question;
- ``measurement``: the value's range (four ranges of the task's width, one edge at the view's threshold, so
  a range lies wholly on one side of the decision), the trachea's side, or the inclusion parts not fully
  included (every right option);
- ``final``: the decision given the measurement;
- ``basis``: the Measurement's id, name, value, threshold, decision, direction, regions, method and view, the
  box ids shown, and for inclusion each part's Measurement.

Draws (option order, distractors, where the right range sits among the four) use a ``random.Random`` seeded
with ``"<seed>|<image id>|<task>"``: an item does not depend on which other images are written.
"""

from __future__ import annotations

import random
from typing import Any

from graph.cxreasonbench import templates as t
from graph.cxreasonbench.facts import ImageMeasurements, StoredMeasurement

Item = dict[str, Any]
RANGES = 4
"""Measurement ranges offered."""
DISTRACTOR_BOXES = 3
"""Other regions' boxes offered beside the right one."""
NOT_FULLY_INCLUDED = ("excluded", "mixed")
"""Inclusion-part decisions (graph.measurements) the measurement stage counts as not fully included."""


def _choice(question: str, texts: list[str], right: list[int], **fields: Any) -> dict[str, Any]:
    options = t.lettered(texts)
    return {"question": question.format(options=t.listed(options), **fields), "options": options,
            "answer": ", ".join(options[i] for i in right)}


def _yes_no_answer(task: t.Task, m: StoredMeasurement) -> tuple[list[str], int]:
    if task.name == "inclusion":
        texts = list(t.INCLUSION_DECISIONS.values())
        return texts, list(t.INCLUSION_DECISIONS).index(m.decision or "")
    return [t.YES, t.NO], 0 if m.decision == "yes" else 1


def _criteria(task: t.Task, view: str, m: StoredMeasurement, rng: random.Random) -> dict[str, Any]:
    others = rng.sample([x.criterion for x in t.TASKS.values() if x.name != task.name], 3)
    texts = [task.criterion, *others]
    rng.shuffle(texts)
    asked = [_choice(t.CRITERION, texts + [t.NONE_OF_THE_ABOVE], [texts.index(task.criterion)],
                     finding=task.finding)]
    if task.step and m.threshold is not None:
        th, at = round(m.threshold * 100), rng.randrange(4)
        values = [th + task.step * (j - at) for j in range(4)]
        asked.append(_choice(t.THRESHOLD, [f"{task.comparison} {t.hundredths(v)}" for v in values], [at],
                             view=view, measure=task.measure, finding=task.finding))
    return {key: [a[key] for a in asked] for key in ("question", "options", "answer")}


def _bodyparts(img: ImageMeasurements, regions: tuple[str, ...], rng: random.Random) -> dict[str, Any]:
    asked = []
    for region in regions:
        box = img.boxes[region]
        pool = [b for r, b in sorted(img.boxes.items()) if r != region and b.corners != box.corners]
        texts = [b.corners for b in rng.sample(pool, min(DISTRACTOR_BOXES, len(pool)))] + [box.corners]
        rng.shuffle(texts)
        asked.append(_choice(t.BODYPART, texts + [t.NONE_OF_THE_ABOVE], [texts.index(box.corners)], region=region))
    out = {key: [a[key] for a in asked] for key in ("question", "options", "answer")}
    return {**out, "img_path": [[img.image_id] for _ in regions]}


def value_ranges(value: float, threshold: float, width: int, rng: random.Random) -> tuple[list[str], int]:
    """Four ranges of ``width`` hundredths, edges at ``threshold + k * width``, the value's at a drawn place:
    (their texts ``"0.50 - 0.54"``, both ends included at 2 decimals; the value's index). A lower end below 0
    reads 0.00."""
    v, th = round(value * 100), round(threshold * 100)
    k = (v - th) // width
    first = max(k - rng.randrange(RANGES), (-th) // width)
    texts = [f"{t.hundredths(max(0, th + j * width))} - {t.hundredths(th + (j + 1) * width - 1)}"
             for j in range(first, first + RANGES)]
    return texts, k - first


def _measurement(task: t.Task, img: ImageMeasurements, m: StoredMeasurement, rng: random.Random) -> dict[str, Any]:
    if task.name == "trachea_deviation":
        return _choice(t.TRACHEA_MEASUREMENT, list(t.TRACHEA_OPTIONS.values()), [list(t.TRACHEA_OPTIONS).index(
            m.direction)])
    if task.name == "inclusion":
        parts = [img.measurements.get(f"inclusion_{p}") for p in t.INCLUSION_PARTS]
        faulty = [i for i, p in enumerate(parts) if p is not None and p.decision in NOT_FULLY_INCLUDED]
        return _choice(t.INCLUSION_MEASUREMENT, [*t.INCLUSION_PARTS.values(), t.NONE_OF_THEM],
                       faulty or [len(t.INCLUSION_PARTS)])
    texts, at = value_ranges(m.value or 0.0, m.threshold or 0.0, task.width, rng)
    return _choice(t.MEASUREMENT, texts, [at], measure=task.measure)


def _basis(task: t.Task, img: ImageMeasurements, m: StoredMeasurement) -> dict[str, Any]:
    basis: dict[str, Any] = {"measurement_id": m.measurement_id, "name": m.name, "value": m.value, "threshold": m.threshold,
                             "decision": m.decision, "direction": m.direction, "regions": list(m.regions),
                             "method": "box", "view": img.view, "bbox_ids": [img.boxes[r].bbox_id for r in m.regions]}
    if task.name == "inclusion":
        basis["parts"] = [{"measurement_id": p.measurement_id, "value": p.value, "threshold": p.threshold,
                           "decision": p.decision}
                          for name in t.INCLUSION_PARTS if (p := img.measurements.get(f"inclusion_{name}"))]
    return basis


def askable(img: ImageMeasurements, task: t.Task) -> StoredMeasurement | None:
    """The task's Measurement when it has a decision and every region it reads has a box, else None."""
    m = img.measurements.get(task.measurement)
    if m is None or m.decision is None or any(r not in img.boxes for r in m.regions):
        return None
    return m


def build_item(img: ImageMeasurements, task_name: str, seed: int = 0) -> Item | None:
    """The image's item for the task (:data:`graph.cxreasonbench.templates.TASKS`), or None when the task's
    measurement has no decision (a box missing or faulty, a view other than PA / AP, the size unknown).

    Raises:
        KeyError: an unknown task.
    """
    task = t.TASKS[task_name]
    m = askable(img, task)
    if m is None:
        return None
    rng = random.Random(f"{seed}|{img.image_id}|{task.name}")
    view = img.view or ""
    texts, right = _yes_no_answer(task, m)
    init = _choice(t.INIT, texts, [right], decision=task.decision)
    criteria = _criteria(task, view, m, rng)
    bodypart = _bodyparts(img, m.regions, rng)
    measurement = _measurement(task, img, m, rng)
    final = _choice(t.FINAL if task.step else t.FINAL_NO_THRESHOLD, texts, [right], decision=task.decision,
                    measure=task.measure, view=view)
    path1 = {"init": {"qa_dir": "path1/init/basic", **init, "img_path": [img.image_id]},
             "criteria": {"qa_dir": "path1/stage1/basic", **criteria},
             "bodypart": {"qa_dir": "path1/stage2/basic", **bodypart},
             "measurement": {"qa_dir": "path1/stage3/basic", **measurement},
             "final": {"qa_dir": "path1/stage4/basic", **final}}
    return {"task": task.name, "dicom": img.image_id, "study_id": img.study_id, "patient_id": img.patient_id,
            "view": img.view, "img_path": [img.image_id], "path1": path1, "basis": _basis(task, img, m)}
