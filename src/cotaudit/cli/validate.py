"""The ``cotaudit validate`` subcommand: the detection table of probe logs run on organism
checkpoints and their base models (:mod:`cotaudit.validation`).

    cotaudit validate logs/ --out validation/

reads every log under the paths given, keeps those of a study with probe statistics
(:data:`cotaudit.validation.statistics.STATISTICS`), prints the table and writes
``validation.md`` and ``validation.json`` (the table and every per-sample score and label it was
computed from) to ``--out``. Terminal lines name logs and models from the logs: written
:func:`~cotaudit.display.text.visible`.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from cotaudit.validation.detection import N_BOOT

RECORD_FILE = "validation.json"
TABLE_FILE = "validation.md"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "logs", nargs="+", metavar="LOG_OR_DIR", help="Inspect logs (.eval/.json) or folders"
    )
    parser.add_argument(
        "--out",
        default="validation",
        metavar="DIR",
        help=f"output folder for {TABLE_FILE} and {RECORD_FILE} (default: validation)",
    )
    parser.add_argument(
        "--n-boot",
        type=int,
        default=N_BOOT,
        metavar="N",
        help=f"bootstrap resamples of each interval (default {N_BOOT})",
    )


def run_cli(args: argparse.Namespace) -> int:
    from cotaudit.display.text import visible
    from cotaudit.params import InputError
    from cotaudit.validation.table import markdown_table, run_record

    def fail(message: str) -> int:
        print(visible(f"cotaudit validate: {message}"), file=sys.stderr)
        return 2

    if args.n_boot < 1:
        return fail(f"--n-boot must be >= 1, got {args.n_boot}")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        return fail(f"--out {out}: exists and is not a folder")
    try:
        runs, skipped = validated_runs(args.logs, args.n_boot)
    except (FileNotFoundError, InputError) as e:
        return fail(str(e))
    for path, why in skipped:
        print(visible(f"cotaudit validate: skipped {path}: {why}"), file=sys.stderr)
    if not runs:
        return fail(f"no log of a study with probe statistics under {' '.join(args.logs)}")
    table = markdown_table(runs)
    out.mkdir(parents=True, exist_ok=True)
    (out / TABLE_FILE).write_text(table + "\n", encoding="utf-8")
    record = {"n_boot": args.n_boot, "runs": [run_record(r) for r in runs]}
    (out / RECORD_FILE).write_text(
        json.dumps(record, indent=1, allow_nan=False) + "\n", encoding="utf-8"
    )
    for line in table.splitlines():
        print(visible(line))
    print(visible(f"wrote {out / TABLE_FILE} and {out / RECORD_FILE}"), file=sys.stderr)
    return 0


def validated_runs(paths: list[str], n_boot: int = N_BOOT) -> tuple[list, list[tuple[str, str]]]:
    """The :class:`~cotaudit.validation.table.RunValidation` of each log under ``paths`` whose
    study has probe statistics (ordered by organism, step, model), and the logs skipped with
    why."""
    from cotaudit.report.loader import load_runs
    from cotaudit.validation.checkpoints import checkpoint_card
    from cotaudit.validation.samples import validation_sample
    from cotaudit.validation.statistics import SCORERS, statistics_of
    from cotaudit.validation.table import validate_run

    loaded, skipped = load_runs(paths)
    runs = []
    for run in loaded:
        statistics = statistics_of(run.study)
        scorer = run.scorer(SCORERS.get(run.study, ""))
        if not statistics or scorer is None:
            skipped.append((run.path, f"study {run.study!r} has no probe statistics"))
            continue
        samples = [validation_sample(run.study, s, statistics) for s in scorer.samples]
        measured = [
            stat for stat in statistics if any(not math.isnan(s.values[stat.name]) for s in samples)
        ]
        card = checkpoint_card(run.model)
        runs.append(
            validate_run(
                run.path,
                run.study,
                run.model,
                card,
                samples,
                measured,
                n_boot,
            )
        )
    runs.sort(key=lambda r: (r.study, r.organism or "", r.step or 0, r.model))
    return runs, skipped
