"""The rules extractor writes sides in RadGraph's schema: a side word is an anatomy entity its finding is
``located_at``, joined by anatomy ``modify`` to the region written with it; ingestion reads the same sides and
regions as from the form written before (a side word modifying the finding). Report sentences here are made up
for these tests; the IU reports are read from the torchxrayvision wheel."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.extract

from graph.formats.radgraph.schema import written_violations
from tests.fixtures.radgraph_schema import extracted, legacy_form, mentions, relation

SENTENCES = [
    "Small left pleural effusion.",
    "Mild left basal atelectasis.",
    "Both lungs are clear.",
    "Clear left lung.",
    "Left greater than right lung base scarring with possible small effusions.",
    "Calcified right and left hilar lymph nodes.",
    "Small bilateral pleural effusions and bibasilar atelectasis.",
    "Right upper / mid lung nodular densities versus scarring.",
    "Opacities in the upper lungs bilaterally.",
    "Effusion at the right base and atelectasis at the left base.",
    "Mild dextro curvature of the thoracic spine.",
    "Left-sided pacemaker with leads in the right atrium and right ventricle. These are stable.",
    "Blunting of the left costophrenic angle. This may be a trace effusion or a pleural reaction.",
]


@pytest.mark.parametrize("text", SENTENCES, ids=[s[:32] for s in SENTENCES])
def test_every_relation_is_one_the_schema_has(text):
    assert not written_violations(extracted(text))


@pytest.mark.parametrize("text", SENTENCES, ids=[s[:32] for s in SENTENCES])
def test_ingestion_reads_the_sides_and_regions_of_the_earlier_form(text):
    doc = extracted(text)
    assert mentions(doc) == mentions(legacy_form(doc))


def test_a_side_without_a_region_is_the_place_of_its_finding():
    doc = extracted("Small left pleural effusion.")
    assert relation(doc, "pleural effusion", "located_at") == ["left"]
    assert relation(doc, "left", "modify") == []


def test_a_side_written_before_its_region_modifies_the_region():
    doc = extracted("Both lungs are clear. The right lung is clear.")
    assert relation(doc, "Both", "modify") == ["lungs"] and relation(doc, "right", "modify") == ["lung"]
    assert relation(doc, "clear", "located_at") == ["lungs", "lung"]
    assert {(m[0], m[3]) for m in mentions(doc)} == {("lung opacity", "bilateral"), ("lung opacity", "right")}


def test_two_sides_of_one_finding_both_stay_its_places():
    doc = extracted("Left greater than right lung base scarring.")
    assert {(m[0], m[3]) for m in mentions(doc)} == {("pleural/parenchymal scarring", "bilateral")}
    assert "lung" not in relation(doc, "right", "modify")


def test_a_curve_direction_is_the_place_a_schema_reader_sees():
    from graph.extract.eval.evaluate import curve_sides
    from graph.vocabulary import vocabulary

    doc = extracted("Mild dextro curvature of the thoracic spine.")
    assert "dextro" in relation(doc, "curvature", "located_at")
    assert curve_sides(doc, "scoliosis", vocabulary()) == {"right"}


@pytest.fixture(scope="module")
def iu_docs():
    from graph.datasets import iu, wheel
    from graph.extract.rules import extract

    try:
        reports = iu.load_reports()[:400]
    except wheel.WheelUnavailable as exc:
        pytest.skip(f"IU reports unavailable: {exc}")
    return list(extract([(r.report_id, dict(r.sections())) for r in reports]))


@pytest.mark.network
def test_iu_extraction_follows_the_schema_and_loads_as_before(iu_docs):
    assert sum(sum(written_violations(doc).values()) for _, doc in iu_docs) == 0
    differ = [key for key, doc in iu_docs if mentions(doc, key) != mentions(legacy_form(doc), key)]
    assert differ == []
