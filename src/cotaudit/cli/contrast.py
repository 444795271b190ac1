"""The ``cotaudit contrast`` subcommand: write the cluster contrast into existing logs (what the
tasks' hook does at the end of a run; see :mod:`cotaudit.scorers.cluster_contrast`)."""

from __future__ import annotations

import argparse
import asyncio
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "logs", nargs="+", metavar="LOG_OR_DIR", help="Inspect log files or folders holding them"
    )
    parser.add_argument(
        "--contrast-model",
        metavar="MODEL",
        help="Inspect model (provider/model) asked what distinguishes the two clusters' texts",
    )
    parser.add_argument(
        "--n-nearest", type=int, default=3, metavar="N", help="samples shown per cluster (3)"
    )


def run_cli(args: argparse.Namespace) -> int:
    from cotaudit.logs.files import find_logs
    from cotaudit.params import ParameterError, parse_contrast_model
    from cotaudit.scorers.cluster_contrast import annotate_log

    try:
        model = parse_contrast_model(args.contrast_model)
        files = find_logs(args.logs)
    except (ParameterError, FileNotFoundError) as e:
        print(
            f"cotaudit contrast: {str(e).replace('-T contrast_model', '--contrast-model')}",
            file=sys.stderr,
        )
        return 2
    if args.n_nearest < 1:
        print("cotaudit contrast: --n-nearest must be >= 1", file=sys.stderr)
        return 2

    async def annotate_all() -> int:
        failed = 0
        for f in files:
            try:
                log = await annotate_log(f, contrast_model=model, n_nearest=args.n_nearest)
            except Exception as e:  # one unreadable log must not stop the others
                print(f"{f}: not annotated: {type(e).__name__}: {e}", file=sys.stderr)
                failed += 1
                continue
            if log is None:
                print(f"{f}: no samples or no cluster metric; left as it is")
                continue
            for metric, entry in log.metadata["cluster_contrast"].items():
                print(f"{f}: {metric}\n{entry['summary']}\n")
                described = entry.get("contrast_model")
                if described:
                    print(
                        described.get("description")
                        or f"contrast model failed: {described.get('error')}",
                        end="\n\n",
                    )
        return 1 if failed else 0

    return asyncio.run(annotate_all())
