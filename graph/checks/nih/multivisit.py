"""An independent check of the five-visit questions' TEL and ICR answers on the NIH ChestX-ray14 cohort.

Written apart from the code it checks: plain pandas over the NIH tables through
:func:`graph.checks.nih.reference.reference_states` (per kept study and finding: present, absent or not
mentioned, and the event against the previous study), and its own reading of the JSON lines. It never reads
Neo4j or :mod:`graph.temporal`; a file from ``cxrkg questions multivisit`` is checked against it.

What the file must hold (the rules of ``cxrkg questions multivisit``, restated; NIH: one image = one study, dates from the follow-up
number, so no order is in doubt):

- windows: each patient's kept studies by follow-up number, cut into consecutive fives from the first (1-5,
  6-10, ...); the ``images`` of a window are those five image ids;
- the findings of a window: those with an event at one of its visits T2..T5 (onset, persistence,
  resolution, no longer mentioned), i.e. present at some visit;
- ICR ``interval change``: one question per (window, finding, interval) whose event is onset (``new``),
  persistence (``stable``) or resolution (``resolved``); none for no longer mentioned, none without event;
- TEL, for a finding of the window with no "no longer mentioned" in it: ``first appearance`` the first
  visit it is present at; ``resolution`` (when present before T5) the first visit with a resolution, else
  "It does not resolve by T5"; ``emergence to resolution`` (when an onset is followed by a resolution)
  "appears at Ti, resolves at Tj" of the first onset and the first resolution after it.

Questions are keyed by (window images, qtype, finding, interval); one the file lacks is ``missing``, one
beyond these ``extra``, a different answer ``answer``, an answer not among five distinct choices ``choices``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from graph.checks.nih.reference import (
    NO_LONGER_MENTIONED,
    ONSET,
    PERSISTENCE,
    PRESENT,
    RESOLUTION,
    NIHTables,
    reference_states,
)
from graph.errors import CxrkgError

VISITS = 5
ICR_LABEL = {ONSET: "new", PERSISTENCE: "stable", RESOLUTION: "resolved"}
NOT_RESOLVED = "It does not resolve by T5"
TEL_QTYPES = ("first appearance", "resolution", "emergence to resolution")
MISMATCH_COLUMNS = ("key", "expected", "got", "problem")


class MultivisitCheckError(CxrkgError, ValueError):
    """The file to check is not JSON lines of questions with the fields the check reads."""


@dataclass
class MultivisitCheck:
    """What was compared: windows, questions checked per qtype, and the mismatches (:data:`MISMATCH_COLUMNS`;
    ``problem`` is missing, extra, answer or choices)."""

    windows: int = 0
    checked: dict[str, int] = field(default_factory=dict)
    mismatches: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(MISMATCH_COLUMNS)))


Key = tuple[tuple[str, ...], str, str, str]


def expected_answers(tables: NIHTables) -> tuple[dict[Key, str], int]:
    """(key -> expected answer text for every TEL and ICR question, the number of windows)."""
    s = reference_states(tables)
    s = s.sort_values(["patient_id", "follow_up", "finding"], kind="stable")
    images = s.drop_duplicates(["patient_id", "follow_up"])[["patient_id", "follow_up", "image_id"]]
    images = images.assign(rank=images.groupby("patient_id").cumcount())
    images = images.assign(window=images["rank"] // VISITS, visit=images["rank"] % VISITS + 1)
    size = images.groupby(["patient_id", "window"])["image_id"].transform("size")
    images = images[size == VISITS]
    windows = {k: tuple(g["image_id"]) for k, g in images.groupby(["patient_id", "window"], sort=True)}
    s = s.merge(images[["patient_id", "follow_up", "window", "visit"]], on=["patient_id", "follow_up"])
    out: dict[Key, str] = {}
    for (pid, w, finding), g in s.groupby(["patient_id", "window", "finding"], sort=True):
        g = g.sort_values("visit")
        events = dict(zip(g["visit"], g["event"], strict=True))
        present = [v for v, st in zip(g["visit"], g["state"], strict=True) if st == PRESENT]
        if not present:
            continue
        window = windows[(pid, w)]
        for v in range(2, VISITS + 1):
            if events.get(v) in ICR_LABEL:
                out[(window, "interval change", finding, f"T{v - 1}T{v}")] = ICR_LABEL[events[v]]
        if any(events.get(v) == NO_LONGER_MENTIONED for v in range(2, VISITS + 1)):
            continue
        out.update(_tel(window, finding, events, present))
    return out, len(windows)


def _tel(window: tuple[str, ...], finding: str, events: dict[int, Any], present: list[int]) -> dict[Key, str]:
    out = {(window, "first appearance", finding, ""): f"T{present[0]}"}
    resolved = [v for v in range(2, VISITS + 1) if events.get(v) == RESOLUTION]
    if present[0] < VISITS:
        out[(window, "resolution", finding, "")] = f"T{resolved[0]}" if resolved else NOT_RESOLVED
    onsets = [v for v in range(2, VISITS + 1) if events.get(v) == ONSET]
    if onsets:
        after = [v for v in resolved if v > onsets[0]]
        if after:
            out[(window, "emergence to resolution", finding, "")] = f"appears at T{onsets[0]}, resolves at T{after[0]}"
    return out


def read_file(path: Path) -> list[dict[str, Any]]:
    """The TEL and ICR questions of a file, each as {key, answer text, choices}.

    Raises:
        MultivisitCheckError: a line is not JSON or lacks a field the check reads.
    """
    out = []
    for number, text in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not text.strip():
            continue
        try:
            row = json.loads(text)
            if row["group_type"] not in ("TEL", "ICR"):
                continue
            basis, choices = row["cxrkg_basis"], list(row["choices"])
            span = basis["intervals"][0]
            tail = f"{span['from']}{span['to']}" if row["group_type"] == "ICR" else ""
            letter = "ABCDE".index(row["answer"])
            out.append({"key": (tuple(row["images"]), row["qtype"], basis["finding"], tail),
                        "answer": choices[letter] if letter < len(choices) else None, "choices": choices})
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            raise MultivisitCheckError(f"{path}: line {number}: not a question the check reads ({exc!r})") from None
    return out


def check_questions(questions: list[dict[str, Any]], tables: NIHTables) -> MultivisitCheck:
    """The file's TEL and ICR questions against :func:`expected_answers` of ``tables``."""
    expected, windows = expected_answers(tables)
    result, rows = MultivisitCheck(windows=windows), list[tuple[Any, Any, Any, str]]()
    got = {}
    for q in questions:
        got[q["key"]] = q["answer"]
        if len(q["choices"]) != VISITS or len(set(q["choices"])) != VISITS or q["answer"] is None:
            rows.append((q["key"], "five distinct choices", q["choices"], "choices"))
    for key, answer in expected.items():
        result.checked[key[1]] = result.checked.get(key[1], 0) + 1
        if key not in got:
            rows.append((key, answer, None, "missing"))
        elif got[key] != answer:
            rows.append((key, answer, got[key], "answer"))
    rows += [(key, None, answer, "extra") for key, answer in got.items() if key not in expected]
    result.mismatches = pd.DataFrame(rows, columns=list(MISMATCH_COLUMNS))
    return result
