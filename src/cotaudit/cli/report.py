"""The ``cotaudit report`` subcommand. Its terminal lines name logs, tasks and models from the
logs read: written :func:`~cotaudit.display.text.visible` (a control character is shown, never
obeyed)."""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "logs",
        nargs="+",
        metavar="LOG_OR_DIR",
        help="Inspect log files (.eval/.json) or folders holding them",
    )
    parser.add_argument(
        "--out",
        default="report",
        metavar="DIR",
        help="output folder for report.md and the PNG figures (default: report)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="fail on a section error, or when a recomputed number differs from the log's metric",
    )


def run_cli(args: argparse.Namespace) -> int:
    from cotaudit.display.text import visible
    from cotaudit.report import build_report

    def progress(line: str) -> None:
        print(visible(line), file=sys.stderr, flush=True)

    try:
        report = build_report(
            args.logs, args.out, progress=None if args.quiet else progress, strict=args.strict
        )
    except FileNotFoundError as e:
        print(visible(f"cotaudit report: {e}"), file=sys.stderr)
        return 2
    if not report.runs:
        n_skipped = len(report.skipped)
        skipped = f" ({n_skipped} file(s) not readable as Inspect logs)" if n_skipped else ""
        print(
            visible(
                f"cotaudit report: no data: no Inspect logs under {' '.join(args.logs)}{skipped}; "
                "nothing written"
            ),
            file=sys.stderr,
        )
        return 1
    bad = [
        (s.title, s.consistency)
        for ss in report.sections.values()
        for s in ss
        if s.consistency is not None and not s.consistency.ok
    ]
    for title, consistency in bad:
        print(visible(f"cotaudit report: {title}: {consistency.line()}"), file=sys.stderr)
    print(report.markdown_path)
    return 1 if (bad and args.strict) else 0
