"""The demo's geometry section on the synthetic cohort: one patient's cardiothoracic ratio over time, measured
from the anatomy boxes (cypher/patient_measurements.cypher), beside the ratio the simulator planted
(``geometry_truth.parquet``, graph.synth.geometry); then the cohort's other geometry answers in a line: whose
ratio rose (cypher/cardiothoracic_rise.cypher), where the boxes and the reports disagree on cardiomegaly
(cypher/geometry_vs_reports.cypher), and the rotated and cut-off films
(cypher/rotated_cut_off_images.cypher)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from flows.console import print_rows

if TYPE_CHECKING:
    from rich.console import Console

#: the rise the demo asks for: a twentieth of the thoracic width within a year (the query's defaults)
MIN_RISE, MAX_DAYS = 0.05, 365
COLUMNS = ["date", "view", "ctr", "cardiomegaly", "planted", "truth"]
SHORT, CANDIDATES = 6, 20  # the table's most rows, where one of the first 20 rising patients allows it


def _run(store: Any, name: str, **params: Any) -> list[dict[str, Any]]:
    from graph.store.queries import get_query, run_named

    q = get_query(name)
    return run_named(store, q, q.bind({k: str(v) for k, v in params.items()}))


def shown_patient(store: Any) -> tuple[str | None, list[dict[str, Any]]]:
    """The patient whose measured ratio rose the most within :data:`MAX_DAYS` between films of one view, first
    among those with two such rises (so three films or more), and among them first one with at most
    :data:`SHORT` measured films (a short table); else the patient with the most pairs of measured films (ties:
    the lowest id); None when no patient has two. Returns the patient and the rises' rows (every rising patient
    of the cohort)."""
    rises = _run(store, "cardiothoracic_rise", min_rise=MIN_RISE, max_days=MAX_DAYS, views="same")
    several = [r["patient_id"] for r in rises if r["pairs"] >= 2]
    if several or rises:
        short = (p for p in several[:CANDIDATES] if len(_measured(store, p)) <= SHORT)
        return next(short, (several or [rises[0]["patient_id"]])[0]), rises
    # every pair of measured films counts: a rise of at least -1 over any interval
    every = _run(store, "cardiothoracic_rise", min_rise=-1, max_days=100_000, views="any")
    return (min(every, key=lambda r: (-r["pairs"], r["patient_id"]))["patient_id"] if every else None), rises


def _measured(store: Any, patient: str) -> list[dict[str, Any]]:
    """patient_measurements' rows of the patient that have a cardiothoracic ratio."""
    return [r for r in _run(store, "patient_measurements", patient_id=patient) if r["cardiothoracic_ratio"] is not None]


def ratio_rows(store: Any, patient: str, truth: Any) -> list[dict[str, Any]]:
    """The patient's measured films in study order (patient_measurements' rows with a cardiothoracic ratio),
    each with its date, the ratio as ``ctr``, and the planted ratio (``planted``) and true cardiomegaly
    (``truth``, yes / no) of ``truth`` (geometry_truth.parquet's frame) for its image ("-" where it has no
    row)."""
    planted = {r.image_id: r for r in truth[truth["patient_id"] == patient].itertuples()}
    out = []
    for r in _measured(store, patient):
        t = planted.get(r["image_id"])
        out.append({**r, "date": r["study_datetime"][:10], "ctr": r["cardiothoracic_ratio"],
                    "planted": "-" if t is None else f"{t.cardiothoracic_ratio:.2f}",
                    "truth": "-" if t is None else ("yes" if t.cardiomegaly else "no")})
    return out


def ratio_line(patient: str, rows: list[dict[str, Any]], rise: dict[str, Any] | None) -> str:
    """``patient P: 4 films, cardiothoracic ratio 0.44 to 0.54; it rose 0.44 -> 0.54 (+0.10) in 316 days
    (2118-02-19 to 2119-01-02); cardiomegaly by the boxes in 1 of 4, by the planted truth in 1``: ``rows`` of
    :func:`ratio_rows`, ``rise`` the patient's row of cardiothoracic_rise (None: the clause left out)."""
    ratios = [r["cardiothoracic_ratio"] for r in rows]
    yes = sum(r["cardiomegaly"] == "yes" for r in rows)
    true = sum(r["truth"] == "yes" for r in rows)
    rose = "" if rise is None else (
        f"; it rose {rise['prior_ratio']:.2f} -> {rise['ratio']:.2f} (+{rise['rise']:.2f}) in {rise['days']} days "
        f"({rise['prior_datetime'][:10]} to {rise['study_datetime'][:10]})")
    return (f"patient {patient}: {len(rows)} films, cardiothoracic ratio {min(ratios):.2f} to {max(ratios):.2f}{rose}; "
            f"cardiomegaly by the boxes in {yes} of {len(rows)}, by the planted truth in {true}")


def cohort_line(store: Any, rises: list[dict[str, Any]]) -> str:
    """The cohort's geometry answers: rising patients, cardiomegaly by the boxes and not the reports and the
    reverse, rotated and cut-off films."""
    unstated = _run(store, "geometry_vs_reports", task="heart", stated="no", patient_id="")
    contradicted = _run(store, "geometry_vs_reports", task="heart", stated="yes", patient_id="")
    films = _run(store, "rotated_cut_off_images", patient_id="")
    return (f"cohort: {len(rises)} patients whose cardiothoracic ratio rose by {MIN_RISE:.2f} or more within "
            f"{MAX_DAYS} days; cardiomegaly by the boxes and not stated by the reports in {len(unstated)} studies, "
            f"stated and not by the boxes in {len(contradicted)}; {sum(r['rotated'] for r in films)} rotated and "
            f"{sum(r['cut_off'] for r in films)} cut-off films")


def geometry_section(console: Console, cohort: Path) -> None:
    """One patient's cardiothoracic ratio over time beside the planted one, then the cohort's line; one line
    saying why where no patient has two measured films."""
    import pandas as pd

    from graph.store import shared_store

    store = shared_store()
    patient, rises = shown_patient(store)
    console.rule("cardiothoracic ratio over time" + (f" of patient {patient}" if patient else ""))
    if patient is None:
        console.print("no patient has two films with a measured cardiothoracic ratio (anatomy boxes)", highlight=False)
        return
    truth_file = cohort / "geometry_truth.parquet"
    truth = pd.read_parquet(truth_file) if truth_file.exists() else pd.DataFrame(
        columns=["image_id", "patient_id", "cardiothoracic_ratio", "cardiomegaly"])
    rows = ratio_rows(store, patient, truth)
    print_rows(rows, "table", COLUMNS, title="boxes (cypher/patient_measurements.cypher) beside geometry_truth.parquet",
               wrap=False)
    rise = next((r for r in rises if r["patient_id"] == patient), None)
    console.print(ratio_line(patient, rows, rise), highlight=False)
    console.print(cohort_line(store, rises), highlight=False)
