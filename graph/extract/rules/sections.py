"""Report text as the rules extractor reads it: sections joined in report order under ``FINDINGS:`` style
headers (the headers stay in the text, where :func:`graph.formats.radgraph.token_sections` finds them)."""

from __future__ import annotations

from typing import Mapping

SECTION_ORDER = ("comparison", "indication", "history", "technique", "findings", "impression")


def compose_text(report: str | Mapping[str, str]) -> str:
    """Report text with section headers: a mapping ``{"findings": ..., "impression": ...}`` becomes
    ``"FINDINGS: ... IMPRESSION: ..."`` (known sections in report order, then the rest); text is kept as is."""
    if isinstance(report, str):
        return " ".join(report.split())
    keys = sorted(report, key=lambda k: SECTION_ORDER.index(k.lower()) if k.lower() in SECTION_ORDER else 99)
    return " ".join(f"{k.upper()}: {' '.join(report[k].split())}" for k in keys if report[k] and report[k].strip())
