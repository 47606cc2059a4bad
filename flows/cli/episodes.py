"""``cxrkg eval-episodes GOLD.csv PRED.csv``: episode agreement between two Lunguage files, offline."""

from __future__ import annotations

import math
from pathlib import Path

import typer

from flows.cli.app import app
from flows.cli.common import Format, existing, format_option, print_as, print_rejections, print_rows
from graph.errors import ExitCode


def _rows(result) -> list[dict]:
    def row(measure: str, score, what: str) -> dict:
        cell = (lambda x: None if math.isnan(x) else round(x, 4))
        return {"measure": measure, "precision": cell(score.precision), "recall": cell(score.recall),
                "f1": cell(score.f1), "counts": what}

    e, g, b = result.episode_pairs, result.entity_pairs, result.boundaries
    return [row("episode pairs", e, f"linked pairs: gold {e.gold}, pred {e.pred}, both {e.matched_gold}"),
            row("entity-group pairs", g, f"linked pairs: gold {g.gold}, pred {g.pred}, both {g.matched_gold}"),
            row("exact episode boundaries", b, f"episodes: gold {b.gold} ({b.matched_gold} matched), "
                                               f"pred {b.pred} ({b.matched_pred} matched)")]


@app.command("eval-episodes")
def eval_episodes(gold: Path = typer.Argument(..., callback=existing, dir_okay=False, help="the reference Lunguage CSV"),
                  pred: Path = typer.Argument(..., callback=existing, dir_okay=False,
                                            help="the Lunguage CSV to score (same mentions)"),
                  fmt: Format = format_option("csv: the measures"),
                  show: int = typer.Option(10, min=0, help="gold episodes without an exact match to list")) -> None:
    """How well PRED's episodes (gt_entity_group x gt_temporal_group) agree with GOLD's: pairwise precision,
    recall and F1 of same-episode links within entity groups and of same-entity-group links, and exact
    episode boundaries. Rows that cannot be read are listed and left out; exit code 6 then."""
    from graph.formats.lunguage import read_lunguage
    from graph.longitudinal.episode_agreement import episode_agreement

    # a file that cannot be read at all raises LunguageInputError: nothing done, exit code 1 (main's explain)
    files = [read_lunguage(gold), read_lunguage(pred)]
    result = episode_agreement(files[0].rows, files[1].rows)
    rows = _rows(result)
    unmatched = [{"subject_id": e.subject_id, "entity_group": e.entity_group, "temporal_group": e.temporal_group,
                  "first_study": e.first_mention_study, "last_study": e.last_mention_study, "mentions": len(e.mentions)}
                 for e in result.unmatched_gold]
    mentions = {"gold": result.mentions_gold, "pred": result.mentions_pred, "common": result.mentions_common}
    everything = {"mentions": mentions, "measures": rows, "unmatched_gold_episodes": unmatched}
    print_as(fmt, lambda: _print_tables(rows, unmatched, show, mentions, gold, pred), everything, rows)
    rejections = files[0].rejections + files[1].rejections
    if rejections:
        print_rejections(rejections, None, "")
        raise typer.Exit(ExitCode.REJECTED)


def _print_tables(rows: list[dict], unmatched: list[dict], show: int, mentions: dict, gold: Path, pred: Path) -> None:
    print_rows(rows, "table", title=f"episodes of {pred.name} against {gold.name} (mentions: gold "
                                    f"{mentions['gold']}, pred {mentions['pred']}, common {mentions['common']})")
    if unmatched and show:
        print_rows(unmatched[:show], "table", title=f"gold episodes without an exact match (first {show})")
