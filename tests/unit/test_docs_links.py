"""Every ``docs/<name>.md`` file, ``§N`` section and ``#anchor`` that the code, the README or the docs cite exists.

Citations are read from the code (graph, gnn, flows, benchmarks, tests: every text file), the README and the
docs: ``docs/formats.md §1.2-§1.5`` (both ends of a range checked), ``docs/benchmarks.md#nih-cohort``, and in
markdown files every relative link ``[text](path#anchor)``. Sections are numbered headings (``### 1.8 ...``);
anchors are GitHub's heading slugs. Links under the README's "More" heading may name docs not written yet (the
lead checks those when merging); every other cited file must exist.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CODE_DIRS = ("graph", "gnn", "flows", "benchmarks", "tests")
TEXT_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".cypher", ".ipynb", ".txt", ".toml", ".cfg", ".json"}
README_LINES = 600

_SECTION = r"§(\d+(?:\.\d+)*)"
_CITATION = re.compile(r"\bdocs/([\w.-]+\.md)(?:#([\w-]+)|\s*" + _SECTION + r"(?:\s*-\s*" + _SECTION + r")?)?")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text: markup dropped, lower case, punctuation removed, spaces -> '-'."""
    text = re.sub(r"[`*_]|<[^>]+>", "", heading).strip().lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def headings(markdown: str) -> list[str]:
    """The headings of a markdown text outside fenced code blocks."""
    found, fenced = [], False
    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and (m := _HEADING.match(line)):
            found.append(m.group(2))
    return found


def anchors(markdown: str) -> set[str]:
    """Every heading anchor of a markdown text, repeated headings numbered ``-1``, ``-2`` as GitHub does."""
    seen: dict[str, int] = {}
    out = set()
    for h in headings(markdown):
        s = slug(h)
        out.add(s if s not in seen else f"{s}-{seen[s]}")
        seen[s] = seen.get(s, 0) + 1
    return out


def sections(markdown: str) -> set[str]:
    """The numbers of the numbered headings (``## 1. ...``, ``### 1.8 ...``): ``{"1", "1.8"}``."""
    return {m.group(1) for h in headings(markdown) if (m := _NUMBERED.match(h))}


def _more_section(readme: str) -> tuple[int, int]:
    """Character span of the README's "More" section (its links may name docs not written yet)."""
    m = re.search(r"^## More\s*$", readme, flags=re.M)
    if m is None:
        return (0, 0)
    end = re.search(r"^## ", readme[m.end():], flags=re.M)
    return (m.start(), m.end() + end.start() if end else len(readme))


def problems(root: Path, sources: list[Path]) -> list[str]:
    """Every citation or link in ``sources`` whose docs file, section or anchor does not exist under ``root``."""
    found = []
    for src in sources:
        text = src.read_text(encoding="utf-8", errors="replace")
        where = src.relative_to(root)
        more = _more_section(text) if src == root / "README.md" else (0, 0)

        def later(start: int, target: Path, more: tuple[int, int] = more) -> bool:  # a doc not written yet, linked under "More"
            return more[0] <= start < more[1] and not target.exists()

        for m in _CITATION.finditer(text):
            target = root / "docs" / m.group(1)
            if not later(m.start(), target):
                found += _check(target, m.group(2), [s for s in m.group(3, 4) if s], f"{where}: {m.group(0)}")
        if src.suffix == ".md":
            for m in _LINK.finditer(text):
                link = m.group(1)
                if re.match(r"^[a-z]+:", link):
                    continue  # http:, https:, mailto:
                path, _, anchor = link.partition("#")
                target = (src.parent / path).resolve() if path else src
                if not later(m.start(), target):
                    found += _check(target, anchor or None, [], f"{where}: {link}")
        if src.name == "formats.md" and src.parent.name == "docs":  # its own bare §N references
            for m in re.finditer(_SECTION, text):
                found += _check(src, None, [m.group(1)], f"{where}: §{m.group(1)}")
    return list(dict.fromkeys(found))  # a markdown link is also a citation: report it once


def _check(target: Path, anchor: str | None, numbers: list[str], cited: str) -> list[str]:
    if not target.exists():
        return [f"{cited}: {target.name} does not exist"]
    if target.suffix != ".md" or (anchor is None and not numbers):
        return []
    text = target.read_text(encoding="utf-8")
    out = [f"{cited}: no §{n} in {target.name}" for n in numbers if n not in sections(text)]
    if anchor is not None and anchor not in anchors(text):
        out.append(f"{cited}: no #{anchor} in {target.name}")
    return out


def citing_files(root: Path) -> list[Path]:
    """The README, the docs and every text file of the code folders."""
    files = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    for d in CODE_DIRS:
        files += sorted(p for p in (root / d).rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES
                        and "__pycache__" not in p.parts)
    return files


def test_every_cited_docs_file_section_and_anchor_exists():
    assert problems(REPO, citing_files(REPO)) == []


def test_the_code_cites_formats_sections():
    cited = [m for p in citing_files(REPO) if p.suffix == ".py"
             for m in _CITATION.finditer(p.read_text(encoding="utf-8")) if m.group(1) == "formats.md"]
    assert len(cited) >= 25 and all(m.group(3) for m in cited)  # each names a section


def test_readme_is_a_short_guide_without_dated_results_changelog_or_generated_table():
    """The README says what a user does and gets; dated figures live in docs/results.md, the generated schema
    in docs/schema.md, the changelog in CHANGELOG.md."""
    import re

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_LINES
    assert "graph-schema:begin" not in readme and "## Changelog" not in readme
    assert re.findall(r"\b20\d\d-[01]\d-[0-3]\d\b", readme) == []
    assert "docs/results.md#headline-figures" in readme and (REPO / "CHANGELOG.md").is_file()


# written with {d} for "docs" so that the scan of this file above does not read them as citations
@pytest.mark.parametrize("cite, says", [
    ("see {d}/formats.md §9.9", "no §9.9"),
    ("see {d}/formats.md §1-§7", "no §7"),
    ("see {d}/formats.md#3-nowhere", "no #3-nowhere"),
    ("see {d}/missing.md", "missing.md does not exist"),
    ("[x]({d}/formats.md#1-first-part)", None),
    ("[x]({d}/formats.md#1-first)", "no #1-first"),
    ("see {d}/formats.md §1.2-§1", None),
])
def test_the_checker_finds_what_is_missing(tmp_path, cite, says):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "formats.md").write_text("# F\n\n## 1. First part\n\n### 1.2 `objects[]`\n\n"
                                                  "```\n## 7. in a code block\n```\n")
    (tmp_path / "README.md").write_text((cite + "\n\n## More\n\n- [later]({d}/later.md)\n").format(d="docs"))
    found = problems(tmp_path, [tmp_path / "README.md"])
    assert found == [] if says is None else (len(found) == 1 and says in found[0]), found


def test_slugs_follow_github():
    assert slug("7. Indiana University chest X-rays (Open-i)") == "7-indiana-university-chest-x-rays-open-i"
    assert slug("65,000 patients") == "65000-patients"
    assert slug("Bulk first load (`cxrkg ingest --bulk`)") == "bulk-first-load-cxrkg-ingest---bulk"
    assert anchors("## A\n\n## A\n") == {"a", "a-1"}


def _unnamed_packages(page: str) -> list[str]:
    """The packages of graph, gnn and flows that ``page`` names neither by path (``graph/runtime/``), nor by
    dotted name (``graph.checks.nih``), nor, for a first-level package, as ``name/`` in its layout tree."""
    layout = page.split("## Package layout", 1)[-1].split("\n## ", 1)[0]
    packages = sorted(p.parent.relative_to(REPO) for top in ("graph", "gnn", "flows")
                      for p in (REPO / top).rglob("__init__.py"))
    return [str(p) for p in packages if f"{p.as_posix()}/" not in page and ".".join(p.parts) not in page
            and not (len(p.parts) == 2 and f"  {p.name}/ " in layout)]


def test_the_architecture_page_names_every_package():
    """docs/architecture.md is written from the code: every package of graph, gnn and flows appears in it."""
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert _unnamed_packages(page) == []
    assert "graph/checks/nih" in _unnamed_packages(page.replace("graph.checks.nih", "the NIH checks"))
