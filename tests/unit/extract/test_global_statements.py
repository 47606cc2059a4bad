"""Global statements of no acute abnormality (the annotation guide's §4 and §9a) name no finding, also when they
close a report that names chronic findings; the RadGraph document still holds their entities, as RadGraph
annotates them (the denied head OBS-DA located at its anatomy, its qualifiers OBS-DA modifying it). Sentences
are made up for these tests."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.extract

from tests.fixtures.radgraph_schema import extracted, found


def entities(doc: dict) -> set[tuple[str, str, tuple[tuple[str, str], ...]]]:
    """(tokens, label, sorted (relation, target tokens)) of every entity of a RadGraph document."""
    ents = doc["entities"]
    return {(e["tokens"], e["label"], tuple(sorted((r, ents[t]["tokens"]) for r, t in e["relations"])))
            for e in ents.values()}


@pytest.mark.parametrize("text", [
    "No acute cardiopulmonary abnormality.",
    "No acute findings in the chest.",
    "No evidence of active disease.",
    "No acute disease.",
], ids=["cardiopulmonary", "findings-in-chest", "active-disease", "acute-disease"])
def test_a_global_statement_names_no_finding(text):
    assert found(text, "impression") == set()


def test_a_global_statement_after_chronic_findings_leaves_them_as_they_are():
    assert found("Stable left basilar scarring. No acute cardiopulmonary abnormality.", "impression") == {
        ("pleural/parenchymal scarring", "present", "left", "CHAN-NC")}


@pytest.mark.parametrize("text, expected", [
    ("No acute cardiopulmonary process.", {
        ("acute", "OBS-DA", (("modify", "process"),)),
        ("cardiopulmonary", "ANAT-DP", ()),
        ("process", "OBS-DA", (("located_at", "cardiopulmonary"),))}),
    ("No evidence of active disease.", {
        ("active", "OBS-DA", (("modify", "disease"),)),
        ("disease", "OBS-DA", ())}),
    ("No acute findings in the chest.", {
        ("acute", "OBS-DA", (("modify", "findings"),)),
        ("chest", "ANAT-DP", ()),
        ("findings", "OBS-DA", (("located_at", "chest"),))}),
    ("Negative for acute intrathoracic process.", {
        ("acute", "OBS-DA", (("modify", "process"),)),
        ("intrathoracic", "ANAT-DP", ()),
        ("process", "OBS-DA", (("located_at", "intrathoracic"),))}),
    ("No other acute or significant osseous abnormality.", {
        ("acute", "OBS-DA", (("modify", "abnormality"),)),
        ("significant", "OBS-DA", (("modify", "abnormality"),)),
        ("osseous", "ANAT-DP", ()),
        ("abnormality", "OBS-DA", (("located_at", "osseous"),))}),
    ("No signs of acute disease.", {
        ("acute", "OBS-DA", (("modify", "disease"),)),
        ("disease", "OBS-DA", ())}),
], ids=["cardiopulmonary-process", "evidence-of-active", "in-the-chest", "negative-for", "coordinated", "signs-of"])
def test_a_global_statement_has_radgraph_entities(text, expected):
    assert entities(extracted(text, "impression")) == expected


def test_the_statement_ends_the_bare_statement_of_its_sentence():
    """A head with neither a qualifier nor a place stands as a statement only at its clause's end, and a head
    followed by what it names ("no findings of pneumonia") or a comparison ("no significant change") is none."""
    assert entities(extracted("No disease.", "impression")) == {("disease", "OBS-DA", ())}
    assert entities(extracted("No findings of pneumonia.", "impression")) == {("pneumonia", "OBS-DA", ())}
    assert entities(extracted("No significant change.", "impression")) == set()


def test_a_chronic_finding_and_the_statement_keep_both_entities():
    doc = extracted("Stable left basilar scarring. No acute cardiopulmonary process.", "impression")
    assert {
        ("Stable", "CHAN-NC", (("modify", "scarring"),)),
        ("left basilar", "ANAT-DP", ()),
        ("scarring", "OBS-DP", (("located_at", "left basilar"),)),
        ("acute", "OBS-DA", (("modify", "process"),)),
        ("cardiopulmonary", "ANAT-DP", ()),
        ("process", "OBS-DA", (("located_at", "cardiopulmonary"),)),
    } == entities(doc)


def test_a_denied_finding_is_no_global_statement():
    """"No acute fracture" denies a finding: no statement entity is added, and a finding coordinated with a
    statement stays the finding it was."""
    assert entities(extracted("No acute fracture.", "impression")) == {("fracture", "OBS-DA", ())}
    text = "No acute cardiopulmonary process or pneumothorax."
    assert ("pneumothorax", "OBS-DA", ()) in entities(extracted(text, "impression"))
    assert ("process", "OBS-DA", (("located_at", "cardiopulmonary"),)) in entities(extracted(text, "impression"))
    assert found(text, "impression") == {("pneumothorax", "absent", None, None)}
