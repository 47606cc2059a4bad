"""``cxrkg eval extract|episodes|reports|gnn|geometry``: the scoring verbs, in one group. Each scores one part of
cxrkg against a reference: the extractor against the IU reports' MeSH tags and the annotated sentences, a
Lunguage file's episodes against another's, generated reports against their references and the patient's
graph, the progression GNN against the baselines, the geometry's and the reports' findings against a loaded
synthetic cohort's planted truth.

``eval-extract``, ``eval-episodes``, ``score-reports`` and ``evaluate``, their names before the group, still
work for one release (hidden from help), each after a one-line notice of the new name.

Quick to import (typer only): the scorers load inside the commands.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any, Optional

import typer

from flows.cli.app import app, command_group
from flows.cli.common import (
    WORKERS_HELP,
    Format,
    bootstrap_option,
    console,
    err,
    existing,
    fail,
    format_option,
    old_name,
    print_as,
    print_rejections,
    print_rows,
    reject,
    rejected_option,
    snapshot_or_export,
    store_or_fail,
)
from graph.errors import ExitCode
from graph.extract.pipeline import EXTRACTORS

eval_app = command_group("eval", "Score cxrkg's parts: the extractor, episodes, generated "
                                 "reports, the progression GNN, the geometry.")


class GoldSplit(str, Enum):
    """The splits of the annotated IU sentences: dev (rules may be tuned on it) and held-out (scored once per round)."""

    dev = "dev"
    held_out = "held-out"


@eval_app.command("extract")
def eval_extract(cache: Optional[Path] = typer.Option(None, help="IU wheel cache (default CXRKG_IU_CACHE)"),
                 gold: Optional[GoldSplit] = typer.Option(None, help="score the annotated IU sentences of this "
                                                                     "split instead (graph/extract/eval/gold/)"),
                 unmapped: bool = typer.Option(False, "--unmapped", help="list the phrases of a corpus that no "
                                               "vocabulary entry or cue covers, by frequency, instead"),
                 source: str = typer.Option("iu", help="--unmapped: the corpus (iu, a folder, a .csv / .txt / .xml "
                                                       "file; CSV columns report_id and text)"),
                 top: int = typer.Option(40, min=1, help="--unmapped: how many phrases to list"),
                 exclude_gold: Optional[GoldSplit] = typer.Option(None, help="--unmapped: leave out the IU reports "
                                                                  "of this split of the annotated sentences "
                                                                  "(reads their ids only)"),
                 fmt: Format = format_option("csv: the per-finding scores of each system; with --gold, a row per "
                                             "system; with --unmapped, the phrases")) -> None:
    """Score the rules extractor and a keyword baseline on the IU reports against their MeSH major tags
    (per finding P/R/F1, micro/macro F1, laterality), and the change cues on the hand-labelled IU sentences;
    with `--gold`, on one split of the annotated IU sentences (findings, assertion, laterality, change);
    with `--unmapped`, list the unread phrases of a corpus by frequency and the vocabulary entries without a
    UMLS CUI (vocabulary gaps)."""
    from graph.datasets.iu import load_reports

    if unmapped:
        _unmapped(source, cache, top, fmt, exclude_gold.value if exclude_gold else None)
        return
    reports = load_reports(cache)  # WheelUnavailable: one error line
    if gold is not None:
        _eval_gold(reports, gold.value, fmt)
        return
    from graph.extract.eval.evaluate import evaluate_all, finding_rows, format_report

    result = evaluate_all(reports)
    print_as(fmt, lambda: console.print(format_report(result), markup=False, highlight=False), result.as_dict(),
             finding_rows(result))


def _eval_gold(reports: list, split: str, fmt: Format) -> None:
    from graph.extract.eval.gold_eval import evaluate_gold, format_gold_table, gold_rows

    scores = evaluate_gold(reports, split)  # GoldError, an unreadable gold file: one error line
    print_as(fmt, lambda: console.print(format_gold_table(split, scores), markup=False, highlight=False),
             {name: s.as_dict() for name, s in scores.items()}, gold_rows(scores))


def _unmapped(source: str, cache: Optional[Path], top: int, fmt: Format, exclude: str | None) -> None:
    from graph.extract.eval.gold_eval import gold_report_ids
    from graph.extract.eval.unmapped import format_unmapped, unmapped_phrases, without_cui
    from graph.extract.inputs import IU_PREFIX, iter_inputs
    from graph.records import Rejection

    ids = gold_report_ids(exclude) if exclude else frozenset()
    skip = ids | {IU_PREFIX + rid for rid in ids}  # IU input's doc keys carry the prefix, a folder's do not
    # WheelUnavailable, ReportSourceError, ExtractorUnavailable: one error line
    texts = [r.report for r in iter_inputs(source, cache=cache) if not isinstance(r, Rejection) and r.doc_key not in skip]
    counts = unmapped_phrases(texts)
    missing = without_cui()
    print_as(fmt, lambda: console.print(format_unmapped(counts, len(texts), top, missing), markup=False,
                                        highlight=False),
             {"reports": len(texts), "phrases": counts.most_common(top), "without_cui": missing},
             [{"phrase": p, "count": n} for p, n in counts.most_common(top)])


@eval_app.command("episodes")
def eval_episodes(gold: Path = typer.Argument(..., callback=existing, dir_okay=False, help="the reference Lunguage CSV"),
                  pred: Path = typer.Argument(..., callback=existing, dir_okay=False,
                                            help="the Lunguage CSV to score (same mentions)"),
                  fmt: Format = format_option("csv: the measures"),
                  show: int = typer.Option(10, min=0, help="gold episodes without an exact match to list"),
                  rejected: Optional[Path] = rejected_option()) -> None:
    """How well PRED's episodes (gt_entity_group x gt_temporal_group) agree with GOLD's: pairwise precision,
    recall and F1 of same-episode links within entity groups and of same-entity-group links, and exact
    episode boundaries. Rows that cannot be read are listed and left out; exit code 6 then."""
    from graph.formats.lunguage import read_lunguage
    from graph.longitudinal.episode_agreement import episode_agreement

    # a file that cannot be read at all raises LunguageInputError: nothing done, exit code 1
    files = [read_lunguage(gold), read_lunguage(pred)]
    result = episode_agreement(files[0].rows, files[1].rows)
    print_as(fmt, lambda: _print_agreement(result, show, gold, pred), result.as_dict(), result.measure_rows())
    reject(files[0].rejections + files[1].rejections, rejected, "eval-episodes")


def _print_agreement(result, show: int, gold: Path, pred: Path) -> None:
    print_rows(result.measure_rows(), "table", title=f"episodes of {pred.name} against {gold.name} (mentions: gold "
               f"{result.mentions_gold}, pred {result.mentions_pred}, common {result.mentions_common})")
    if result.unmatched_gold and show:
        print_rows(result.unmatched_rows()[:show], "table",
                   title=f"gold episodes without an exact match (first {show})")


#: The extractor that annotates both texts, named by graph.extract.pipeline's registry: rules (offline) or the
#: radgraph package's model.
ScoreExtractor = Enum("ScoreExtractor", {name: name for name in EXTRACTORS}, type=str)  # type: ignore[misc]


class Baseline(str, Enum):
    """Reports made from the graph instead of a generated file."""

    reference = "reference"
    copy_prior = "copy-prior"


@eval_app.command("reports")
def eval_reports(generated: Optional[Path] = typer.Argument(None, help="CSV of generated reports: study_id, "
                                                             "report (other columns are kept out of the scoring)"),
                  out: Path = typer.Option(..., help="SCORES.csv to write, one row per scored study"),
                  reference: Optional[Path] = typer.Option(None, help="CSV of reference reports (study_id, report; "
                                                           "default: each study's report in the graph)"),
                  extractor: ScoreExtractor = typer.Option("rules", help="annotates both texts: rules "
                                                           "(offline) or radgraph (pip install 'cxrkg\\[radgraph]')"),
                  details: Optional[Path] = typer.Option(None, help="CSV of each contradicted change (the generated "
                                                         "sentence and the graph's basis) and omitted one"),
                  baseline: Optional[Baseline] = typer.Option(None, help="score the references themselves "
                                                              "(reference) or each study's prior report "
                                                              "(copy-prior) instead of GENERATED"),
                  plot: Optional[Path] = typer.Option(None, help="PNG of each finding's stated changes by verdict "
                                                      "and reference changes covered (matplotlib)"),
                  workers: Optional[int] = typer.Option(None, min=0, help=WORKERS_HELP),
                  rejected: Optional[Path] = rejected_option(),
                  fmt: Format = format_option("csv: the corpus means and their intervals")) -> None:
    """Score generated reports: F1RadGraph (simple, partial, complete) and finding F1 against the reference,
    and the temporal claims against the patient's graph (a prior study referred to, each stated change
    supported, contradicted or unverifiable, the reference's changes omitted). Prints the corpus means with
    95 % bootstrap intervals; exit code 6 when any row was rejected (each named), the rest scored."""
    if (generated is None) == (baseline is None):
        fail("give either GENERATED.csv or --baseline reference|copy-prior")
    from flows.score_flow import score_reports

    # InputError (an unreadable file), the extractor's extra missing, PlotUnavailable: one error line
    run = score_reports(store_or_fail(), out, generated, reference, baseline.value if baseline else None,
                        extractor.value, details, plot, workers, rejected)
    print_as(fmt, lambda: _print_table(run.summary), run.as_dict(), _figure_rows(run.summary))
    if not run.ok:
        print_rejections(run.rejections, run.rejected_report, "rejection report")
        raise typer.Exit(ExitCode.REJECTED)


def _figure_rows(summary: Any) -> list[dict[str, Any]]:
    """The corpus figures as rows: figure, mean, low, high (the CSV)."""
    rows = [{"figure": name, "mean": m, "low": lo, "high": hi} for name, (m, lo, hi) in summary.means.items()]
    return rows + [{"figure": name, "mean": value, "low": lo, "high": hi}
                   for name, (_, _, value, lo, hi) in (("temporal_precision", summary.temporal_precision),
                                                       ("temporal_recall", summary.temporal_recall))]


def _print_table(summary: Any) -> None:
    from rich.table import Table

    from graph.report_scoring.summary import change_recall_note

    console.print(f"{summary.studies} studies scored; the graph is the truth of each patient's history (temporal "
                  f"figures are judged against it); extractor {summary.extractor}: "
                  f"{change_recall_note(summary.extractor)}",
                  markup=False, highlight=False)
    table = Table("figure", "mean", "95 % interval")
    for name, (m, lo, hi) in summary.means.items():
        table.add_row(name, f"{m:.3f}", f"{lo:.3f} .. {hi:.3f}")
    console.print(table)
    for name, (num, den, value, lo, hi) in (("temporal precision (supported / stated)", summary.temporal_precision),
                                            ("temporal recall (reference changes covered)", summary.temporal_recall)):
        figure = "-" if value is None else f"{value:.3f} ({lo:.3f} .. {hi:.3f})"
        console.print(f"{name}: {figure}, {num} / {den}", markup=False, highlight=False)
    c = summary.chexpert
    console.print(f"CheXpert 14: micro F1 {c['micro_f1_14']:.3f}, macro F1 {c['macro_f1_14']:.3f}; top 5: micro F1 "
                  f"{c['micro_f1_5']:.3f}, macro F1 {c['macro_f1_5']:.3f} (table {c['table_version']})",
                  markup=False, highlight=False)
    if summary.unread_change_words:
        words = ", ".join(f"{w} {n}" for w, n in summary.unread_change_words[:15])
        console.print(f"change-like words no change entity covers: {words}", markup=False, highlight=False)
    for note in summary.notes:
        console.print(note, markup=False, highlight=False)


@eval_app.command("gnn")
def eval_gnn(snapshot: Optional[Path] = typer.Option(None, callback=existing, file_okay=False,
                                                     help="snapshot folder; default: export the graph now"),
             config: Optional[Path] = typer.Option(None, callback=existing, dir_okay=False, help="training config"),
             seeds: str = typer.Option("0,1,2", help="comma-separated seeds (at least 3 for mean ± sd)"),
             out: Path = typer.Option(Path("gnn-evaluation"), help="folder for evaluation.json, .txt and the plot"),
             device: str = typer.Option("cpu", help="cpu, cuda, cuda:N or auto"),
             epochs: Optional[int] = typer.Option(None, min=1, help="override the config's epochs")) -> None:
    """GNN against the baselines on the same test patients: per-class P/R/F1, macro-F1, accuracy and
    AUROC, mean ± sd over seeds; writes a JSON report and a confusion-matrix plot."""
    from gnn.dataset import load_dataset
    from gnn.evaluation import evaluate as run_evaluation
    from gnn.evaluation import format_table, write_report
    from gnn.training import TrainConfig

    try:
        seed_list = tuple(int(s) for s in seeds.split(",") if s.strip())
    except ValueError:
        fail(f"--seeds {seeds!r}: expected comma-separated integers")
    cfg = TrainConfig.from_file(config, epochs=epochs) if config else TrainConfig.from_dict({}, epochs=epochs)
    folder = snapshot_or_export(snapshot, None)
    _, data = load_dataset(folder, cfg.split_seed, cfg.use_embeddings)
    report = run_evaluation(data, cfg, seed_list, device, lambda line: err.print(line, highlight=False))
    paths = write_report(report, out)
    console.print(format_table(report), markup=False, highlight=False)
    console.print(f"report {paths['json']}, plot {paths['plot']}")


@eval_app.command("geometry")
def eval_geometry(cohort: Path = typer.Argument(..., callback=existing, file_okay=False,
                                                help="the loaded synthetic cohort's folder (cxrkg synth --out)"),
                  every: bool = typer.Option(False, "--all", help="every geometry finding, not only cardiomegaly"),
                  draws: int = bootstrap_option(),
                  old_draws: Optional[int] = typer.Option(None, "--draws", min=0, hidden=True,
                                                          help="the old name of --bootstrap, for this release"),
                  fmt: Format = format_option()) -> None:
    """The geometry's cardiomegaly (with --all its every finding) and the reports' stated one against the
    cohort's planted truth (geometry_truth.parquet), per study: precision and recall with 95 % intervals over
    patients, beside always yes, a guess at the prevalence, and the geometry against the reports."""
    from graph.checks.geometry_agreement import CARDIOMEGALY, FINDINGS, agreement, row_dicts
    from graph.synth import GEOMETRY_TRUTH

    if old_draws is not None:
        err.print("notice: `--draws` is now `--bootstrap`; the old name goes in the next release", highlight=False)
        draws = old_draws
    if not (cohort / GEOMETRY_TRUTH).exists():
        fail(f"COHORT: {cohort} has no {GEOMETRY_TRUTH} (a folder that cxrkg synth wrote and that is loaded)")
    rows = row_dicts(agreement(cohort, store_or_fail(), tuple(FINDINGS) if every else (CARDIOMEGALY,), draws))
    print_as(fmt, lambda: print_rows(rows, "table", title=f"geometry and reports against {cohort.name}'s truth",
                                     wrap=False), rows, rows)


old_name(app, "eval-extract", "eval extract", eval_extract)
old_name(app, "eval-episodes", "eval episodes", eval_episodes)
old_name(app, "score-reports", "eval reports", eval_reports)
old_name(app, "evaluate", "eval gnn", eval_gnn)
