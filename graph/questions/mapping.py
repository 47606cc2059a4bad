"""The mapping of the cxrkg vocabulary to Medical-Diff-VQA's libraries (``graph/vocab/diffvqa.yaml``).

Findings map to the 30 official disease names of ``disease_lib.csv``, severity words to ``level_lib.csv``
words, regions to ``location_lib.csv`` words (a side and a zone), texture cues to ``type_lib.csv`` words
(repository Holipori/MIMIC-Diff-VQA, ``code/libs/``; see :mod:`graph.questions.templates`). The data and
the reasons for each entry are in the YAML file; this module loads it once, checks every name against the
vocabulary and the libraries, and lists what has no entry (``cxrkg diffvqa unmapped``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from graph.questions.templates import DISEASE_ORDER, LEVELS, LOCATIONS, TYPES
from graph.vocabulary import SIDES, Vocabulary, VocabularyError, vocabulary

MAPPING_FILE = Path(__file__).resolve().parent.parent / "vocab" / "diffvqa.yaml"
ZONES = ("upper", "middle", "lower", "apical")  # the location_lib.csv words that name a zone of a lung


@dataclass(frozen=True)
class Place:
    """Where a region lies in Diff-VQA's location words: ``side`` left / right, ``zone`` upper / middle /
    lower / apical, each None when the region states none."""

    side: str | None
    zone: str | None


@dataclass
class DiffVqaMapping:
    """The loaded mapping.

    Attributes:
        version: the mapping's own version; vocabulary_version: the vocabulary version it was written for.
        findings: vocabulary finding -> official disease name.
        by_anatomy: (vocabulary finding, region) -> official disease name, where it differs from ``findings``.
        levels: severity word -> level word. regions: region -> :class:`Place`. types: texture word -> type word.
    """

    version: str
    vocabulary_version: str
    findings: dict[str, str]
    by_anatomy: dict[tuple[str, str], str]
    levels: dict[str, str]
    regions: dict[str, Place]
    types: dict[str, str]

    def disease(self, finding: str, anatomy: str | None = None) -> str | None:
        """The official Diff-VQA name of a vocabulary finding stated at ``anatomy``, or None (unmapped)."""
        return self.by_anatomy.get((finding, anatomy or ""), self.findings.get(finding))

    def level(self, severity: str | None) -> str | None:
        """The level word of a severity word, or None (no word, or one outside the level library)."""
        return self.levels.get(severity) if severity else None

    def place(self, region: str) -> Place:
        """The side and zone of a region (both None for regions without a side: mediastinum, lungs, ...)."""
        return self.regions.get(region, Place(None, None))


class MappingError(VocabularyError):
    """The mapping file names a finding, region or severity word the vocabulary lacks, or a disease, level
    or type outside Diff-VQA's libraries (the message names the file and the entry)."""


def load_mapping(path: Path = MAPPING_FILE, vocab: Vocabulary | None = None) -> DiffVqaMapping:
    """Read and check a mapping file against ``vocab`` (default: the packaged vocabulary).

    Raises:
        MappingError: an entry names something the vocabulary or the libraries do not have.
        OSError, yaml.YAMLError: the file cannot be read or parsed.
    """
    vocab = vocab or vocabulary()
    raw = yaml.safe_load(path.read_text())
    findings, by_anatomy = {}, {}
    for finding, target in raw["findings"].items():
        _check(finding in vocab.findings, path, f"finding {finding!r} is not in the vocabulary")
        if isinstance(target, dict):
            for anatomy, name in target.get("by_anatomy", {}).items():
                _check(anatomy in vocab.regions, path, f"finding {finding!r}: {anatomy!r} is not a region")
                _check(name in DISEASE_ORDER, path, f"finding {finding!r}: {name!r} is not a Diff-VQA disease")
                by_anatomy[(finding, anatomy)] = name
            target = target["default"]
        _check(target in DISEASE_ORDER, path, f"finding {finding!r}: {target!r} is not a Diff-VQA disease")
        findings[finding] = target
    for word, level in raw["levels"].items():
        _check(word in vocab.severity_scores, path, f"severity {word!r} is not a vocabulary severity word")
        _check(level in LEVELS, path, f"severity {word!r}: {level!r} is not in the level library")
    regions = {}
    for pattern, (side, zone) in raw["regions"].items():
        for s in (SIDES if "{side}" in pattern else (None,)):
            region = pattern.format(side=s) if s else pattern
            _check(region in vocab.regions, path, f"region {region!r} is not in the vocabulary")
            _check(zone is None or zone in ZONES, path, f"region {region!r}: zone {zone!r} is not one of {ZONES}")
            place = Place(side.format(side=s) if side and s else side, zone)
            _check(place.side is None or place.side in LOCATIONS, path,
                   f"region {region!r}: side {place.side!r} is not in the location library")
            regions[region] = place
    for word, kind in raw["types"].items():
        _check(kind in TYPES, path, f"texture {word!r}: {kind!r} is not in the type library")
    return DiffVqaMapping(str(raw["mapping_version"]), str(raw["vocabulary"]), findings, by_anatomy,
                          dict(raw["levels"]), regions, dict(raw["types"]))


def _check(ok: bool, path: Path, message: str) -> None:
    if not ok:
        raise MappingError(f"{path}: {message}")


@lru_cache(maxsize=1)
def mapping() -> DiffVqaMapping:
    """The packaged mapping, loaded and checked once per process."""
    return load_mapping()


def unmapped(m: DiffVqaMapping | None = None, vocab: Vocabulary | None = None) -> list[dict[str, str]]:
    """Vocabulary entries without a Diff-VQA counterpart, and Diff-VQA diseases no finding maps to.

    Returns:
        rows ``{kind, name, note}``: kind ``finding`` / ``severity`` / ``region`` (vocabulary entries the
        mapping leaves out) or ``disease`` (official names nothing in the vocabulary maps to).
    """
    m, vocab = m or mapping(), vocab or vocabulary()
    rows = [{"kind": "finding", "name": f, "note": vocab.findings[f].category}
            for f in vocab.findings if f not in m.findings]
    rows += [{"kind": "severity", "name": w, "note": "not in level_lib.csv"}
             for w in vocab.severity_scores if w not in m.levels]
    rows += [{"kind": "region", "name": r, "note": "no side: no location words"}
             for r in vocab.regions if r not in m.regions]
    named = set(m.findings.values()) | set(m.by_anatomy.values())
    rows += [{"kind": "disease", "name": d.strip(), "note": "no vocabulary finding maps to it"}
             for d in DISEASE_ORDER if d not in named]
    return rows
