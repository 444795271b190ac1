"""The ``cotaudit`` command line."""

from __future__ import annotations

import argparse
import sys


def _prepare(args: argparse.Namespace) -> int:
    """Convert and cache the embedded default model (and the tiny test model)."""
    from cotaudit.models.default import default_model_path
    from cotaudit.models.tiny import tiny_model_path

    print(f"default model: {default_model_path()}")
    if args.tiny:
        print(f"tiny model: {tiny_model_path()}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cotaudit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    prepare = sub.add_parser("prepare", help="convert and cache the embedded default model")
    prepare.add_argument("--tiny", action="store_true", help="also build the tiny test model")
    prepare.set_defaults(func=_prepare)
    ledger = sub.add_parser("ledger", help="export the raw scorings of report_ll logs (CSV/JSONL)")
    from cotaudit.report.ledger import add_arguments as _ledger_arguments
    from cotaudit.report.ledger import run_cli as _ledger_cli

    _ledger_arguments(ledger)
    ledger.set_defaults(func=_ledger_cli)
    report = sub.add_parser("report", help="paper tables, figures and model comparison from logs")
    from cotaudit.cli.report import add_arguments as _report_arguments
    from cotaudit.cli.report import run_cli as _report_cli

    _report_arguments(report)
    report.set_defaults(func=_report_cli)
    contrast = sub.add_parser(
        "contrast", help="write the cluster contrast (and a model's description) into logs"
    )
    from cotaudit.cli.contrast import add_arguments as _contrast_arguments
    from cotaudit.cli.contrast import run_cli as _contrast_cli

    _contrast_arguments(contrast)
    contrast.set_defaults(func=_contrast_cli)
    validate = sub.add_parser("validate", help="detection power of the probes on organism logs")
    from cotaudit.cli.validate import add_arguments as _validate_arguments
    from cotaudit.cli.validate import run_cli as _validate_cli

    _validate_arguments(validate)
    validate.set_defaults(func=_validate_cli)
    organism = sub.add_parser("organism", help="train a model organism (a known shortcut)")
    from cotaudit.cli.organism import add_arguments as _organism_arguments
    from cotaudit.cli.organism import run_cli as _organism_cli

    _organism_arguments(organism)
    organism.set_defaults(func=_organism_cli)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
