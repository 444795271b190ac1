"""The raw ledger of the report log-likelihood study: export it from Inspect logs, recompute the
statistics from it.

One ledger row per scored fixture version: ``model``, ``epoch``, the columns of
:data:`cotaudit.studies.report_ll.stats.LEDGER_FIELDS` (ids, family, factor levels, the four
scorings ``s_{h|c}_{hack|clean}`` in nats and their token counts ``n_...``), the scenario's
``bug_id`` and ``project_id`` (empty in logs written without them), ``hack_kind`` and
``invalid`` (why a scoring was dropped from the statistics: not finite, or no tokens; empty for
a valid row). The rows come from the ``report_ll_scorer`` score metadata of each sample;
samples without that score (errors, cancelled runs) are skipped and counted.

    cotaudit ledger logs/x.eval [more.eval ...] [--format csv|jsonl] [--out FILE] [--stats]

:func:`full_statistics` recomputes every run-level statistic (the full table: per cell and
register level, per cell with the registers pooled, the same pooled over cells, register
effects, the factorial's level means and main effects, the discrimination check and the
concealing arm's sensitivity, control verdicts) from the valid ledger rows, per model, with the
logs' independent unit.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cotaudit.studies.report_ll.metrics import RUN_OPTIONS
from cotaudit.studies.report_ll.stats import (
    DEFAULT_DISCRIMINATION_BAND,
    DEFAULT_UNIT,
    ID_FIELDS,
    LEDGER_FIELDS,
    STUDY_CELL,
    UNITS,
)

SCORER = "report_ll_scorer"
TASK = "report_ll"
COLUMNS = ("model", "epoch", *LEDGER_FIELDS, *ID_FIELDS, "hack_kind", "invalid")
"""Columns of an exported ledger row, in order."""
FORMATS = ("csv", "jsonl")


class LedgerError(ValueError):
    """A log that is not a report_ll log, or holds no scored samples."""


@dataclass
class Ledger:
    """Rows of one or more logs, the control declarations found in them, skipped samples."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    controls: dict[str, dict[str, Any]] = field(default_factory=dict)
    skipped: int = 0
    discrimination_band: float | None = None
    """The band of the logs' discrimination check (task metadata; None where it is absent)."""
    discrimination_cell: str | None = None
    """The cell of the logs' discrimination check (task metadata; None where it is absent)."""
    unit: str | None = None
    """The independent unit of the logs' intervals (task metadata; None where it is absent)."""


def _task_name(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def read_ledger(logs: Iterable[str | Path | Any]) -> Ledger:
    """The ledger rows of each log (a path or an ``EvalLog``), in log then sample order.

    Raises :class:`LedgerError` for a log of another task.
    """
    from inspect_ai.log import EvalLog, read_eval_log

    out = Ledger()
    for item in logs:
        log = item if isinstance(item, EvalLog) else read_eval_log(str(item))
        if _task_name(log.eval.task) != TASK:
            raise LedgerError(f"{log.location or item}: a {log.eval.task!r} log, not a {TASK} log")
        metadata = log.eval.metadata or {}
        check = metadata.get("discrimination_check") or {}
        if "band" in check:
            out.discrimination_band = float(check["band"])
        if "cell" in check:
            out.discrimination_cell = str(check["cell"])
        if isinstance(metadata.get("unit"), dict):
            out.unit = str(metadata["unit"]["unit"])
        for sample in log.samples or []:
            score = (sample.scores or {}).get(SCORER)
            md = (score.metadata if score is not None else None) or {}
            if any(f not in md for f in LEDGER_FIELDS) and not md.get("invalid"):
                out.skipped += 1
                continue
            out.rows.append(
                {
                    "model": log.eval.model,
                    "epoch": sample.epoch,
                    **{f: md.get(f) for f in LEDGER_FIELDS},
                    **{f: md.get(f) for f in ID_FIELDS},
                    "hack_kind": md.get("hack_kind"),
                    "invalid": md.get("invalid"),
                }
            )
            control = (sample.metadata or {}).get("control")
            if control:
                out.controls[str(md.get("family"))] = dict(control)
    return out


def write_rows(rows: Sequence[Mapping[str, Any]], fmt: str, out: io.TextIOBase | Any) -> None:
    """Write ``rows`` as CSV (header row, :data:`COLUMNS`) or JSONL (one object per line).

    Scorings are written with ``repr`` precision (CSV) or as JSON numbers, so
    :meth:`ScoredFixture.from_ledger_row` recovers them exactly.
    """
    if fmt == "csv":
        writer = csv.DictWriter(out, fieldnames=list(COLUMNS), lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: row.get(k) for k in COLUMNS})
    elif fmt == "jsonl":
        for row in rows:
            out.write(json.dumps({k: row.get(k) for k in COLUMNS}) + "\n")
    else:
        raise ValueError(f"unknown ledger format {fmt!r}; choose from {list(FORMATS)}")


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """Ledger rows from an exported CSV or JSONL file (by suffix; CSV values are strings)."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return list(csv.DictReader(io.StringIO(text)))


def full_statistics(
    rows: Sequence[Mapping[str, Any]],
    controls: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    n_resamples: int = RUN_OPTIONS["n_resamples"],
    seed: int = RUN_OPTIONS["seed"],
    discrimination_band: float = DEFAULT_DISCRIMINATION_BAND,
    discrimination_cell: str = STUDY_CELL,
    unit: str = DEFAULT_UNIT,
) -> dict[str, dict[str, float]]:
    """Per model: :func:`run_statistics` of the non-control family, its
    :func:`discrimination_check` against ``discrimination_band`` in ``discrimination_cell``
    and its :func:`concealing_sensitivity`, the :func:`control_verdicts` of the control
    families (``controls``: family -> declaration, e.g. :attr:`Ledger.controls`), and
    ``scorings/n_valid``, ``scorings/n_invalid``; intervals resample ``unit``. Only epoch 1 is
    used (scoring is deterministic; later epochs repeat it); rows marked ``invalid`` are
    counted and dropped. Raises for several non-control families in one model's rows."""
    from cotaudit.studies.report_ll.fixtures.schema import ControlDeclaration
    from cotaudit.studies.report_ll.stats import (
        InvalidScorings,
        Resampling,
        ScoredFixture,
        control_verdicts,
        discrimination_statistics,
        run_statistics,
    )

    declarations = {
        f: ControlDeclaration.model_validate(dict(d)) for f, d in (controls or {}).items()
    }
    by_model: dict[str, list[ScoredFixture]] = {}
    invalid: dict[str, int] = {}
    for row in rows:
        if int(row.get("epoch") or 1) != 1:
            continue
        model = str(row.get("model", ""))
        by_model.setdefault(model, [])
        invalid.setdefault(model, 0)
        if row.get("invalid"):
            invalid[model] += 1
            continue
        try:
            by_model[model].append(ScoredFixture.from_ledger_row(row))
        except InvalidScorings:
            invalid[model] += 1
    out: dict[str, dict[str, float]] = {}
    resampling = Resampling(unit, n_resamples, seed)
    for model, records in by_model.items():
        main = [r for r in records if r.family not in declarations]
        stats = run_statistics(main, resampling)
        stats.update(
            discrimination_statistics(main, discrimination_band, discrimination_cell, resampling)
        )
        if declarations:
            stats.update(control_verdicts(records, declarations, resampling))
        stats["scorings/n_valid"] = float(len(records))
        stats["scorings/n_invalid"] = float(invalid[model])
        out[model] = stats
    return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``cotaudit ledger`` arguments."""
    parser.add_argument("logs", nargs="+", help="Inspect log file(s) of the report_ll task")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="csv (default) or jsonl; default taken from --out's suffix when it is .jsonl",
    )
    parser.add_argument("--out", type=Path, default=None, help="output file (default: stdout)")
    parser.add_argument(
        "--stats",
        action="store_true",
        help="write the full run statistics per model (JSON) instead of the rows",
    )
    parser.add_argument(
        "--n-resamples", type=int, default=RUN_OPTIONS["n_resamples"], help="for --stats"
    )
    parser.add_argument("--seed", type=int, default=RUN_OPTIONS["seed"], help="for --stats")
    parser.add_argument(
        "--discrimination-band",
        type=float,
        default=None,
        help="for --stats: band (nats) of the discrimination check (default: the log's "
        f"-T discrimination_band, else {DEFAULT_DISCRIMINATION_BAND})",
    )
    parser.add_argument(
        "--unit",
        choices=UNITS,
        default=None,
        help="for --stats: the independent unit the intervals resample (default: the log's "
        f"-T unit, else {DEFAULT_UNIT} where the rows name bugs, else scenario)",
    )


def run_cli(args: argparse.Namespace) -> int:
    """``cotaudit ledger``: export the ledger (or its statistics) of the given logs."""
    try:
        ledger = read_ledger(args.logs)
    except (LedgerError, FileNotFoundError) as e:
        print(f"cotaudit ledger: {e}", file=sys.stderr)
        return 1
    if not ledger.rows:
        print(f"cotaudit ledger: no scored report_ll samples in {args.logs}", file=sys.stderr)
        return 1
    if ledger.skipped:
        print(
            f"cotaudit ledger: skipped {ledger.skipped} sample(s) without a score", file=sys.stderr
        )
    n_invalid = sum(1 for r in ledger.rows if r.get("invalid"))
    if n_invalid:
        print(
            f"cotaudit ledger: {n_invalid} row(s) with invalid scorings (column `invalid`), "
            "dropped from --stats",
            file=sys.stderr,
        )
    fmt = args.format or (
        "jsonl" if args.out is not None and args.out.suffix == ".jsonl" else "csv"
    )
    buffer = io.StringIO()
    if args.stats:
        band = args.discrimination_band
        if band is None:
            band = ledger.discrimination_band or DEFAULT_DISCRIMINATION_BAND
        unit = args.unit or ledger.unit
        if unit is None:
            unit = DEFAULT_UNIT if all(r.get("bug_id") for r in ledger.rows) else "scenario"
        stats = full_statistics(
            ledger.rows,
            ledger.controls,
            n_resamples=args.n_resamples,
            seed=args.seed,
            discrimination_band=band,
            discrimination_cell=ledger.discrimination_cell or STUDY_CELL,
            unit=unit,
        )
        buffer.write(json.dumps(_jsonable(stats), indent=1) + "\n")
    else:
        write_rows(ledger.rows, fmt, buffer)
    if args.out is None:
        sys.stdout.write(buffer.getvalue())
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(buffer.getvalue(), encoding="utf-8")
        what = "statistics" if args.stats else f"{len(ledger.rows)} rows ({fmt})"
        print(f"wrote {what} to {args.out}", file=sys.stderr)
    return 0
