"""The ``cotaudit validate`` subcommand: the detection table of probe logs run on organism
checkpoints and their base models (:mod:`cotaudit.validation`).

    cotaudit validate logs/ --out validation/

reads every log under the paths given, keeps those of a study with probe statistics
(:func:`cotaudit.validation.statistics.statistics_of`) that show a wrong cue
(:func:`cotaudit.validation.table.not_validated`), prints the verdict per run, the table and the
seed section (each organism checkpoint's AUROCs, differences to the best baseline and shortcut
rate per training seed, their mean and spread across seeds beside the spread across problems:
:mod:`cotaudit.validation.seeds`), and writes ``validation.md``, ``validation.json`` (the table,
the seed summaries under ``seeds``, and every per-sample score and label they were computed
from) and one ROC figure per run (``roc-NN-<organism>-<step>.png``) to ``--out``;
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
from cotaudit.validation.statistics import scorer_of

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
        "--monitor-model",
        metavar="NAME",
        default=None,
        help="an Inspect model (e.g. hf-probe/default, openai/gpt-4o-mini) that reads each CoT "
        "and answers whether it relies on a hint or answer key (docs/validation.md: the "
        "monitor); its score is one more baseline row per run",
    )
    parser.add_argument(
        "--n-boot",
        type=int,
        default=N_BOOT,
        metavar="N",
        help=f"bootstrap resamples of the shortcut mean's interval (default {N_BOOT})",
    )


def earlier_files(out: Path) -> list[Path]:
    """The files of an earlier validation in ``out``."""
    if not out.is_dir():
        return []
    named = [out / TABLE_FILE, out / RECORD_FILE]
    return [p for p in named if p.exists()] + sorted(out.glob(ROC_GLOB))


def run_cli(args: argparse.Namespace) -> int:
    from cotaudit.display.text import visible
    from cotaudit.logs.files import NO_LOG_REASONS
    from cotaudit.params import InputError, error_line
    from cotaudit.validation.table import figure_name, markdown, record, summarize

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
    if args.monitor_model is not None:
        try:
            from inspect_ai.model import get_model

            get_model(args.monitor_model)
        except Exception as e:  # an unknown provider or model: one line before any log is read
            return fail(f"--monitor-model {args.monitor_model}: {error_line(e)}")
    try:
        runs, skipped, unvalidated = validated_runs(args.logs, args.n_boot, args.monitor_model)
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
            f" ({len(not_logs)} .json/.eval file(s) there are no Inspect logs, as in a "
            "checkpoint's folder: run a study on the checkpoint, then validate its logs)"
            if not_logs
            else ""
        )
        return fail(f"no log of a study with probe statistics under {' '.join(args.logs)}{what}")
    for path, why in unvalidated:
        print(visible(f"cotaudit validate: not validated {path}: {why}"), file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    for old in earlier:
        old.unlink()
    validation = summarize(runs)
    figures = [roc_figure(run, out / figure_name(i, run)) for i, run in enumerate(runs, 1)]
    names = [f for f in figures if f is not None]
    (out / TABLE_FILE).write_text(markdown(validation, names) + "\n", encoding="utf-8")
    written = record(validation) | {
        "n_boot": args.n_boot,
        "monitor_model": args.monitor_model,
        "not_validated": [{"log": p, "why": w} for p, w in unvalidated],
    }
    for run, figure in zip(written["runs"], figures, strict=True):
        run["roc_figure"] = figure
    (out / RECORD_FILE).write_text(
        json.dumps(written, indent=1, allow_nan=False) + "\n", encoding="utf-8"
    )
    for line in markdown(validation).splitlines():
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

    lines = roc_lines(run.curves(), set(run.baselines))
    who = f"{run.name} (selection run)" if run.role == "selection" else run.name
    info = roc_curves(lines, FigureText(path, roc_title(run.study, who)))
    return None if info is None or info.failed else path.name


def validated_runs(
    paths: list[str], n_boot: int = N_BOOT, monitor_model: str | None = None
) -> tuple[list, list[tuple[str, str]], list[tuple[str, str]]]:
    """The :class:`~cotaudit.validation.table.RunValidation` of each log under ``paths`` whose
    study has probe statistics and that shows a wrong cue, with its text baselines (and the
    monitor's, given ``monitor_model``), ordered by study, organism, step, model; the logs
    skipped with why; and the logs not validated (no wrong cue) with why."""
    from cotaudit.display.text import visible
    from cotaudit.logs.files import load_runs
    from cotaudit.report.validation_roc import prepare
    from cotaudit.validation.checkpoints import checkpoint_card
    from cotaudit.validation.statistics import statistics_of
    from cotaudit.validation.table import validate_run

    loaded, skipped = load_runs(paths)
    runs = []
    unvalidated: list[tuple[str, str]] = []
    for run in loaded:
        if not statistics_of(run.study) or run.scorer(scorer_of(run.study)) is None:
            skipped.append((run.path, f"study {run.study!r} has no probe statistics"))
            continue
        if monitor_model is not None:
            print(
                visible(
                    f"cotaudit validate: {monitor_model} reads the CoTs of {run.model} "
                    f"({Path(run.path).name}, {run.n_samples} samples)"
                ),
                file=sys.stderr,
            )
        prepared = prepare(run, monitor_model)
        if isinstance(prepared, str):
            unvalidated.append((run.path, prepared))
            continue
        runs.append(
            validate_run(
                run.path,
                run.study,
                run.model,
                checkpoint_card(run.model),
                prepared.samples,
                prepared.statistics,
                n_boot,
                baselines=prepared.baselines,
                notes=prepared.notes,
            )
        )
    runs.sort(key=lambda r: (r.study, r.organism or "", r.step or 0, r.model))
    return runs, skipped, unvalidated
