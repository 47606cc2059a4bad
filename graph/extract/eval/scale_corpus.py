"""A synthetic corpus of MIMIC-CXR length for extraction benchmarks: report text assembled from IU report
sentences (read from the torchxrayvision wheel at run time, never stored) to word counts drawn from a
distribution of MIMIC-CXR findings plus impression length.

MIMIC-CXR reports are credentialed, so their lengths are modelled, not read: a lognormal word count with
mean :data:`MEAN_WORDS` and log-space spread :data:`SIGMA`. The findings part's mean, 53 words, is the
average findings length of MIMIC-CXR's training split as R2Gen reports it (Chen et al., "Generating
Radiology Reports via Memory-driven Transformer", EMNLP 2020, Table 1: 53.00 tokens, against 35.99 for IU
X-ray); the impression's mean (18 words, a third of the findings') and the spread are cxrkg's assumptions.
A report's words go three quarters to its findings section, the rest to its impression, each filled with
whole sentences drawn (seeded) from the IU sentences of that section.

Output: a CSV (``report_id``, ``patient_id``, ``text`` = ``"FINDINGS: ... IMPRESSION: ..."``), the input
``cxrkg extract FILE.csv --patient-column patient_id`` reads.
"""

from __future__ import annotations

import csv
import math
import random
import re
from pathlib import Path
from typing import Iterable

from graph.datasets.iu import IUReport

FINDINGS_MEAN_WORDS = 53
IMPRESSION_MEAN_WORDS = 18
MEAN_WORDS = FINDINGS_MEAN_WORDS + IMPRESSION_MEAN_WORDS
SIGMA = 0.5
_FINDINGS_SHARE = 0.75
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")


def word_counts(n: int, seed: int = 0) -> list[int]:
    """``n`` report lengths in words (at least 8), lognormal with mean :data:`MEAN_WORDS`, spread
    :data:`SIGMA`."""
    rng = random.Random(seed)
    mu = math.log(MEAN_WORDS) - SIGMA ** 2 / 2
    return [max(8, round(rng.lognormvariate(mu, SIGMA))) for _ in range(n)]


def sentence_pools(reports: Iterable[IUReport]) -> tuple[list[str], list[str]]:
    """(findings sentences, impression sentences) of the reports, in report order.

    Raises:
        ValueError: either pool is empty (no report has that section).
    """
    findings, impression = [], []
    for r in reports:
        findings += [s for s in _SENTENCE_END.split(r.findings.strip()) if s]
        impression += [s for s in _SENTENCE_END.split(r.impression.strip()) if s]
    if not findings or not impression:
        raise ValueError("no findings or no impression sentences to build reports from")
    return findings, impression


def _fill(pool: list[str], words: int, rng: random.Random) -> str:
    out, count = [], 0
    while count < words:
        sentence = pool[rng.randrange(len(pool))]
        out.append(sentence)
        count += len(sentence.split())
    return " ".join(out)


def write_corpus(path: Path, n: int, pools: tuple[list[str], list[str]], seed: int = 0,
                 patients: int = 65_000) -> int:
    """Write ``n`` synthetic reports to the CSV ``path`` (module docstring); returns the total word count.
    Report ``r<i>`` belongs to patient ``p<i mod patients>`` (MIMIC-CXR: about 65,000 patients)."""
    findings, impression = pools
    rng = random.Random(seed + 1)
    total = 0
    with Path(path).open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["report_id", "patient_id", "text"])
        for i, words in enumerate(word_counts(n, seed)):
            text = (f"FINDINGS: {_fill(findings, round(words * _FINDINGS_SHARE), rng)} "
                    f"IMPRESSION: {_fill(impression, max(1, round(words * (1 - _FINDINGS_SHARE))), rng)}")
            total += len(text.split()) - 2
            w.writerow([f"r{i}", f"p{i % patients}", text])
    return total
