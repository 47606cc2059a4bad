"""The run the NIH question checks share (cxrtrek_nih_check, multivisit_nih_check, diffvqa_nih_check).

Each: an optional load of the NIH cohort, a file generated from the graph, then the independent check on it
(or the check alone on a given file); the exit code is the check's. The benchmark's own server is stopped at
the end unless --keep.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_env import cxrkg, load_nih, stop_server


def run_nih_check(doc: str, command: str, file_option: str, out_name: str,
                  generate: Callable[[Path, argparse.Namespace], None],
                  check: Callable[[Path, int | None], int]) -> None:
    """Parse the common options (--load, --patients, --seed, ``--<file_option>``, --keep), then load,
    generate and check, exiting with the check's code.

    Args:
        doc: the benchmark's docstring (its --help).
        command: the cxrkg command that writes the file (for --seed's help), e.g. ``"cxrtrek generate"``.
        file_option: the option naming an existing file to check alone (``"file"``, ``"questions"``).
        out_name: the generated file's name in CXRKG_HOME, ``{patients}`` (N or ``all``) and ``{seed}`` filled.
        generate: writes the file from the graph, given its path and the options; the server is started
            before it.
        check: checks a file against the NIH tables of the ``patients`` lowest ids (None: all); returns the
            exit code.
    """
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--load", action="store_true", help="convert the wheel and bulk-load it first")
    parser.add_argument("--patients", type=int, default=None, help="only the N lowest patient ids")
    parser.add_argument("--seed", type=int, default=0, help=f"seed of `cxrkg {command}`")
    parser.add_argument(f"--{file_option}", dest="given", metavar=file_option.upper(), type=Path, default=None,
                        help="check this file; load and generate nothing")
    parser.add_argument("--keep", action="store_true", help="leave the server running at the end")
    args = parser.parse_args()
    if args.given is not None:
        sys.exit(check(args.given, args.patients))
    home = Path(os.environ["CXRKG_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    out = home / out_name.format(patients=args.patients or "all", seed=args.seed)
    try:
        if args.load:
            load_nih(home, args.patients)
        cxrkg("db", "start")
        generate(out, args)
    finally:
        if not args.keep:
            stop_server()
    sys.exit(check(out, args.patients))


def print_mismatches(mismatches: Any, by: str, line: Callable[[Any], str]) -> None:
    """A check's mismatches (a DataFrame), when there are any: their count per value of column ``by``, then
    the first ten, each as ``line`` writes it."""
    if len(mismatches):
        print(f"  by {by}: " + ", ".join(f"{k} {v:,}" for k, v in mismatches[by].value_counts().items()))
        for m in mismatches.head(10).itertuples(index=False):
            print(f"  {line(m)}")
