"""A figure quoted on several pages is the same number on each (issue 53, item 8).

docs/results.md holds the headline figures; other pages link to them but some also quote them. The table under
its heading "Figures quoted on several pages" names such figures: a key, the figure, and how the pages quote it,
each a phrase with ``{}`` where the number stands (``the NIH bulk load took {} s``). Every place in README.md,
gnn/README.md or docs/*.md where one of those phrases stands with a number must give the registered figure; a
phrase found nowhere, or a key found on fewer than two pages, fails too, so a reworded page cannot slip out of the
check unseen. Pages are read with bold and code marks dropped and whitespace folded (a phrase may break across
lines); phrases are matched without regard to case; numbers compare by value (``1,057`` = ``1057``).
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REGISTRY_PAGE = "docs/results.md"
REGISTRY_HEADING = "## Figures quoted on several pages"
NUMBER = r"([-+]?\d[\d,]*(?:\.\d+)?)(?![\d])"


def pages() -> dict[str, str]:
    """The pages that quote figures, by path relative to the repository."""
    paths = [REPO / "README.md", REPO / "gnn" / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    return {str(p.relative_to(REPO)): p.read_text(encoding="utf-8") for p in paths}


def registry(markdown: str) -> dict[str, tuple[str, list[str]]]:
    """The registered figures of ``markdown`` (docs/results.md): key -> (figure, phrases), read from the table
    under :data:`REGISTRY_HEADING` (columns key, figure, quoted as; each phrase in backticks, ``\\|`` for a
    table's pipe)."""
    start = markdown.index(REGISTRY_HEADING)
    end = markdown.find("\n## ", start + len(REGISTRY_HEADING))
    figures: dict[str, tuple[str, list[str]]] = {}
    for line in markdown[start:end if end >= 0 else None].splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) != 3 or cells[0] in ("key", "") or set(cells[0]) <= {"-", ":"}:
            continue
        phrases = [p.replace("\\|", "|") for p in re.findall(r"`([^`]+)`", cells[2])]
        figures[cells[0].strip("`")] = (cells[1], phrases)
    return figures


def plain(markdown: str) -> str:
    """``markdown`` as the phrases are matched against: bold and code marks dropped, whitespace folded."""
    return re.sub(r"\s+", " ", markdown.replace("**", "").replace("`", ""))


def phrase_pattern(phrase: str) -> re.Pattern[str]:
    """The pattern of a phrase with one ``{}`` for its number (the number is the pattern's group 1)."""
    before, after = re.sub(r"\s+", " ", phrase).split("{}")
    return re.compile(re.escape(before) + NUMBER + re.escape(after), re.IGNORECASE)


def value(number: str) -> float:
    """A quoted number's value: ``1,057`` and ``1057`` are one figure."""
    return float(number.replace(",", ""))


def disagreements(figures: dict[str, tuple[str, list[str]]], texts: dict[str, str]) -> list[str]:
    """What is wrong with the quotes of ``figures`` in ``texts`` (page -> markdown): a number that is not the
    registered figure, a phrase quoted nowhere, a key quoted on fewer than two pages. Empty when all agree."""
    problems = []
    flat = {page: plain(text) for page, text in texts.items()}
    for key, (figure, phrases) in figures.items():
        quoted_on = set()
        for phrase in phrases:
            hits = [(page, m.group(1)) for page, text in flat.items() for m in phrase_pattern(phrase).finditer(text)]
            if not hits:
                problems.append(f"{key}: no page quotes `{phrase}` any more (reword the registry's phrase)")
            for page, number in hits:
                quoted_on.add(page)
                if value(number) != value(figure):
                    problems.append(f"{key}: {page} quotes {number} as `{phrase}`, {REGISTRY_PAGE} registers {figure}")
        if len(quoted_on) < 2:
            problems.append(f"{key}: quoted on {sorted(quoted_on) or 'no page'} only, not on several pages")
    return problems


def test_every_registered_figure_is_the_same_on_every_page_that_quotes_it():
    texts = pages()
    figures = registry(texts[REGISTRY_PAGE])
    assert len(figures) >= 15, figures  # the table is read (a heading or column renamed would empty it)
    assert disagreements(figures, texts) == []


BULK = {"nih-bulk-load": ("90.8", ["the NIH bulk load took {} s", "995b097 | {} s"])}


def test_a_figure_quoted_differently_on_two_pages_is_found():
    same = {"a.md": "Idle: the NIH **bulk load** took 90.8 s.", "b.md": "| 2026-11-28, 995b097 | 90.8 s |"}
    assert disagreements(BULK, same) == []
    other = {**same, "c.md": "Later\nthe NIH bulk load took 77.5 s, as\nbefore."}
    assert disagreements(BULK, other) == [
        "nih-bulk-load: c.md quotes 77.5 as `the NIH bulk load took {} s`, docs/results.md registers 90.8"]


def test_a_phrase_quoted_nowhere_or_a_figure_on_one_page_is_found():
    one_page = {"a.md": "the NIH bulk load took 90.8 s; 995b097 | 90.8 s", "b.md": "no figures here"}
    assert disagreements(BULK, one_page) == ["nih-bulk-load: quoted on ['a.md'] only, not on several pages"]
    reworded = {"a.md": "the NIH bulk load took 90.8 s", "b.md": "the NIH bulk load took 90.8 s"}
    assert disagreements(BULK, reworded) == [
        "nih-bulk-load: no page quotes `995b097 | {} s` any more (reword the registry's phrase)"]


def test_numbers_compare_by_value_and_whole():
    figures = {"rate": ("1,057", ["at {} reports/s"])}
    assert disagreements(figures, {"a.md": "at 1057 reports/s", "b.md": "at 1,057 reports/s"}) == []
    # 1,0570 is not 1,057 followed by a digit: the number is read whole
    assert len(disagreements(figures, {"a.md": "at 1,057 reports/s", "b.md": "at 1,0570 reports/s"})) == 1


def test_the_registry_is_read_from_its_table():
    markdown = (f"# Results\n\n{REGISTRY_HEADING}\n\n| key | figure | quoted as |\n|---|---|---|\n"
                "| `nih-bulk-load` | 90.8 | `the NIH bulk load took {} s`; `995b097 \\| {} s` |\n\n## Next\n\n"
                "| other | 1 | `not {} read` |\n")
    assert registry(markdown) == BULK
