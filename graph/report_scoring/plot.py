"""The per-finding figure of a scoring run (``cxrkg eval reports --plot FILE.png``): each finding's stated
changes by verdict and its reference changes covered or not, so a reader sees where the temporal errors lie."""

from __future__ import annotations

from pathlib import Path

from graph.report_scoring.summary import CorpusSummary
from graph.report_scoring.temporal import CONTRADICTED, SUPPORTED, UNVERIFIABLE

_COLOURS = {SUPPORTED: "#4c9f70", CONTRADICTED: "#c8553d", UNVERIFIABLE: "#b0b0b0", "covered": "#4c72b0",
            "omitted or other": "#d0d8e8"}


def plot_per_finding(summary: CorpusSummary, path: Path) -> Path:
    """Draw two horizontal stacked bars per finding (stated changes: supported, contradicted, unverifiable;
    reference changes: covered, the rest) into ``path`` (PNG, matplotlib without pyplot, so no display and no
    backend switch); returns the path.

    Raises:
        ImportError: matplotlib is missing (it comes with the extras gnn and test).
    """
    from matplotlib.figure import Figure

    findings = sorted(summary.per_finding, key=lambda f: -max(summary.per_finding[f].get("stated", 0),
                                                                summary.per_finding[f].get("reference", 0)))
    fig = Figure(figsize=(9, 1.2 + 0.45 * max(len(findings), 1)))
    stated_ax, reference_ax = fig.subplots(1, 2, sharey=True)
    rows = range(len(findings))
    left = [0.0] * len(findings)
    for verdict in (SUPPORTED, CONTRADICTED, UNVERIFIABLE):
        counts = [summary.per_finding[f].get(verdict, 0) for f in findings]
        stated_ax.barh(rows, counts, left=left, color=_COLOURS[verdict], label=verdict)
        left = [a + b for a, b in zip(left, counts, strict=True)]
    covered = [summary.per_finding[f].get("covered", 0) for f in findings]
    rest = [summary.per_finding[f].get("reference", 0) - c for f, c in zip(findings, covered, strict=True)]
    reference_ax.barh(rows, covered, color=_COLOURS["covered"], label="covered")
    reference_ax.barh(rows, rest, left=covered, color=_COLOURS["omitted or other"], label="omitted or other")
    stated_ax.set_yticks(list(rows), findings)
    stated_ax.invert_yaxis()
    stated_ax.set_title("changes the generated reports state")
    reference_ax.set_title("changes the references state")
    for ax in (stated_ax, reference_ax):
        ax.set_xlabel("changes")
        ax.legend(loc="lower right", fontsize=8)
    fig.suptitle(f"{summary.studies} studies, extractor {summary.extractor}; judged against the patient's graph")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path
