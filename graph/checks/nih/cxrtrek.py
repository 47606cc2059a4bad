"""An independent check of CXRTrek-format stages 2, 5 and 6 on the NIH ChestX-ray14 cohort.

Written apart from the graph code: plain pandas over the NIH tables of the torchxrayvision wheel, through the
reference states of :func:`graph.checks.nih.reference.reference_states` (per kept study and vocabulary
finding: present if any source states it, else absent if one states it absent, else not mentioned; the
event against the patient's previous study by follow-up number), and its own reading of the answers. It
never reads Neo4j or the code that writes the questions (:mod:`graph.cxrtrek`); a file from
``cxrkg cxrtrek generate`` is checked against it.

What each answer must be (docs/cxrtrek.md; NIH states findings at one region each, so a (finding, region)
question is a finding question here):

- stage 2, target ``abnormality_[f]`` (or ``foreign_body_[f]``), yes/no or a Yes/No choice: ``Yes.`` for a
  present finding, ``No.`` for an absent one; a finding not mentioned is not asked about;
- stage 5, single-choice target ``overall_change``, for every study with a previous study: ``It shows an
  unchanged trend.`` where the study's events are all persistence or there are none, else ``The findings
  have changed.``;
- stage 5, single-choice target ``change_[f]``: the event against the previous study: onset ``New.``,
  persistence ``Still present.``, resolution ``Resolved.``, no longer mentioned ``No longer mentioned.``;
  one question per event, none without;
- stage 6, target ``next_[f]``, for each finding present in a study with a next study: the choice is the next
  study's state (present ``Still present.``, absent ``Resolved.``, not mentioned ``Not mentioned.``), the
  yes/no ``Yes.`` only when it is present;
- every sample's ``ref_study_id`` / ``pos_study_id``: the previous / next kept image of the patient, or ``""``.

Questions are keyed by (study, kind, finding): one the file lacks is ``missing``, one it has beyond these is
``extra``, a different answer is ``answer``, a wrong link is ``link``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

import pandas as pd

from graph.checks.nih.reference import ABSENT, NOT_MENTIONED, PERSISTENCE, PRESENT, NIHTables, reference_states
from graph.errors import CxrkgError
from graph.formats.cxrtrek import data_of

CHANGE_TEXT = {"onset": "New.", "persistence": "Still present.", "resolution": "Resolved.",
               "no_longer_mentioned": "No longer mentioned."}
NEXT_TEXT = {PRESENT: "Still present.", ABSENT: "Resolved.", NOT_MENTIONED: "Not mentioned."}
UNCHANGED, CHANGED = "It shows an unchanged trend.", "The findings have changed."
KINDS = ("presence", "overall_change", "change", "next_choice", "next_yes_no")
MISMATCH_COLUMNS = ("study_id", "kind", "finding", "expected", "got", "problem")
_TARGET = re.compile(r"(abnormality|foreign_body|change|next)_\[(.+)\]|(overall_change)")
_LETTER = re.compile(r"[A-Z]\. ")


class CxrtrekCheckError(CxrkgError, ValueError):
    """The file to check is not a JSON array of samples with ``data_dict.cxrtrek_data``."""


@dataclass
class CxrtrekCheck:
    """What was compared: samples, questions checked per kind, and the mismatches (:data:`MISMATCH_COLUMNS`;
    ``problem`` is missing, extra, answer or link)."""

    samples: int = 0
    checked: dict[str, int] = field(default_factory=dict)
    mismatches: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(MISMATCH_COLUMNS)))


def expected_answers(tables: NIHTables, states: pd.DataFrame | None = None) -> pd.DataFrame:
    """The answers the NIH tables give: columns study_id, kind (:data:`KINDS`), finding, expected; and the
    links: a frame per study of prev_id / next_id is :func:`expected_links`."""
    s = reference_states(tables) if states is None else states
    s = s.sort_values(["patient_id", "finding", "follow_up"], kind="stable")
    s = s.assign(next_state=s.groupby(["patient_id", "finding"])["state"].shift(-1))
    told = s[s["state"].isin([PRESENT, ABSENT])]
    presence = pd.DataFrame({"study_id": told["image_id"], "kind": "presence", "finding": told["finding"],
                             "expected": told["state"].map({PRESENT: "Yes.", ABSENT: "No."})})
    with_prior = s[s["prior_state"].notna()]
    moved = with_prior["event"].notna() & (with_prior["event"] != PERSISTENCE)
    changed = moved.groupby(with_prior["image_id"]).any()
    overall = pd.DataFrame({"study_id": changed.index, "kind": "overall_change", "finding": "",
                            "expected": changed.map({True: CHANGED, False: UNCHANGED}).to_numpy()})
    events = s[s["event"].notna()]
    change = pd.DataFrame({"study_id": events["image_id"], "kind": "change", "finding": events["finding"],
                           "expected": events["event"].map(CHANGE_TEXT)})
    later = s[(s["state"] == PRESENT) & s["next_state"].notna()]
    choice = pd.DataFrame({"study_id": later["image_id"], "kind": "next_choice", "finding": later["finding"],
                           "expected": later["next_state"].map(NEXT_TEXT)})
    yes_no = choice.assign(kind="next_yes_no",
                           expected=(later["next_state"] == PRESENT).map({True: "Yes.", False: "No."}))
    return pd.concat([presence, overall, change, choice, yes_no], ignore_index=True)


def expected_links(states: pd.DataFrame) -> pd.DataFrame:
    """study_id -> prev_id, next_id (``""`` when none), by follow-up number within each patient."""
    studies = states[["patient_id", "follow_up", "image_id"]].drop_duplicates().sort_values(["patient_id", "follow_up"])
    by = studies.groupby("patient_id")["image_id"]
    return pd.DataFrame({"prev_id": by.shift(1).fillna(""), "next_id": by.shift(-1).fillna("")}).set_index(
        studies["image_id"])


def _kind(item: dict[str, Any]) -> tuple[str, str] | None:
    """(kind, finding) of a checked question, or None."""
    m = _TARGET.fullmatch(str(item.get("target") or ""))
    if m is None:
        return None
    prefix, finding, stage, qtype = m.group(1) or m.group(3), m.group(2) or "", item.get("stage"), item.get("qtype")
    if stage == 5 and prefix == "overall_change" and qtype == "single-choice":
        return "overall_change", finding
    if stage == 2 and prefix in ("abnormality", "foreign_body") and qtype in ("yes_no", "single-choice"):
        return "presence", finding
    if stage == 5 and prefix == "change" and qtype == "single-choice":
        return "change", finding
    if stage == 6 and prefix == "next":
        return ("next_choice" if qtype == "single-choice" else "next_yes_no"), finding
    return None


def _answer(item: dict[str, Any]) -> str:
    """The answer's text without its option letter: ``"B. Yes."`` -> ``"Yes."``."""
    text = (item.get("answer_list") or [item.get("answer", "")])[0]
    return _LETTER.sub("", str(text), count=1) if _LETTER.match(str(text)) else str(text)


def answers_of(samples: Iterable[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(answers: study_id, kind, finding, got; links: study_id -> ref_id, pos_id) of a file's samples.

    Raises:
        CxrtrekCheckError: a sample without ``data_dict.cxrtrek_data``.
    """
    rows, links = [], []
    for index, sample in enumerate(samples):
        try:
            data = data_of(sample)
        except (KeyError, TypeError):
            raise CxrtrekCheckError(f"sample {index}: no data_dict.cxrtrek_data") from None
        links.append((str(data["study_id"]), data.get("ref_study_id", ""), data.get("pos_study_id", "")))
        for item in data.get("content", []):
            kind = _kind(item)
            if kind is not None:
                rows.append((str(data["study_id"]), *kind, _answer(item)))
    answers = pd.DataFrame(rows, columns=["study_id", "kind", "finding", "got"])
    return answers, pd.DataFrame(links, columns=["study_id", "ref_id", "pos_id"]).set_index("study_id")


def _link_mismatches(links: pd.DataFrame, expected: pd.DataFrame) -> list[tuple]:
    joined = links.join(expected, how="left")
    bad = joined[(joined["ref_id"] != joined["prev_id"]) | (joined["pos_id"] != joined["next_id"])]
    return [(sid, "link", "", f"{r.prev_id or '-'} / {r.next_id or '-'}", f"{r.ref_id or '-'} / {r.pos_id or '-'}",
             "link") for sid, r in bad.iterrows()]


def check_samples(samples: Iterable[dict[str, Any]], tables: NIHTables) -> CxrtrekCheck:
    """Check a file's stage 2, 5 and 6 answers and its links against the NIH tables, on the file's studies
    (``samples`` is read once: :func:`read_file`'s stream holds one sample at a time).

    Returns:
        A :class:`CxrtrekCheck`.

    Raises:
        CxrtrekCheckError: a sample without ``data_dict.cxrtrek_data``.
    """
    states = reference_states(tables)
    got, links = answers_of(samples)
    expected = expected_answers(tables, states)
    expected = expected[expected["study_id"].isin(set(links.index))]
    both = expected.merge(got, on=["study_id", "kind", "finding"], how="outer", indicator=True)
    both["problem"] = both["_merge"].map({"left_only": "missing", "right_only": "extra", "both": "answer"})
    bad = both[(both["_merge"] != "both") | (both["expected"] != both["got"])]
    rows = [tuple(r) for r in bad[list(MISMATCH_COLUMNS)].fillna("").itertuples(index=False)]
    rows += _link_mismatches(links, expected_links(states))
    checked = both[both["_merge"] == "both"]["kind"].value_counts().to_dict()
    return CxrtrekCheck(len(links), {k: int(checked.get(k, 0)) for k in KINDS},
                        pd.DataFrame(rows, columns=list(MISMATCH_COLUMNS)))


def read_file(path: Path) -> Iterator[dict[str, Any]]:
    """A CXRTrek-format file's samples as plain JSON, one at a time. A file written one sample per line (as
    ``cxrkg cxrtrek generate`` writes it: ``[``, then a sample per line) is read line by line, so that the
    whole cohort's file (about 1.2 GB) is never held at once; any other layout is parsed whole.

    Raises:
        CxrtrekCheckError: unreadable, not JSON, or not an array.
    """
    try:
        with Path(path).open(encoding="utf-8") as fh:
            first, second = fh.readline().strip(), fh.readline().strip().rstrip(",")
            if first == "[" and second.startswith("{") and _parses(second):
                yield json.loads(second)
                for number, line in enumerate(fh, start=3):
                    line = line.strip().rstrip(",")
                    if line == "]":
                        return
                    try:
                        yield json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise CxrtrekCheckError(f"{path} line {number}: not one JSON sample ({exc})") from exc
                return
        rows = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CxrtrekCheckError(f"{path}: not a readable JSON file ({exc})") from exc
    if not isinstance(rows, list):
        raise CxrtrekCheckError(f"{path}: not a JSON array of samples")
    yield from rows


def _parses(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except json.JSONDecodeError:
        return False
