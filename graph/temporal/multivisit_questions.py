"""The three MI-CXR families asked of one five-visit window (pure: no store).

A window is five consecutive visits T1..T5 of one patient; for each finding with an edge in it, the four
intervals' labels (:class:`graph.temporal.multivisit_facts.Interval`). Presence at each visit follows from
the labels: present after new, worsened, stable, improved; present before worsened, stable, improved,
resolved; an interval without an edge has the finding present on neither side. A finding whose labels
contradict each other at a visit, or with an interval in doubt, is asked no TEL or GTS question (counted);
its other intervals still give ICR questions.

Families and their rules (MI-CXR's TEL, ICR, GTS; qtype names cxrkg's own):

- TEL ``first appearance``: for a finding present at some visit, the first visit it is present at; choices
  T1..T5.
- TEL ``resolution``: for a finding present before T5, the first visit it is resolved at (a ``resolved``
  interval), else "It does not resolve by T5"; choices T2..T5 and that one.
- TEL ``emergence to resolution``: for a finding with a ``new`` interval followed later by a ``resolved``
  one, the first such (appears at Ti, resolves at Tj); choices five of the six pairs 2 <= i < j <= 5.
- ICR ``interval change``: for every interval with a label, that label; choices the five classes.
- GTS ``no change`` / ``single change`` / ``multiple changes`` (by the number of changes): the trajectory,
  "present at T1" when it is, then each change in order ("appeared at T2, worsened at T3, resolved at T5"),
  or "present and unchanged from T1 to T5"; the four distractors are the trajectories of the window's other
  findings first, then other valid trajectories with as many changes, then any other valid trajectory (valid:
  a change its presence allows), drawn with the question's seed.

Choices are shuffled with ``random.Random(f"{seed}|{qid}")``, so a graph and a seed give the same file. In a
window of more than five visits, a TEL question keeps its answer and four of its other choices, drawn with the
same seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache
from itertools import product
from typing import Any

from graph.temporal.multivisit_facts import FIVE, IMPROVED, NEW, RESOLVED, STABLE, WORSENED, Interval

TEL, ICR, GTS = "TEL", "ICR", "GTS"
FIRST_APPEARANCE, RESOLUTION, EMERGENCE_RESOLUTION = "first appearance", "resolution", "emergence to resolution"
INTERVAL_CHANGE = "interval change"
NO_CHANGE, SINGLE_CHANGE, MULTIPLE_CHANGES = "no change", "single change", "multiple changes"
NOT_RESOLVED = "It does not resolve by T5"
"""The ``resolution`` choice of a finding that does not resolve in a five-visit window (``by T<n>`` in a window
of n visits)."""
DOUBT_CONTRADICTION = "labels contradict presence"
_EVENT = {NEW: "appeared", WORSENED: "worsened", IMPROVED: "improved", RESOLVED: "resolved"}
_AFTER = {NEW: True, WORSENED: True, STABLE: True, IMPROVED: True, RESOLVED: False, None: False}
_BEFORE = {NEW: False, WORSENED: True, STABLE: True, IMPROVED: True, RESOLVED: True, None: False}
CHOICES = 5
"""MI-CXR's five choices per question."""


@dataclass(frozen=True)
class Window:
    """Five consecutive visits of one patient: ``number`` (1-based per patient), the study ids and images
    T1..T5, and per finding its four intervals."""

    patient_id: str
    number: int
    studies: tuple[str, ...]
    images: tuple[str, ...]
    findings: dict[str, tuple[Interval, ...]]


def visit(k: int) -> str:
    """The name of visit ``k`` (1-based): ``T3``."""
    return f"T{k}"


def presence(labels: tuple[str | None, ...]) -> tuple[bool, ...] | None:
    """Presence at each of the ``len(labels) + 1`` visits from the interval labels, or None when two labels
    contradict each other at a visit."""
    out = [_BEFORE[labels[0]]]
    for k, label in enumerate(labels):
        if k and _BEFORE[label] != out[-1]:
            return None
        out.append(_AFTER[label])
    return tuple(out)


def trajectory(labels: tuple[str | None, ...], present_first: bool) -> str:
    """The GTS text of a trajectory (module docstring)."""
    parts = [f"present at {visit(1)}"] if present_first else []
    parts += [f"{_EVENT[label]} at {visit(k + 2)}" for k, label in enumerate(labels) if label in _EVENT]
    if present_first and len(parts) == 1:
        return f"present and unchanged from {visit(1)} to {visit(len(labels) + 1)}"
    return ", ".join(parts)


def changes(labels: tuple[str | None, ...]) -> int:
    """How many intervals change (labels other than stable and no edge)."""
    return sum(label in _EVENT for label in labels)


@lru_cache(maxsize=8)
def valid_trajectories(intervals: int) -> tuple[tuple[str, int], ...]:
    """Every (text, changes) of a trajectory whose labels its presence allows and that is present at some
    visit, for ``intervals`` intervals, sorted by text."""
    out = {}
    for labels in product((None, *FIVE), repeat=intervals):
        seen = presence(labels)
        if seen is not None and any(seen):
            out[trajectory(labels, seen[0])] = changes(labels)
    return tuple(sorted(out.items()))


@lru_cache(maxsize=64)
def _tiers(intervals: int, count: int) -> tuple[list[str], list[str]]:
    """The valid trajectories with ``count`` changes, and those with another number (each sorted)."""
    every = valid_trajectories(intervals)
    return [t for t, c in every if c == count], [t for t, c in every if c != count]


def _question(window: Window, qid: str, group: str, qtype: str, text: str, options: list[str], answer: str,
              seed: int, basis: dict[str, Any]) -> dict[str, Any]:
    rng = random.Random(f"{seed}|{qid}")
    choices = list(options)
    if len(choices) > CHOICES:  # windows longer than five visits: the answer and four others of its kind
        others = [c for c in choices if c != answer]
        rng.shuffle(others)
        choices = [answer] + others[:CHOICES - 1]
    rng.shuffle(choices)
    return {"qid": qid, "group_type": group, "qtype": qtype, "images": list(window.images), "question": text,
            "choices": choices, "answer": "ABCDE"[choices.index(answer)],
            "cxrkg_basis": {"patient_id": window.patient_id, "studies": list(window.studies), **basis,
                            "answer_text": answer}}


def _qid(window: Window, group: str, qtype: str, finding: str, tail: str = "") -> str:
    code = "".join(w[0] for w in qtype.split())
    return f"{window.patient_id}-w{window.number}-{group}-{code}-{finding.replace(' ', '_')}{tail}"


def _basis(finding: str, intervals: tuple[Interval, ...], used: range) -> dict[str, Any]:
    return {"finding": finding,
            "intervals": [{"from": visit(k + 1), "to": visit(k + 2), **intervals[k].basis_row()} for k in used]}


def icr_questions(window: Window, finding: str, seed: int) -> list[dict[str, Any]]:
    """One ICR question per interval of ``finding`` with a label."""
    out = []
    for k, one in enumerate(window.findings[finding]):
        if one.label is None:
            continue
        qid = _qid(window, ICR, INTERVAL_CHANGE, finding, f"-{visit(k + 1)}{visit(k + 2)}")
        text = f"How did {finding} change from {visit(k + 1)} to {visit(k + 2)}?"
        out.append(_question(window, qid, ICR, INTERVAL_CHANGE, text, list(FIVE), one.label, seed,
                             _basis(finding, window.findings[finding], range(k, k + 1))))
    return out


def tel_questions(window: Window, finding: str, labels: tuple[str | None, ...], seen: tuple[bool, ...],
                  seed: int) -> list[dict[str, Any]]:
    """The TEL questions of a finding whose labels are all beyond doubt (module docstring)."""
    n, intervals = len(seen), window.findings[finding]
    everything = _basis(finding, intervals, range(len(labels)))
    first = seen.index(True) + 1
    out = [_question(window, _qid(window, TEL, FIRST_APPEARANCE, finding), TEL, FIRST_APPEARANCE,
                     f"Across visits {visit(1)} to {visit(n)}, at which visit is {finding} first seen?",
                     [visit(k) for k in range(1, n + 1)], visit(first), seed, everything)]
    if any(seen[:-1]):
        resolved = [k + 2 for k, label in enumerate(labels) if label == RESOLVED]
        unresolved = f"It does not resolve by {visit(n)}"
        answer = visit(resolved[0]) if resolved else unresolved
        out.append(_question(window, _qid(window, TEL, RESOLUTION, finding), TEL, RESOLUTION,
                             f"At which visit is {finding} first seen resolved?",
                             [visit(k) for k in range(2, n + 1)] + [unresolved], answer, seed, everything))
    pair = _emergence_resolution(labels)
    if pair is not None:
        qid = _qid(window, TEL, EMERGENCE_RESOLUTION, finding)
        options = [f"appears at {visit(i)}, resolves at {visit(j)}" for i in range(2, n + 1) for j in range(i + 1, n + 1)]
        answer = f"appears at {visit(pair[0])}, resolves at {visit(pair[1])}"
        others = sorted(o for o in options if o != answer)
        random.Random(f"{seed}|{qid}|distractors").shuffle(others)
        out.append(_question(window, qid, TEL, EMERGENCE_RESOLUTION,
                             f"{finding[:1].upper()}{finding[1:]} appears and later resolves. At which visits does it first appear and then "
                             f"resolve?", [answer] + others[:CHOICES - 1], answer, seed, everything))
    return out


def _emergence_resolution(labels: tuple[str | None, ...]) -> tuple[int, int] | None:
    if NEW not in labels:
        return None
    start = labels.index(NEW)
    after = [k for k in range(start + 1, len(labels)) if labels[k] == RESOLVED]
    return (start + 2, after[0] + 2) if after else None


def gts_question(window: Window, finding: str, labels: tuple[str | None, ...], seen: tuple[bool, ...],
                 others: list[str], seed: int) -> dict[str, Any]:
    """The GTS question of a finding whose labels are all beyond doubt; ``others`` the trajectories of the
    window's other findings (distractors first)."""
    answer, count = trajectory(labels, seen[0]), changes(labels)
    qtype = NO_CHANGE if count == 0 else SINGLE_CHANGE if count == 1 else MULTIPLE_CHANGES
    qid = _qid(window, GTS, qtype, finding)
    rng = random.Random(f"{seed}|{qid}|distractors")
    picked: list[str] = []
    for tier in (sorted(set(others)), *_tiers(len(labels), count)):
        need = CHOICES - 1 - len(picked)
        if need <= 0:
            break
        drawn = rng.sample(tier, min(len(tier), need + len(picked) + 1))  # room for the answer and those picked
        picked += [t for t in drawn if t != answer and t not in picked][:need]
    return _question(window, qid, GTS, qtype, f"Which summary describes the course of {finding} over visits "
                     f"{visit(1)} to {visit(len(seen))}?", [answer] + picked, answer, seed,
                     _basis(finding, window.findings[finding], range(len(labels))))


def window_questions(window: Window, seed: int, left_out: dict[str, int]) -> list[dict[str, Any]]:
    """Every question of one window, findings in name order, TEL then ICR then GTS per finding; findings
    left out of TEL and GTS are counted in ``left_out`` by reason."""
    clean: dict[str, tuple[tuple[str | None, ...], tuple[bool, ...]]] = {}
    for finding, intervals in window.findings.items():
        doubt = next((i.doubt for i in intervals if i.doubt), None)
        labels = tuple(i.label for i in intervals)
        seen = None if doubt else presence(labels)
        if doubt or seen is None:
            reason = doubt or DOUBT_CONTRADICTION
            left_out[reason] = left_out.get(reason, 0) + 1
        elif any(seen):
            clean[finding] = (labels, seen)
    paths = {f: trajectory(labels, seen[0]) for f, (labels, seen) in clean.items()}
    out: list[dict[str, Any]] = []
    for finding in sorted(window.findings):
        if finding in clean:
            out += tel_questions(window, finding, *clean[finding], seed)
        out += icr_questions(window, finding, seed)
        if finding in clean:
            others = [p for f, p in paths.items() if f != finding]
            out.append(gts_question(window, finding, *clean[finding], others, seed))
    return out
