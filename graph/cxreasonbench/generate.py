"""The loaded cohort's CXReasonBench-style items, one JSON object per line (``cxrkg cxreasonbench generate``).

Images in (patient id, study id, image id) order, each image's tasks in :data:`TASKS` order: the same graph
and seed give the same file. Every measured image is looked at; an image a task cannot ask (no decision:
a box missing or faulty, a view other than PA / AP, for inclusion the image's size unknown) is counted by the
Measurement's reason (``no threshold for the view`` where it has a value but no decision).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from graph.cxreasonbench.facts import ImageMeasurements, Reader, iter_image_measurements
from graph.cxreasonbench.items import build_item
from graph.cxreasonbench.templates import TASKS
from graph.errors import CxrkgError

NO_THRESHOLD = "no threshold for the view"


class TaskSelectionError(CxrkgError, ValueError):
    """``--tasks`` names a task cxrkg does not write, or none."""


def parse_tasks(text: str) -> tuple[str, ...]:
    """``"cardiomegaly,rotation"`` -> those tasks in :data:`TASKS` order.

    Raises:
        TaskSelectionError: a name that is not one of :data:`graph.cxreasonbench.templates.TASKS`, or none.
    """
    names = {p.strip() for p in text.split(",") if p.strip()}
    if not names or names - set(TASKS):
        raise TaskSelectionError(f"--tasks {text!r}: choose among {', '.join(TASKS)}")
    return tuple(t for t in TASKS if t in names)


@dataclass
class GenerateSummary:
    """What :func:`write_items` wrote: images looked at, items per task, images left out per (task, reason),
    seconds."""

    images: int = 0
    items: Counter = field(default_factory=Counter)
    left_out: Counter = field(default_factory=Counter)
    seconds: float = 0.0


def _why_not(img: ImageMeasurements, task: str) -> str:
    m = img.measurements.get(TASKS[task].measurement)
    if m is None:
        return "not measured"
    return m.reason or (NO_THRESHOLD if m.decision is None else "box not read")


def write_items(images: Iterable[ImageMeasurements], out: Path, seed: int = 0,
                tasks: Iterable[str] = tuple(TASKS)) -> GenerateSummary:
    """Write the images' items to ``out`` (JSON lines), streaming."""
    summary, start, chosen = GenerateSummary(), time.perf_counter(), tuple(tasks)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for img in images:
            summary.images += 1
            for task in chosen:
                item = build_item(img, task, seed)
                if item is None:
                    summary.left_out[(task, _why_not(img, task))] += 1
                    continue
                fh.write(json.dumps(item) + "\n")
                summary.items[task] += 1
    summary.seconds = time.perf_counter() - start
    return summary


def generate(reader: Reader, out: Path, seed: int = 0, tasks: Iterable[str] = tuple(TASKS)) -> GenerateSummary:
    """Write the items of every measured image of the graph."""
    return write_items(iter_image_measurements(reader), out, seed, tasks)
