"""A CXRTrek-format question set for the loaded cohort: one sample per study, its stages' gold answers
written from the graph (``cxrkg cxrtrek generate``).

A sample is laid out as the public demo file's (:mod:`graph.formats.cxrtrek`): a system turn, then a user and
an assistant turn per question in stage order; the current image's ``<image>`` token in the first question
and the reference image's in the first stage-5 question (``image_input_count`` counts the images shown so
far); ``image`` lists the current study's main image id, then the previous study's when stage 5 asks
anything. Images are named by their graph image ids (the graph holds no image paths). cxrkg adds
``bbox_frame`` to ``cxrtrek_data`` (the frame detection boxes are in percent of) and ``graph_basis`` to each
question; readers of the format ignore both.

Draws (question wordings, yes/no or choice, option order, location distractors) use a ``random.Random``
seeded with ``"<seed>|<study id>"``: a study's questions do not depend on which other studies are drawn, and
the same graph and seed give the same file.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from graph.cxrtrek import templates as t
from graph.cxrtrek.facts import Reader, StudyStageFacts, all_patient_ids, iter_stage_facts
from graph.cxrtrek.stages import FRAME_NAME, STAGES, Item, main_image
from graph.errors import CxrkgError
from graph.formats.cxrtrek import items_of, new_sample

SOURCE = "cxrkg"
"""``cxrtrek_data.source`` of the samples cxrkg writes."""


class StageSelectionError(CxrkgError, ValueError):
    """``--stages`` names a stage cxrkg does not write, or none."""


def parse_stages(text: str) -> tuple[int, ...]:
    """``"1,2,5"`` -> ``(1, 2, 5)``.

    Raises:
        StageSelectionError: a stage that is not a number of :data:`graph.cxrtrek.stages.STAGES` (4, 7 and 8
            need report text or a model), or an empty list.
    """
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts or any(not p.isdigit() or int(p) not in STAGES for p in parts):
        raise StageSelectionError(f"--stages {text!r}: choose among {', '.join(map(str, STAGES))} (4, 7 and 8 need "
                                  "report text or a model and are not written)")
    return tuple(sorted({int(p) for p in parts}))


def _chat(items: list[Item], prior_image: str | None) -> tuple[list[dict[str, str]], int]:
    """The chat turns of the items; puts the image tokens and counts into the items. Returns (messages,
    images shown)."""
    messages, shown = [{"role": "system", "content": t.SYSTEM_PROMPT}], 1
    for i, x in enumerate(items):
        if i == 0:
            x["question"] += t.CURRENT_IMAGE
        if x["stage"] >= 5 and shown == 1 and prior_image is not None:
            x["question"] += t.REFERENCE_IMAGE
            shown = 2
        x["image_input_count"] = shown
        messages += [{"role": "user", "content": x["question"]}, {"role": "assistant", "content": x["answer"]}]
    return messages, shown


def build_sample(f: StudyStageFacts, seed: int = 0, stages: Iterable[int] = tuple(STAGES)) -> dict[str, Any] | None:
    """One study's sample, or None when no stage asks anything of it (no view and no statement)."""
    rng = random.Random(f"{seed}|{f.study_id}")
    items = [x for stage in sorted(set(stages)) for x in STAGES[stage](f, rng)]
    if not items:
        return None
    current, prior = main_image(f.images), main_image(f.prior_images)
    asks_prior = any(x["stage"] == 5 for x in items)
    messages, shown = _chat(items, prior[0] if prior and asks_prior else None)
    images = [current[0] if current else f.study_id] + ([prior[0]] if prior and shown == 2 else [])
    data = {"source": SOURCE, "pat_id": f.patient_id, "study_id": f.study_id, "ref_study_id": f.prior_id or "",
            "pos_study_id": f.next_id or "", "image": images, "bbox_frame": FRAME_NAME, "content": items}
    return new_sample(messages, list(images), data)


@dataclass
class GenerateSummary:
    """What :func:`generate` wrote: samples, studies without a question, questions per stage, patients,
    seconds (reading and writing)."""

    samples: int = 0
    skipped: int = 0
    patients: int = 0
    questions: Counter = field(default_factory=Counter)
    seconds: float = 0.0


def write_samples(studies: Iterable[StudyStageFacts], out: Path, seed: int = 0,
                  stages: Iterable[int] = tuple(STAGES), summary: GenerateSummary | None = None) -> GenerateSummary:
    """Write the studies' samples to ``out`` (a JSON array, one sample per line), streaming."""
    summary = summary or GenerateSummary()
    stages = tuple(stages)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        fh.write("[")
        for f in studies:
            sample = build_sample(f, seed, stages)
            if sample is None:
                summary.skipped += 1
                continue
            fh.write(",\n" if summary.samples else "\n")
            fh.write(json.dumps(sample))
            summary.samples += 1
            summary.questions.update(x["stage"] for x in items_of(sample))
        fh.write("\n]\n")
    return summary


def generate(reader: Reader, out: Path, patients: int | None = None, seed: int = 0,
             stages: Iterable[int] = tuple(STAGES)) -> GenerateSummary:
    """Write the question set of the graph's cohort (or of ``patients`` of its patients, drawn with ``seed``).

    Raises:
        ValueError: ``patients`` is not positive.
    """
    if patients is not None and patients < 1:
        raise ValueError(f"--patients must be at least 1, not {patients}")
    start = time.perf_counter()
    ids = all_patient_ids(reader)
    if patients is not None and patients < len(ids):
        ids = sorted(random.Random(seed).sample(ids, patients))
    summary = GenerateSummary(patients=len(ids))
    studies = (s for batch in iter_stage_facts(reader, ids) for s in batch)
    write_samples(studies, out, seed, stages, summary)
    summary.seconds = time.perf_counter() - start
    return summary
