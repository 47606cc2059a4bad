"""The MIMIC-length synthetic corpus of the extraction benchmark: lengths, sections, determinism, and that
``cxrkg extract`` reads it. Report text here is synthetic."""

from __future__ import annotations

import statistics

import pytest

from graph.extract.inputs import CsvColumns, iter_csv
from graph.datasets.iu import IUReport
from graph.extract.eval.scale_corpus import MEAN_WORDS, sentence_pools, word_counts, write_corpus

REPORTS = [IUReport(str(i), f"{i}.xml", "", "", "The heart is normal. No effusion. Small left effusion is seen.",
                    "No acute disease. Stable.", (), (), ()) for i in range(3)]


def test_word_counts_follow_the_model():
    counts = word_counts(20_000, seed=3)
    assert abs(statistics.mean(counts) - MEAN_WORDS) < 2 and min(counts) >= 8
    assert statistics.median(counts) < statistics.mean(counts)  # right-skewed, as report lengths are
    assert counts == word_counts(20_000, seed=3)


def test_corpus_is_a_csv_the_extractor_reads(tmp_path):
    path = tmp_path / "c.csv"
    words = write_corpus(path, 50, sentence_pools(REPORTS), seed=1, patients=7)
    rows = list(iter_csv(path, CsvColumns(patient="patient_id")))
    assert [r.doc_key for r in rows] == [f"r{i}" for i in range(50)] and {r.patient_id for r in rows} == {
        f"p{i}" for i in range(7)}
    assert all(r.report.startswith("FINDINGS: ") and " IMPRESSION: " in r.report for r in rows)
    assert words >= sum(word_counts(50, seed=1))  # whole sentences: at least the drawn length
    again = tmp_path / "d.csv"
    write_corpus(again, 50, sentence_pools(REPORTS), seed=1, patients=7)
    assert again.read_bytes() == path.read_bytes()


def test_reports_without_sections_give_no_pool():
    with pytest.raises(ValueError, match="no findings or no impression"):
        sentence_pools([IUReport("1", "1.xml", "", "", "", "", (), (), ())])
