"""The load benchmark's Kuzu peer (benchmarks/kuzu_peer.py), without Neo4j: the bulk load's import files
of a small synthetic cohort, copied into Kuzu, give every label and type the files' row count, and every
property reads back as the importer would store it (texts, integers, booleans, date-times, arrays)."""

from __future__ import annotations

import csv
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path

import kuzu  # the `test` extra installs it (as does `bench`): this test runs in `make test`
import pytest

from graph.ingest.import_files import ImportFiles
from graph.store.statements import NODE_KEYS
from graph.synth import write_cohort
from tests.fixtures.bulk import write_import_files

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from kuzu_peer import KuzuPeerError, header_columns, kuzu_tables, load_kuzu  # noqa: E402

MULTILINE = "r-multiline"


def _value(text: str, kind: str):
    """A CSV field as the importer stores it (graph.ingest.import_files)."""
    return {"long": int, "double": float, "boolean": lambda t: t == "true", "localdatetime": datetime.fromisoformat,
            "string[]": lambda t: t.split("\x1f")}.get(kind, str)(text)


def _first_values(listing, group: str) -> dict[str, tuple[list[str], str, str, list]]:
    """For each property column of ``group``'s files: (the first row holding a value, its field, its type,
    the file's columns)."""
    found: dict[str, tuple[list[str], str, str, list]] = {}
    for f in (f for f in listing if f.group == group):
        columns = header_columns(f.path)
        with f.path.open(encoding="utf-8", newline="") as fh:
            for row in list(csv.reader(fh))[1:]:
                for i, c in enumerate(columns):
                    if not c.label and row[i] and c.name not in found:
                        found[c.name] = (row, row[i], c.kind, columns)
    return found


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("kuzu")
    write_cohort(tmp / "cohort", patients=6, seed=11)
    # small batches: each worker part writes its own files, so a label has several files (COPY of a list)
    listing = write_import_files(tmp / "cohort", tmp / "files", "parts", batch_files=5)
    # synthetic reports are one line each; real ones span lines, which Kuzu's parallel reader refuses
    extra = ImportFiles(tmp / "extra")
    extra.node_file("Report").write({"report_id": MULTILINE, "text": 'FINDINGS: "small" effusion.\nIMPRESSION: none'})
    extra.close()
    listing += extra.listing()
    done = load_kuzu(tmp / "db", listing, threads=2)
    return listing, kuzu.Database(str(tmp / "db"), read_only=True), done


def test_every_label_and_type_has_the_files_rows(loaded):
    listing, db, done = loaded
    rows = Counter()
    for f in listing:
        rows[f.group] += f.rows
    assert sum(1 for f in listing if f.group == "nodes=Observation") > 1  # several files of one label
    assert any(f.multiline for f in listing)  # report texts span lines: the serial reader is exercised
    nodes, rels = done.nodes, done.relationships
    assert {f"nodes={k}": v for k, v in nodes.items()} | {f"relationships={k}": v for k, v in rels.items()} == rows
    assert rels["PROGRESSION"] > 10 and nodes["Anatomy"] > 10  # a vocabulary label without properties
    text = kuzu.Connection(db).execute("MATCH (r:Report) WHERE r.report_id = $k RETURN r.text",
                                              {"k": MULTILINE}).get_next()[0]
    assert text == 'FINDINGS: "small" effusion.\nIMPRESSION: none'


def test_every_node_property_reads_back_as_written(loaded):
    listing, db, _ = loaded
    conn = kuzu.Connection(db)
    checked = Counter()
    for table in kuzu_tables(listing):
        if not table.node:
            continue
        key = next(iter(table.headers.values()))[0]
        for name, (row, text, kind, _) in _first_values(listing, f"nodes={table.name}").items():
            got = conn.execute(f"MATCH (n:`{table.name}`) WHERE n.`{key.name}` = $k RETURN n.`{name}`",
                               {"k": row[0]}).get_next()[0]
            assert got == _value(text, kind), (table.name, name)
            checked[kind] += 1
    assert set(checked) == {"string", "long", "double", "boolean", "localdatetime", "string[]"}


def test_relationship_properties_and_ends(loaded):
    listing, db, _ = loaded
    conn = kuzu.Connection(db)
    for group in ("PRIOR", "PROGRESSION"):
        values = _first_values(listing, f"relationships={group}")
        for name, (row, text, kind, columns) in values.items():
            start, end = columns[0].label, columns[1].label
            # two findings' edges may join the same pair of events: a progression is named by its id
            named = [i for i, c in enumerate(columns) if c.name == "progression_id"]
            which = f" AND r.progression_id = '{row[named[0]]}'" if named else ""
            got = conn.execute(f"MATCH (a:`{start}`)-[r:`{group}`]->(b:`{end}`) WHERE a.`{NODE_KEYS[start]}` = $s "
                               f"AND b.`{NODE_KEYS[end]}` = $e{which} RETURN r.`{name}`",
                               {"s": row[0], "e": row[1]}).get_next()[0]
            assert got == _value(text, kind), (group, name)
        assert {"days"} <= set(values) if group == "PRIOR" else {"evidence", "change"} <= set(values)
    ddl = next(t for t in kuzu_tables(listing) if t.name == "OF_FINDING").ddl()
    assert "FROM `Observation` TO `Finding`" in ddl and "FROM `StudyFinding` TO `Finding`" in ddl


def test_a_header_type_kuzu_has_no_column_for_is_named(tmp_path):
    path = tmp_path / "nodes_X.csv"
    path.write_text("id:ID(X),when:date\n")
    with pytest.raises(KuzuPeerError, match=r"nodes_X.csv: header field 'when:date'"):
        header_columns(path)
