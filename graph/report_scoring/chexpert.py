"""CheXpert's 14 observations from vocabulary findings, and F1-CheXbert's corpus figures over them.

The table is ``graph/vocab/chexpert.yaml`` (versioned with the vocabulary, listed in docs/report_scoring.md).
F1-CheXbert (Smit et al. 2020; Delbrouck et al. 2022, RRG24): each report's 14 labels, positive and uncertain
counted as 1; micro and macro F1 over the corpus, over all 14 and over the 5 most common.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Iterable, NamedTuple, Sequence

import yaml

from graph.vocabulary import VOCAB_FILE, Vocabulary, VocabularyError, vocabulary

CHEXPERT_FILE = VOCAB_FILE.with_name("chexpert.yaml")
NO_FINDING, SUPPORT_DEVICES = "No Finding", "Support Devices"


class CheXpertMap(NamedTuple):
    """The table: ``version``, the ``vocabulary`` version it was checked against, the 14 ``observations`` in
    CheXpert's order, vocabulary finding -> the observations it counts for, and the ``top5`` subset."""

    version: str
    vocabulary: str
    observations: tuple[str, ...]
    of_finding: dict[str, tuple[str, ...]]
    top5: tuple[str, ...]

    def labels(self, positive: Iterable[str]) -> frozenset[str]:
        """The observations a report is positive for, given its positive vocabulary findings."""
        out = {o for f in positive for o in self.of_finding.get(f, ())}
        if not out - {SUPPORT_DEVICES}:
            out.add(NO_FINDING)
        return frozenset(out)


def load_chexpert(path: Path = CHEXPERT_FILE, vocab: Vocabulary | None = None) -> CheXpertMap:
    """Read and check the table.

    Raises:
        VocabularyError: not 14 observations, a finding or category the vocabulary lacks, a top5 entry that is
            no observation (the message names the file and the entry).
    """
    v = vocab or vocabulary()
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    observations = tuple(raw["observations"])
    if len(observations) != 14:
        raise VocabularyError(f"{path}: {len(observations)} observations, CheXpert has 14")
    of_finding: dict[str, list[str]] = {}
    for name, spec in raw["observations"].items():
        if isinstance(spec, dict):
            cats = set(spec["categories"])
            findings = [f.name for f in v.findings.values() if f.category in cats]
        else:
            findings = list(spec)
        for f in findings:
            if f not in v.findings:
                raise VocabularyError(f"{path}: observations.{name}: {f!r} is not a finding of the vocabulary")
            of_finding.setdefault(f, []).append(name)
    top5 = tuple(raw["top5"])
    if unknown := [o for o in top5 if o not in observations]:
        raise VocabularyError(f"{path}: top5: {', '.join(unknown)} not among the observations")
    return CheXpertMap(str(raw["version"]), str(raw["vocabulary"]), observations,
                       {f: tuple(o) for f, o in of_finding.items()}, top5)


@functools.cache
def chexpert_map() -> CheXpertMap:
    """:func:`load_chexpert` of the packaged table, once per process."""
    return load_chexpert()


def corpus_f1(generated: Sequence[frozenset[str]], reference: Sequence[frozenset[str]],
              observations: Sequence[str]) -> tuple[float, float, dict[str, float]]:
    """Micro F1, macro F1 and F1 per observation of the generated reports' label sets against the references'
    (paired by position), over ``observations``. An observation positive in no report of either side has F1
    0 in the macro mean, as scikit-learn's ``f1_score(zero_division=0)`` that F1-CheXbert uses.

    Raises:
        ValueError: the sequences differ in length.
    """
    if len(generated) != len(reference):
        raise ValueError(f"{len(generated)} generated label sets, {len(reference)} reference ones")
    per: dict[str, float] = {}
    tp_all = fp_all = fn_all = 0
    for o in observations:
        tp = sum(o in g and o in r for g, r in zip(generated, reference, strict=True))
        fp = sum(o in g and o not in r for g, r in zip(generated, reference, strict=True))
        fn = sum(o not in g and o in r for g, r in zip(generated, reference, strict=True))
        per[o] = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
        tp_all, fp_all, fn_all = tp_all + tp, fp_all + fp, fn_all + fn
    micro = 2 * tp_all / (2 * tp_all + fp_all + fn_all) if tp_all else 0.0
    macro = sum(per.values()) / len(per) if per else 0.0
    return micro, macro, per
