"""The temporal figures of one generated report, judged against the graph (the truth of the patient's
history): a reference to a prior study, and each stated change supported, contradicted or unverifiable.

Compatibility (the project's rules, :func:`graph.longitudinal.events.changes_agree` and the event rules of the README's
"Longitudinal states and events"): a stated change agrees with the same change, ``new`` with ``worsened`` and
``improved`` with ``resolved`` (Chest ImaGenome calls an appearing finding "worsened", RadGraph2 calls it
"new"); a derived ``new`` agrees with new / worsened, a derived ``resolved`` with resolved / improved, a
derived ``persistent`` with no change / improved / worsened, a derived ``worsened`` / ``improved`` (a higher /
lower severity) with that change and its synonym. A derived ``no longer mentioned`` (present before, silent
now) says nothing of the change: it neither supports nor contradicts.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

from graph.longitudinal.events import changes_agree
from graph.report_scoring.facts import GraphChange, StudyFacts
from graph.report_scoring.reading import SCORED_CHANGES, ReportReading, StatedChange
from graph.terms import Source, State

SUPPORTED, CONTRADICTED, UNVERIFIABLE = "supported", "contradicted", "unverifiable"

# derived change -> the stated changes it agrees with (see the module docstring)
_DERIVED_AGREES = {"new": {"new", "worsened"}, "resolved": {"resolved", "improved"},
                   "persistent": {"no change", "improved", "worsened"},
                   "worsened": {"worsened", "new"}, "improved": {"improved", "resolved"}}
_SILENT = {"no longer mentioned"}


class Verdict(NamedTuple):
    """One stated change judged: ``verdict`` (supported, contradicted, unverifiable) and ``basis``, the graph's
    facts it rests on in words (``"resolved (derived, derived); prior present, now absent"``)."""

    change: StatedChange
    verdict: str
    basis: str


class TemporalFigures(NamedTuple):
    """One study's temporal figures (the SCORES.csv columns of the same names) and the verdicts behind them;
    ``reference_changes`` and ``covered`` give the recall (reference changes the generated report states a
    compatible change for), ``omitted_changes`` those it states no change for at all."""

    has_prior: bool
    prior_reference: bool
    hallucinated_prior: bool
    verdicts: tuple[Verdict, ...]
    reference_changes: tuple[StatedChange, ...]
    covered: tuple[StatedChange, ...]
    omitted_changes: tuple[StatedChange, ...]

    def count(self, verdict: str) -> int:
        """How many stated changes got ``verdict``."""
        return sum(v.verdict == verdict for v in self.verdicts)


def agrees(stated: str, graph: GraphChange) -> bool | None:
    """Whether a stated change agrees with one of the graph's (None: the graph's change says nothing)."""
    if graph.change in _SILENT:
        return None
    if graph.basis == "derived":
        return stated in _DERIVED_AGREES.get(graph.change, {graph.change})
    return changes_agree([stated, graph.change])


def judge(change: StatedChange, facts: StudyFacts) -> Verdict:
    """Judge one stated change against the graph: supported when any of the graph's changes of that finding
    between the study and its prior agrees; contradicted when the graph holds only disagreeing ones, or
    states the finding absent at both studies; else unverifiable (no prior study, or the graph says nothing
    of the finding at either). Where a source states a change, the stated changes decide: they say more than a
    derived one (a derived ``persistent`` agrees with improved and worsened alike)."""
    if not facts.has_prior:
        return Verdict(change, UNVERIFIABLE, "no prior study in the graph")
    held = facts.changes.get(change.finding, ())
    stated = [g for g in held if g.basis == "stated"]
    votes = [(g, agrees(change.change, g)) for g in (stated or held)]
    words = "; ".join(f"{g.change} ({g.basis}, {g.source})" for g, _ in votes)
    before, now = facts.prior_states.get(change.finding), facts.states.get(change.finding)
    states = f"prior {before or 'not mentioned'}, now {now or 'not mentioned'}"
    if any(ok for _, ok in votes):
        return Verdict(change, SUPPORTED, f"{words}; {states}")
    if any(ok is False for _, ok in votes):
        return Verdict(change, CONTRADICTED, f"{words}; {states}")
    if before == State.ABSENT and now == State.ABSENT:
        return Verdict(change, CONTRADICTED, states)
    return Verdict(change, UNVERIFIABLE, f"{words + '; ' if words else ''}{states}")


#: the sources whose stated changes give a stored report's changes, first that states any for a finding:
#: RadGraph2 and Lunguage label the change on the report's own words, Chest ImaGenome's comparisons are
#: sentence-level relations of its rule-based pipeline (its silver set's noise: Wu et al. 2021)
REFERENCE_SOURCES = (Source.RADGRAPH, Source.LUNGUAGE, Source.CHEST_IMAGENOME)
_SOURCE_RANK: dict[str, int] = {s: n for n, s in enumerate(REFERENCE_SOURCES)}


def stated_reference_changes(facts: StudyFacts) -> tuple[StatedChange, ...]:
    """The changes the study's stored report states, as the graph holds them: its stated PROGRESSION edges to
    the prior study of the scored classes, per finding from one source, the first of
    :data:`REFERENCE_SOURCES` that states any (another source after them), so two sources' readings of one
    sentence count once and their disagreement does not make the report omit its own change. The sentence is
    the edge's first evidence phrase ("" when it has none).
    """
    out: list[StatedChange] = []
    for finding, held in sorted(facts.changes.items()):
        stated = [g for g in held if g.basis == "stated" and g.change in SCORED_CHANGES]
        if not stated:
            continue
        first = min(stated, key=lambda g: (_SOURCE_RANK.get(g.source, len(_SOURCE_RANK)), g.source)).source
        out += [StatedChange(finding, g.change, g.evidence[0] if g.evidence else "")
                for g in sorted(stated, key=lambda g: g.change) if g.source == first]
    return tuple(out)


def temporal_figures(generated: ReportReading, reference_changes: Sequence[StatedChange],
                     facts: StudyFacts) -> TemporalFigures:
    """One study's temporal figures: ``generated`` the generated report as read, ``reference_changes`` the
    changes its reference states, ``facts`` the graph's.

    Returns:
        TemporalFigures; a reference change is covered when the generated report states an agreeing change
        for its finding (new ~ worsened, improved ~ resolved), omitted when it states none for it.
    """
    verdicts = tuple(judge(c, facts) for c in generated.changes)
    stated_by_finding: dict[str, set[str]] = {}
    for c in generated.changes:
        stated_by_finding.setdefault(c.finding, set()).add(c.change)
    covered = tuple(r for r in reference_changes
                    if any(changes_agree([r.change, g]) for g in stated_by_finding.get(r.finding, ())))
    omitted = tuple(r for r in reference_changes if r.finding not in stated_by_finding)
    refers = generated.prior_cue is not None
    return TemporalFigures(facts.has_prior, refers, refers and not facts.has_prior, verdicts,
                           tuple(reference_changes), covered, omitted)
