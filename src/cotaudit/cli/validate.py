"""The ``cotaudit validate`` subcommand: the detection table of probe logs run on organism
checkpoints and their base models (:mod:`cotaudit.validation`).

    cotaudit validate logs/ --out validation/

reads every log under the paths given, keeps those of a study with probe statistics
(:data:`cotaudit.validation.statistics.STATISTICS`) that show a wrong cue
(:func:`cotaudit.validation.table.not_validated`), prints the verdict per run and the table, and
writes ``validation.md``, ``validation.json`` (the table and every per-sample score and label it
was computed from) and one ROC figure per run (``roc-NN-<organism>-<step>.png``) to ``--out``;
an ``--out`` that holds an earlier validation is replaced only with ``--force``. Files under the
folders given that are no Inspect logs (a checkpoint's ``config.json``, its tokenizer's files)
are left out without a line. Terminal lines name logs and models from the logs: written
:func:`~cotaudit.display.text.visible`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from cotaudit.validation.detection import N_BOOT

RECORD_FILE = "validation.json"
TABLE_FILE = "validation.md"
ROC_GLOB = "roc-*.png"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "logs", nargs="+", metavar="LOG_OR_DIR", help="Inspect logs (.eval/.json) or folders"
    )
    parser.add_argument(
        "--out",
        default="validation",
        metavar="DIR",
        help=f"output folder for {TABLE_FILE}, {RECORD_FILE} and the ROC figures "
        "(default: validation)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace an earlier validation in --out",
    )
    parser.add_argument(
        "--n-boot",
        type=int,
        default=N_BOOT,
        metavar="N",
        help=f"bootstrap resamples of each interval (default {N_BOOT})",
    )


def earlier_files(out: Path) -> list[Path]:
    """The files of an earlier validation in ``out``."""
    if not out.is_dir():
        return []
    named = [out / TABLE_FILE, out / RECORD_FILE]
    return [p for p in named if p.exists()] + sorted(out.glob(ROC_GLOB))


def run_cli(args: argparse.Namespace) -> int:
    from cotaudit.display.text import visible
    from cotaudit.params import InputError
    from cotaudit.report.loader import NO_LOG_REASONS
    from cotaudit.validation.table import figure_name, markdown, run_record

    def fail(message: str) -> int:
        print(visible(f"cotaudit validate: {message}"), file=sys.stderr)
        return 2

    if args.n_boot < 1:
        return fail(f"--n-boot must be >= 1, got {args.n_boot}")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        return fail(f"--out {out}: exists and is not a folder")
    earlier = earlier_files(out)
    if earlier and not args.force:
        return fail(
            f"--out {out} holds an earlier validation ({', '.join(p.name for p in earlier[:3])}"
            f"{', ...' if len(earlier) > 3 else ''}): give another --out, or --force to "
            "replace it"
        )
    try:
        runs, skipped, unvalidated = validated_runs(args.logs, args.n_boot)
    except (FileNotFoundError, InputError) as e:
        return fail(str(e))
    not_logs = [p for p, why in skipped if why in NO_LOG_REASONS]
    for path, why in skipped:
        if why not in NO_LOG_REASONS:
            print(visible(f"cotaudit validate: skipped {path}: {why}"), file=sys.stderr)
    if not runs:
        if unvalidated:
            if len(unvalidated) == 1:
                [(path, why)] = unvalidated
                return fail(f"nothing to validate in {path}: {why}")
            return fail(
                f"nothing to validate: in each of {len(unvalidated)} logs, {unvalidated[0][1]}"
            )
        what = (
            f" (its {len(not_logs)} file(s) of the kinds read are no Inspect logs: "
            "run a study on a checkpoint first, then validate its logs)"
            if not_logs
            else ""
        )
        return fail(f"no log of a study with probe statistics under {' '.join(args.logs)}{what}")
    for path, why in unvalidated:
        print(visible(f"cotaudit validate: not validated {path}: {why}"), file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    for old in earlier:
        old.unlink()
    figures = [roc_figure(run, out / figure_name(i, run)) for i, run in enumerate(runs, 1)]
    names = [f for f in figures if f is not None]
    (out / TABLE_FILE).write_text(markdown(runs, names) + "\n", encoding="utf-8")
    record: dict[str, Any] = {
        "n_boot": args.n_boot,
        "runs": [run_record(r) | {"roc_figure": f} for r, f in zip(runs, figures, strict=True)],
        "not_validated": [{"log": p, "why": w} for p, w in unvalidated],
    }
    (out / RECORD_FILE).write_text(
        json.dumps(record, indent=1, allow_nan=False) + "\n", encoding="utf-8"
    )
    for line in markdown(runs).splitlines():
        print(visible(line))
    print(
        visible(f"wrote {out / TABLE_FILE}, {out / RECORD_FILE} and {len(names)} ROC figure(s)"),
        file=sys.stderr,
    )
    return 0


def roc_figure(run: Any, path: Path) -> str | None:
    """Draw ``run``'s detection ROC curves to ``path`` (the figure ``cotaudit report`` draws):
    its file name, None when there is no curve or it could not be drawn."""
    from cotaudit.report.figures import FigureText, roc_curves
    from cotaudit.report.validation_roc import roc_lines, roc_title

    info = roc_curves(roc_lines(run.curves()), FigureText(path, roc_title(run.study, run.name)))
    return None if info is None or info.failed else path.name


def validated_runs(
    paths: list[str], n_boot: int = N_BOOT
) -> tuple[list, list[tuple[str, str]], list[tuple[str, str]]]:
    """The :class:`~cotaudit.validation.table.RunValidation` of each log under ``paths`` whose
    study has probe statistics and that shows a wrong cue (ordered by study, organism, step,
    model); the logs skipped with why; and the logs not validated (no wrong cue) with why."""
    from cotaudit.report.loader import load_runs
    from cotaudit.validation.checkpoints import checkpoint_card
    from cotaudit.validation.statistics import SCORERS, statistics_of
    from cotaudit.validation.table import (
        measured_statistics,
        not_validated,
        samples_of,
        validate_run,
    )

    loaded, skipped = load_runs(paths)
    runs = []
    unvalidated: list[tuple[str, str]] = []
    for run in loaded:
        scorer = run.scorer(SCORERS.get(run.study, ""))
        if not statistics_of(run.study) or scorer is None:
            skipped.append((run.path, f"study {run.study!r} has no probe statistics"))
            continue
        samples = samples_of(run.study, scorer.samples)
        why = not_validated(run.study, samples)
        if why is not None:
            unvalidated.append((run.path, why))
            continue
        card = checkpoint_card(run.model)
        runs.append(
            validate_run(
                run.path,
                run.study,
                run.model,
                card,
                samples,
                measured_statistics(run.study, samples),
                n_boot,
            )
        )
    runs.sort(key=lambda r: (r.study, r.organism or "", r.step or 0, r.model))
    return runs, skipped, unvalidated
