"""Tables use the console's width: a cut table keeps one line per row and never runs past the edge; text is
printed as stored."""

from __future__ import annotations

import io

from rich.console import Console

import flows.console as printers  # the consoles and print_rows (flows.cli.common re-exports them)


def test_a_cut_table_fits_the_width_with_one_line_per_row(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(printers, "console", Console(file=out, width=70, color_system=None))
    rows = [{"study_id": "5486775", "anatomy": "right costophrenic angle",
             "evidence": "Small to moderate right pleural effusion has worsened since the prior study."}] * 3
    printers.print_rows(rows, "table", title="t", wrap=False)
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 70
    assert sum("5486775" in line for line in lines) == 3 and len(lines) == 1 + 3 + 3 + 1  # title, head, rows, foot
    assert all("…" in line for line in lines if "5486775" in line)


def test_a_wrapped_table_keeps_every_word(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(printers, "console", Console(file=out, width=50, color_system=None))
    printers.print_rows([{"evidence": "Small to moderate right pleural effusion has worsened."}], "table")
    text = out.getvalue()
    assert "worsened." in text and "1 row(s)" in text and max(len(line) for line in text.splitlines()) <= 50


def test_text_is_printed_as_stored():
    """An ``:emoji:`` code in an answer or a message stays text (rich would draw it as an emoji)."""
    for shared in (printers.console, printers.err):
        with shared.capture() as captured:
            shared.print("atelectasis :x: :warning:", highlight=False)
        assert captured.get() == "atelectasis :x: :warning:\n"
