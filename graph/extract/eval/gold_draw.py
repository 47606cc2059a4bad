"""Draw candidate IU sentences for a gold set, as ``graph/extract/eval/gold/ANNOTATION_GUIDE.md`` §1 and §10 say.

The draw is code so that a later set can be drawn the same way and checked: segmentation (§1) gives each
sentence's character offsets in its section; the pool leaves out the reports and sentences that tests or
earlier gold sets use (§10); strata are drawn in order with one seeded shuffle. What comes out is a list of
candidates (report id, section, offsets, stratum) for a reader to label: it holds no labels, and no report
text is written anywhere by this module (the IU licence forbids redistributing edited text).

Used once per gold set: ``python -m graph.extract.eval.gold_draw --seed 20262 --per-stratum 45 --out FILE``
wrote the candidates of ``iu_sentences_2.json`` (issue 17's second held-out set), ``--seed 20264 --per-stratum 60``
those of ``iu_sentences_4.json`` (the fourth), ``--seed 20265 --per-stratum 70`` those of ``iu_sentences_5.json``
(the fifth), ``--seed 20266 --per-stratum 70`` those of ``iu_sentences_6.json`` (the sixth, held-out now).
"""

from __future__ import annotations

import argparse
import json
import random
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Sequence

from graph.datasets.iu import IUReport

GOLD_SECTIONS = ("findings", "impression")
#: §1, cut 1: a run of terminal punctuation followed by whitespace or the end of the section.
_TERMINAL = re.compile(r"[.?!]+(?=\s|$)")
#: §1: abbreviations after which a period does not end a sentence ("Dr. XXXX was notified").
_ABBREVIATIONS = ("dr.", "a.m.", "p.m.")
#: §1, cut 2: an enumeration marker inside the section ("... no acute disease 2. Low lung volumes").
_ENUMERATION = re.compile(r"(?<=\s)\d{1,2}\.(?=\s+[A-Z])")
#: §1: a leading enumeration marker to trim ("1.", "(2)", "3.,"), never the "1." of "1.5 cm".
_LEADING_MARKER = re.compile(r"^\(?\d{1,2}[.)](?!\d),?\s*")
_LETTER = re.compile(r"[A-Za-z]")


@dataclass(frozen=True)
class Candidate:
    """One drawn sentence: ``getattr(report, section)[start:end]`` of IU report ``report_id``."""

    report_id: str
    section: str
    start: int
    end: int
    stratum: str


def segment(text: str) -> list[tuple[int, int]]:
    """The sentences of one section as ``(start, end)`` character offsets into ``text`` (§1 of the guide).

    Cuts after a run of ``.?!`` followed by whitespace or the end (not after "Dr.", "a.m.", "p.m.") and
    before an enumeration marker ("2. Low ..."); trims whitespace and a leading marker; drops pieces
    without a letter. A section that does not end in punctuation ends its last sentence.
    """
    cuts = {m.end() for m in _TERMINAL.finditer(text)
            if not text[:m.end()].lower().endswith(_ABBREVIATIONS)}
    cuts |= {m.start() for m in _ENUMERATION.finditer(text)}
    spans, begin = [], 0
    for cut in sorted(cuts | {len(text)}):
        spans.append((begin, cut))
        begin = cut
    sentences = []
    for start, end in spans:
        piece = text[start:end]
        lead = len(piece) - len(piece.lstrip())
        start += lead
        end = start + len(piece.strip())
        marker = _LEADING_MARKER.match(text[start:end])
        if marker:
            start += marker.end()
        if start < end and _LETTER.search(text[start:end]):
            sentences.append((start, end))
    return sentences


def normalised(sentence: str) -> str:
    """Lower case, letters, digits and single spaces: two sentences with this text are one stock phrase."""
    return " ".join(re.sub(r"[^a-z0-9 ]", " ", sentence.lower()).split())


def in_tests_key(sentence: str) -> str:
    """The text looked up in ``tests/`` files: lower case, without final periods and spaces (§10)."""
    return sentence.lower().rstrip(". ")


def pool(reports: Sequence[IUReport], excluded_reports: set[str], tests_text: str) -> list[tuple[str, str, int, int]]:
    """Candidate sentences ``(report_id, section, start, end)`` in archive order, leaving out the reports of
    ``excluded_reports`` and sentences of 12 characters or more whose :func:`in_tests_key` occurs in
    ``tests_text`` (the lower-cased text of every file under ``tests/``)."""
    out = []
    for report in reports:
        if report.report_id in excluded_reports:
            continue
        for section in GOLD_SECTIONS:
            text = getattr(report, section)
            for start, end in segment(text):
                key = in_tests_key(text[start:end])
                if len(key) >= 12 and key in tests_text:
                    continue
                out.append((report.report_id, section, start, end))
    return out


def draw(reports: Sequence[IUReport], candidates: Iterable[tuple[str, str, int, int]],
         strata: Sequence[tuple[str, str]], seed: int, per_stratum: int) -> list[Candidate]:
    """Draw up to ``per_stratum`` sentences per stratum, strata in order (§10).

    Each stratum takes the candidates its regular expression matches (case-insensitive ``re.search``) that
    no earlier stratum drew, shuffled by one ``random.Random(seed)`` shared by all strata, skipping a
    sentence whose :func:`normalised` text was drawn already.
    """
    text_of = {r.report_id: r for r in reports}
    candidates = list(candidates)
    rng = random.Random(seed)
    taken: set[tuple[str, str, int, int]] = set()
    seen_text: set[str] = set()
    drawn: list[Candidate] = []
    for name, regex in strata:
        pattern = re.compile(regex, re.IGNORECASE)
        matching = [c for c in candidates if c not in taken
                    and pattern.search(getattr(text_of[c[0]], c[1])[c[2]:c[3]])]
        rng.shuffle(matching)
        count = 0
        for c in matching:
            if count == per_stratum:
                break
            key = normalised(getattr(text_of[c[0]], c[1])[c[2]:c[3]])
            if key in seen_text:
                continue
            seen_text.add(key)
            taken.add(c)
            drawn.append(Candidate(*c, stratum=name))
            count += 1
    return drawn


def excluded_report_ids(gold_dir: Path, tests_dir: Path, reports: Sequence[IUReport], first: int = 400) -> set[str]:
    """§10's excluded reports: those of every gold file in ``gold_dir``, report file names used in
    ``tests_dir`` (``ecgen-radiology/<id>.xml``), and the first ``first`` reports in archive order."""
    ids = {r.report_id for r in reports[:first]}
    for path in sorted(gold_dir.glob("*.json")):
        ids |= {str(row["report_id"]) for row in json.loads(path.read_text())["sentences"]}
    for path in tests_dir.rglob("*.py"):
        ids |= set(re.findall(r"ecgen-radiology/(\d+)\.xml", path.read_text()))
    return ids


def _tests_text(tests_dir: Path) -> str:
    return "\n".join(p.read_text(errors="replace").lower() for p in sorted(tests_dir.rglob("*")) if p.is_file()
                     and p.suffix in {".py", ".json", ".csv", ".txt", ".md"})


def main(argv: list[str] | None = None) -> None:
    """Write the drawn candidates (no text, no labels) as JSON to ``--out``."""
    from graph.datasets.iu import load_reports
    from graph.extract.eval.gold_eval import GOLD_DIR

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--per-stratum", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parents[3]
    reports = load_reports()
    first_set = json.loads((GOLD_DIR / "iu_sentences.json").read_text())
    strata = [(s["name"], s["regex"]) for s in first_set["selection"]["strata"]]
    excluded = excluded_report_ids(GOLD_DIR, root / "tests", reports)
    candidates = pool(reports, excluded, _tests_text(root / "tests"))
    drawn = draw(reports, candidates, strata, args.seed, args.per_stratum)
    args.out.write_text(json.dumps({"seed": args.seed, "per_stratum": args.per_stratum,
                                    "excluded_reports": len(excluded), "pool": len(candidates),
                                    "candidates": [asdict(c) for c in drawn]}, indent=1))
    print(f"{len(drawn)} candidates from {len(candidates)} pool sentences ({len(excluded)} reports excluded)")


if __name__ == "__main__":
    main()
