"""The ``cotaudit`` command line."""

from __future__ import annotations

import argparse
import importlib
import sys

SUBCOMMANDS = (
    ("ledger", "export the raw scorings of report_ll logs (CSV/JSONL)", "cotaudit.report.ledger"),
    ("report", "paper tables, figures and model comparison from logs", "cotaudit.cli.report"),
    (
        "contrast",
        "write the cluster contrast (and a model's description) into logs",
        "cotaudit.cli.contrast",
    ),
    ("validate", "detection power of the probes on organism logs", "cotaudit.cli.validate"),
    ("organism", "train a model organism (a known shortcut)", "cotaudit.cli.organism"),
)
"""The subcommands after ``prepare``: (name, help, the module whose ``add_arguments`` declares
its arguments and whose ``run_cli`` runs it), imported when the parser is built."""


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
    for name, summary, module in SUBCOMMANDS:
        command = importlib.import_module(module)
        subparser = sub.add_parser(name, help=summary)
        command.add_arguments(subparser)
        subparser.set_defaults(func=command.run_cli)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
