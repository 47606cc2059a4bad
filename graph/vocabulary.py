"""The normalisation vocabulary: Chest ImaGenome regions and attributes, their synonyms and hierarchy.

The data live in ``graph/vocab/chest_xray.yaml`` (schema as data, versioned); this module loads it once
and answers "which region / finding does this surface form mean?". Sources of names and labels are
given in the YAML header.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping

import yaml

from graph.errors import CxrkgError

VOCAB_FILE = Path(__file__).with_name("vocab") / "chest_xray.yaml"
SIDES = ("left", "right")

#: Chest ImaGenome attribute categories that name findings (docs/formats.md §1.4); ``nlp`` and the
#: cue categories (texture, temporal, severity, laterality) describe findings and are not findings.
FINDING_CATEGORIES = frozenset(
    {"anatomicalfinding", "disease", "technicalassessment", "tubesandlines", "device"}
)

class VocabularyError(CxrkgError, ValueError):
    """Raised when the vocabulary file is inconsistent (a parent or default region that does not exist)."""


@dataclass(frozen=True)
class Region:
    """One anatomical region: a Chest ImaGenome bbox name, a report-only region or a cxrkg grouping."""

    name: str
    code: str
    side: str | None
    parent: str | None
    has_bbox: bool
    cuis: tuple[str, ...]


@dataclass(frozen=True)
class Finding:
    """One Chest ImaGenome attribute with its category, IS_A parents, CUIs and surface forms."""

    name: str
    category: str
    parents: tuple[str, ...]
    cuis: tuple[str, ...]
    synonyms: tuple[str, ...]
    region_patterns: tuple[str, ...]
    #: forms that name the finding only as the subject of a stated change ("heart size has increased"), and
    #: otherwise a normal structure: not synonyms, so keyword matching leaves them alone
    subjects: tuple[str, ...] = ()


_SPACE = re.compile(r"\s+")
_EDGE_PUNCT = re.compile(r"^[^\w/]+|[^\w/]+$")


@lru_cache(maxsize=1 << 16)  # the extractor asks for the same few thousand phrases all the time
def normalise_phrase(text: str) -> str:
    """Lower-case, collapse whitespace, drop punctuation at the ends: ``" Pleural  Effusions."`` -> ``"pleural effusions"``."""
    return _EDGE_PUNCT.sub("", _SPACE.sub(" ", text.strip().lower()))


@lru_cache(maxsize=1 << 16)  # RadGraph documents ask for the same anatomy phrases all the time
def normalise_region_phrase(text: str) -> str:
    """:func:`normalise_phrase`, with ``left-sided`` / ``right sided`` read as ``left`` / ``right``."""
    return re.sub(r"\b(left|right)[- ]sided\b", r"\1", normalise_phrase(text))


@dataclass
class Vocabulary:
    """Lookup tables built from the YAML vocabulary.

    Attributes:
        version: the vocabulary's version string, stored with every load and export.
        regions: region name -> Region.
        findings: finding name -> Finding.
        severity_scores: severity word -> ordinal 1 (mild) .. 3 (marked).
        change_labels: RadGraph2 change label (and code aliases) -> progression class.
        comparison_labels: Chest ImaGenome comparison label -> progression class.
        normal_statements: (subject, predicate), both normalised phrases, -> the findings the statement
            asserts absent (``("lungs", "clear")`` -> ``("lung opacity",)``); cxrkg's table, see the YAML file.
    """

    version: str
    regions: dict[str, Region]
    findings: dict[str, Finding]
    severity_scores: dict[str, int]
    change_labels: dict[str, str]
    comparison_labels: dict[str, str]
    normal_statements: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    _finding_forms: dict[str, str] = field(default_factory=dict, repr=False)
    _region_forms: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    _memo: dict[str, dict] = field(default_factory=dict, repr=False, compare=False)

    def memo(self, table: str) -> dict:
        """A cache table of this vocabulary by name, empty at first: for the answers of pure functions of the
        vocabulary and a phrase (a RadGraph label's kind, a phrase's side), which parsers look up per entity."""
        return self._memo.setdefault(table, {})

    def finding_for(self, phrase: str) -> str | None:
        """The finding a surface form names (``"effusions"`` -> ``"pleural effusion"``), or None."""
        return self._finding_forms.get(normalise_phrase(phrase))

    def regions_for(self, phrase: str) -> tuple[str, ...]:
        """The regions an anatomy phrase names (``"left base"`` -> ``("left lower lung zone",)``); () if unknown."""
        return self._region_forms.get(normalise_region_phrase(phrase), ())

    def default_regions(self, finding: str, side: str | None) -> tuple[str, ...]:
        """Where a finding mentioned without anatomy is placed: on ``side`` if given, else on both sides.

        Raises:
            KeyError: unknown finding.
        """
        out: list[str] = []
        for pattern in self.findings[finding].region_patterns:
            if "{side}" in pattern:
                out.extend(pattern.format(side=s) for s in ((side,) if side in SIDES else SIDES))
            else:
                out.append(pattern)
        return tuple(out)

    def normal_absences(self, subject: str, predicate: str) -> tuple[str, ...]:
        """The findings a normal statement asserts absent (``"The lungs"``, ``"clear"`` -> ``("lung opacity",)``);
        () when the pair is not a normal statement. A leading article of the subject is ignored."""
        subject = re.sub(r"^(the|both) ", "", normalise_phrase(subject))
        return self.normal_statements.get((subject, normalise_phrase(predicate)), ())

    @property
    def normal_subjects(self) -> set[str]:
        """Every subject phrase of the normal-statement table."""
        return {s for s, _ in self.normal_statements}

    @property
    def normal_predicates(self) -> set[str]:
        """Every predicate phrase of the normal-statement table."""
        return {p for _, p in self.normal_statements}

    def severity_of(self, phrase: str) -> int | None:
        """Ordinal severity of a word such as ``"moderate"`` (2), or None when it is not a severity word."""
        return self.severity_scores.get(normalise_phrase(phrase))

    def side_of(self, phrase: str) -> str | None:
        """``"left"``, ``"right"``, ``"bilateral"`` or None from the words of a phrase."""
        return side_of_phrase(phrase)


@lru_cache(maxsize=1 << 16)  # asked per RadGraph anatomy entity, of a few thousand phrases
def side_of_phrase(phrase: str) -> str | None:
    """``"left"``, ``"right"``, ``"bilateral"`` or None from the words of a phrase (:meth:`Vocabulary.side_of`)."""
    words = set(normalise_phrase(phrase).replace("-", " ").split())
    left, right = "left" in words, "right" in words
    if (left and right) or words & {"bilateral", "bilaterally", "bibasilar", "bibasal", "both", "biapical"}:
        return "bilateral"
    return "left" if left else "right" if right else None


def ancestors(finding: str, parents: Mapping[str, Iterable[str]]) -> set[str]:
    """The IS_A ancestors of ``finding``, itself not included, under ``parents`` (finding -> its parents,
    as :attr:`Finding.parents` gives them)."""
    seen: set[str] = set()
    todo = [finding]
    while todo:
        for p in parents.get(todo.pop(), ()):
            if p not in seen:
                seen.add(p)
                todo.append(p)
    return seen


def highest_severity(stated: Iterable[tuple[int | None, str | None]]) -> tuple[int | None, str | None]:
    """The highest of stated severities, as (ordinal score, word): the highest score (1 mild .. 3 marked,
    :attr:`Vocabulary.severity_scores`); between words of one score the alphabetically first (a missing word
    first), so that the answer never depends on the order the mentions were read. Pairs without a score
    are left out; (None, None) when none has one. Every summary of severities in cxrkg uses this one rule:
    an observation's, an episode's and a Medical-Diff-VQA answer's level.

    >>> highest_severity([(2, "moderate"), (3, "severe"), (None, "small"), (3, "marked")])
    (3, 'marked')
    """
    scored = [(score, word) for score, word in stated if score is not None]
    if not scored:
        return None, None
    return min(scored, key=lambda pair: (-pair[0], pair[1] or ""))


def _expand_side(pattern: str) -> list[tuple[str, str | None]]:
    return [(pattern.format(side=s), s) for s in SIDES] if "{side}" in pattern else [(pattern, None)]


def load_vocabulary(path: Path = VOCAB_FILE) -> Vocabulary:
    """Parse a vocabulary YAML file and check its internal references.

    Raises:
        VocabularyError: a parent region, IS_A parent or default region names nothing in the file.
        OSError, yaml.YAMLError: the file cannot be read or parsed.
    """
    raw = yaml.safe_load(path.read_text())
    regions = _regions(raw, path)
    findings = _findings(raw, regions, path)
    finding_forms: dict[str, str] = {}
    for f in findings.values():
        for form in (f.name, *f.synonyms, *f.subjects):
            finding_forms.setdefault(normalise_phrase(form), f.name)
    return Vocabulary(
        version=str(raw["version"]),
        normal_statements=_normal_statements(raw, findings, path),
        regions=regions,
        findings=findings,
        severity_scores={normalise_phrase(k): int(v) for k, v in raw["severity_words"].items()},
        change_labels=dict(raw["change_labels"]),
        comparison_labels=dict(raw["comparison_labels"]),
        _finding_forms=finding_forms,
        _region_forms=_region_forms(raw, regions, path),
    )


def _regions(raw: dict, path: Path) -> dict[str, Region]:
    """The ``regions`` table by name.

    Raises:
        VocabularyError: a region's parent is not a region.
    """
    regions = {
        name: Region(name, code, side, parent, bool(bbox), tuple(cuis))
        for name, (code, side, parent, bbox, cuis) in raw["regions"].items()
    }
    for r in regions.values():
        if r.parent and r.parent not in regions:
            raise VocabularyError(f"{path}: region {r.name!r}: parent {r.parent!r} is not a region")
    return regions


def _findings(raw: dict, regions: dict[str, Region], path: Path) -> dict[str, Finding]:
    """The ``findings`` table by name.

    Raises:
        VocabularyError: an IS_A parent is not a finding, or a default region (a side expanded) is not a region.
    """
    findings = {
        name: Finding(
            name=name,
            category=spec["category"],
            parents=tuple(spec.get("is_a", ())),
            cuis=tuple(spec.get("cuis", ())),
            synonyms=tuple(spec.get("synonyms", ())),
            region_patterns=tuple(spec["regions"]),
            subjects=tuple(spec.get("subjects", ())),
        )
        for name, spec in raw["findings"].items()
    }
    for f in findings.values():
        if unknown := [p for p in f.parents if p not in findings]:
            raise VocabularyError(f"{path}: finding {f.name!r}: is_a {unknown[0]!r} is not a finding")
        for pattern in f.region_patterns:
            for region, _ in _expand_side(pattern):
                if region not in regions:
                    raise VocabularyError(f"{path}: finding {f.name!r}: region {region!r} is not a region")
    return findings


def _region_forms(raw: dict, regions: dict[str, Region], path: Path) -> dict[str, tuple[str, ...]]:
    """Normalised phrase -> the regions it names: each region's name, and the ``region_synonyms`` with their
    ``{side}`` expanded (the first entry of a phrase wins).

    Raises:
        VocabularyError: a synonym names a region that does not exist.
    """
    region_forms: dict[str, tuple[str, ...]] = {normalise_phrase(n): (n,) for n in regions}
    for pattern, targets in raw["region_synonyms"].items():
        for form, side in _expand_side(pattern):
            expanded = tuple(t.format(side=side) if side else t for t in targets)
            for t in expanded:
                if t not in regions:
                    raise VocabularyError(f"{path}: region synonym {form!r} -> {t!r} is not a region")
            region_forms.setdefault(normalise_phrase(form), expanded)
    return region_forms


def _normal_statements(raw: dict, findings: dict[str, Finding], path: Path) -> dict[tuple[str, str], tuple[str, ...]]:
    """The ``normal_statements`` table, every (subject, predicate) pair spelled out; pairs named by two entries
    assert the union of their findings.

    Raises:
        VocabularyError: an entry names an unknown predicate group (``predicates``) or finding (``absent``).
    """
    groups = raw.get("normal_predicates", {})
    out: dict[tuple[str, str], tuple[str, ...]] = {}
    for entry in raw.get("normal_statements", []):
        unknown = [g for g in entry["predicates"] if g not in groups] + [f for f in entry["absent"] if f not in findings]
        if unknown:
            raise VocabularyError(f"{path}: normal statement {entry['subjects'][0]!r}: {unknown[0]!r} is not a "
                                  "predicate group or finding")
        for subject in entry["subjects"]:
            for group in entry["predicates"]:
                for predicate in groups[group]:
                    key = (normalise_phrase(subject), normalise_phrase(predicate))
                    out[key] = tuple(dict.fromkeys(out.get(key, ()) + tuple(entry["absent"])))
    return out


@lru_cache(maxsize=1)
def vocabulary() -> Vocabulary:
    """The packaged vocabulary, loaded once per process."""
    return load_vocabulary()
