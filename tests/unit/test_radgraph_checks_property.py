"""Property-based tests of the RadGraph checks: generated files of documents, at most one of them with one known
fault, read by both readers (the file whole through ``json``, and streamed through ijson) and each document by
the ``radgraph`` package's adapter. Each reader must reject exactly the faulty document, naming its doc_key and
the field the fault is in, and both must give the same records, rejections (messages included) and schema
counts; the adapter must refuse the same document with the same field (a doc_key is not its to check). The
expected field comes from the fault the generator made, not from the code under test. Synthetic values only;
hypothesis: https://hypothesis.readthedocs.io/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from graph.extract.radgraph_adapter import convert_document
from graph.formats.radgraph import parse_radgraph, parse_radgraph_chunks
from graph.records import InputError
from graph.vocabulary import vocabulary

V = vocabulary()

# The strategies here use no `random`; hypothesis warns when the global random state moves during a draw,
# and in the whole suite another thread moves it: the session's Prefect harness keeps an events websocket
# whose keepalive pings (websockets' `ping`) draw their payload with `random.getrandbits`. When a ping lands
# inside a draw the warning names the draw, not the thread; it comes and goes between whole-suite runs.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Do not use the `random` module inside strategies:hypothesis.errors.HypothesisDeprecationWarning")

WORDS = ("left", "right", "pleural", "effusion", "lung", "opacity", "base", "no", "mild", "increased", ".", ":",
         "IMPRESSION", "heart", "size", "normal")
#: every spelling the readers accept (docs/formats.md §2-§3): RadGraph v1, RadGraph2 with a repository alias,
#: the radgraph package / RadGraph-XL
LABELS = ("ANAT-DP", "OBS-DP", "OBS-U", "OBS-DA", "CHAN-CON-WOR", "CHAN-WOR", "CHAN-NC",
          "Anatomy::definitely present", "Observation::definitely absent", "Observation::measurement::uncertain")
#: labels no spelling has: near misses, anything that is not text, and text that starts with "?"
NEAR_MISS_LABELS = ("", "OBS", "OBS-MAYBE", "obs-dp", "ANAT-DA", "CHAN", "CHAN-WORSE", "Anatomy::probably",
                    "Observation::a::b::uncertain", "Finding::definitely present", "Anatomy::definitely present ",
                    "OBS-DP ")
UNKNOWN_LABELS = st.one_of(st.sampled_from([*NEAR_MISS_LABELS, None, 3, [], {}]),
                           st.text(max_size=12).map(lambda t: f"?{t}"))
RELATIONS = ("modify", "located_at", "suggestive_of")
NOT_AN_INT = st.sampled_from([1.5, 0.0, "0", None, [0], {"i": 0}])
BAD_RELATIONS = st.sampled_from([None, "modify", {"modify": "1"}, ["modify"], [["modify"]],
                                 [["modify", "1", "2"]], [None], [1]])
NOT_AN_OBJECT = st.sampled_from([None, 3, "entity", [], [["tokens", "x"]]])


def _key(n: int) -> str:
    return f"p10/p1000000{n % 10}/s5{n:07d}.txt"


@st.composite
def documents(draw: st.DrawFn, min_entities: int = 0) -> dict[str, Any]:
    """A document every reader accepts: words, entities with spans inside the text and relations between them."""
    words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12))
    n = draw(st.integers(min_entities, 5))
    ids = [str(i) for i in range(1, n + 1)]
    entities = {}
    for eid in ids:
        start = draw(st.integers(0, len(words) - 1))
        end = draw(st.integers(start, len(words) - 1))
        rels = draw(st.lists(st.tuples(st.sampled_from(RELATIONS), st.sampled_from(ids)), max_size=2))
        entities[eid] = {"tokens": " ".join(words[start:end + 1]), "label": draw(st.sampled_from(LABELS)),
                         "start_ix": start, "end_ix": end, "relations": [list(r) for r in rels]}
    return {"text": " ".join(words), "entities": entities, "data_source": "MIMIC-CXR"}


def _entity_fault(field: str, change: Callable[[dict, Any, int], None], value: st.SearchStrategy) -> Callable:
    """A fault in one entity: ``change(entity, drawn value, token count)``; the rejection names
    ``entities.<id>.<field>`` (``entities.<id>`` for an empty field)."""
    @st.composite
    def fault(draw: st.DrawFn, doc: dict) -> tuple[str, dict] | None:
        if not doc["entities"]:
            return None
        eid = draw(st.sampled_from(sorted(doc["entities"])))
        change_doc = json.loads(json.dumps(doc))
        change(change_doc["entities"], (eid, draw(value)), len(doc["text"].split(" ")))
        return (f"entities.{eid}.{field}" if field else f"entities.{eid}"), change_doc
    return fault


def _set(key: str) -> Callable[[dict, tuple[str, Any], int], None]:
    def change(ents: dict, drawn: tuple[str, Any], _: int) -> None:
        ents[drawn[0]][key] = drawn[1]
    return change


def _reverse_span(ents: dict, drawn: tuple[str, int], _: int) -> None:
    ent = ents[drawn[0]]
    ent["start_ix"] = ent["end_ix"] + drawn[1]  # drawn >= 1: the span ends before it starts


def _past_text(ents: dict, drawn: tuple[str, int], n_tokens: int) -> None:
    ent = ents[drawn[0]]
    ent["end_ix"] = n_tokens + drawn[1]  # drawn >= 0: the last token is n_tokens - 1
    ent["start_ix"] = min(ent["start_ix"], ent["end_ix"])


def _dangling(ents: dict, drawn: tuple[str, str], _: int) -> None:
    ents[drawn[0]]["relations"].append(["modify", drawn[1]])  # an id no entity has


def _drop(ents: dict, drawn: tuple[str, str], _: int) -> None:
    del ents[drawn[0]][drawn[1]]


#: fault name -> strategy of (field the rejection names, faulty document), or None where the fault needs
#: something the document lacks (an entity)
ENTITY_FAULTS = {
    "unknown label": _entity_fault("label", _set("label"), UNKNOWN_LABELS),
    "span start not an int": _entity_fault("start_ix", _set("start_ix"), NOT_AN_INT),
    "span end not an int": _entity_fault("start_ix", _set("end_ix"), NOT_AN_INT),
    "span end before its start": _entity_fault("start_ix", _reverse_span, st.integers(1, 5)),
    "span start before the text": _entity_fault("start_ix", _set("start_ix"), st.integers(-5, -1)),
    "span past the text": _entity_fault("end_ix", _past_text, st.integers(0, 5)),
    "tokens not text": _entity_fault("tokens", _set("tokens"), st.sampled_from([None, 3, ["left"], {}])),
    "relations not pairs": _entity_fault("relations", _set("relations"), BAD_RELATIONS),
    "relation to a missing entity": _entity_fault("relations", _dangling, st.sampled_from(["0", "9", "x", ""])),
    "entity not an object": _entity_fault("", lambda ents, d, _: ents.__setitem__(d[0], d[1]), NOT_AN_OBJECT),
    "no label": _entity_fault("label", _drop, st.just("label")),
    "no span": _entity_fault("start_ix", _drop, st.sampled_from(["start_ix", "end_ix"])),
    "no tokens": _entity_fault("tokens", _drop, st.just("tokens")),
}
#: document-level faults: (field, how the document is changed); a changed doc_key is the last
DOCUMENT_FAULTS = {
    "entities not an object": ("entities", st.sampled_from([None, [], "1", 3]).map(lambda v: ("entities", v))),
    "no entities": ("entities", st.just(("entities", "drop"))),
    "text not text": ("text", st.sampled_from([None, 3, ["No", "effusion"]]).map(lambda v: ("text", v))),
    "no text": ("text", st.just(("text", "drop"))),
    "document not an object": (None, st.sampled_from([None, 3, "doc", []]).map(lambda v: ("doc", v))),
    "doc_key without patient and study": ("doc_key", st.just(("doc_key", "report-17.txt"))),
}


@st.composite
def files(draw: st.DrawFn) -> tuple[dict[str, Any], tuple[str, str | None] | None, str]:
    """A file of 1-4 documents, at most one of them faulty: (the file's object, (faulty doc_key, field) or
    None, the fault's name)."""
    docs = [draw(documents(min_entities=1)), *draw(st.lists(documents(), max_size=3))]
    keys = [_key(n) for n in range(len(docs))]
    fault = draw(st.sampled_from([None, *ENTITY_FAULTS, *DOCUMENT_FAULTS]))
    with_entities = [i for i, doc in enumerate(docs) if doc["entities"]]
    at = draw(st.sampled_from(with_entities if fault in ENTITY_FAULTS and with_entities else range(len(docs))))
    expected: tuple[str, str | None] | None = None
    if fault in ENTITY_FAULTS and (made := draw(ENTITY_FAULTS[fault](docs[at]))) is not None:
        expected, docs[at] = (keys[at], made[0]), made[1]
    elif fault in DOCUMENT_FAULTS:
        field, (what, value) = DOCUMENT_FAULTS[fault][0], draw(DOCUMENT_FAULTS[fault][1])
        if what == "doc":
            docs[at] = value
        elif what == "doc_key":
            keys[at] = value
        elif value == "drop":
            del docs[at][what]
        else:
            docs[at][what] = value
        expected = (keys[at], field)
    return dict(zip(keys, docs, strict=True)), expected, fault if expected else "none"


@pytest.fixture(scope="module")
def radgraph_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One file path for every example (hypothesis runs many examples per call of a test)."""
    return tmp_path_factory.mktemp("radgraph") / "extractions.json"


@settings(max_examples=1000, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(made=files())
def test_both_readers_reject_the_faulty_document_naming_its_field(radgraph_file: Path, made) -> None:
    """Each reader rejects the faulty document alone, by its doc_key and field, and accepts the rest; both
    readers give the same ParsedFile."""
    content, expected, fault = made
    event(fault)
    radgraph_file.write_text(json.dumps(content))
    whole = parse_radgraph(radgraph_file, V)
    streamed = list(parse_radgraph_chunks(radgraph_file, V, docs_per_chunk=10))
    assert len(streamed) == 1 and streamed[0] == whole  # records, rejections with their messages, schema counts
    assert [(r.record, r.field) for r in whole.rejections] == ([expected] if expected else [])
    accepted = [k for k in content if expected is None or k != expected[0]]
    assert [r.report_id for r in whole.reports] == accepted
    assert _adapter_refusals(content) == ([expected] if expected and expected[1] != "doc_key" else [])


def _adapter_refusals(content: dict[str, Any]) -> list[tuple[str, str | None]]:
    """(doc_key, field) of each document the radgraph package's adapter refuses."""
    out = []
    for key, doc in content.items():
        try:
            convert_document(doc, "radgraph-xl", V, key)
        except InputError as exc:
            out.append((exc.record, exc.field))
    return out


def test_the_near_miss_labels_are_no_label_of_the_vocabulary() -> None:
    """The generator's unknown labels are unknown to the packaged vocabulary too (its change aliases)."""
    assert not set(NEAR_MISS_LABELS) & set(V.change_labels)
