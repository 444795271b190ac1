"""The three disjoint row sets of the vendored GSM8K test split (1319 rows, 0-based) that a
validation of the probes against organisms keeps apart:

- **training** rows 1000-1318 (:data:`TRAINING_ROWS`): the organisms' training examples;
- **selection** rows 800-999 (:data:`SELECTION_ROWS`): everything chosen while building the
  organisms and the validation (training recipes, the checkpoint to use, thresholds), e.g. the
  held-out shortcut rate ``bench/organism.py`` and
  :func:`cotaudit.organisms.evaluation.measure_shortcut_rate` read by default;
- **evaluation** rows 0-799 (:data:`EVALUATION_ROWS`): the validation's reported numbers, the
  rows the studies read from their start by default.

A study sample's row is ``int(pair_id[1:])`` (``pair_id = "p%04d" % row``); a study run reads
rows from ``-T first_row`` (default 0) on. A number reported on rows that were used to choose it
is optimistic: :mod:`cotaudit.validation.protocol` warns where a run's rows overlap the training
rows, or its evaluation rows the selection rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

SPLIT_ROWS = 1319
"""Rows of the vendored GSM8K test split."""

TRAINING_ROWS = range(1000, 1319)
"""Rows the organisms train on (0-based, 319 rows)."""
SELECTION_ROWS = range(800, 1000)
"""Rows where recipes, checkpoints and thresholds are chosen (200 rows)."""
EVALUATION_ROWS = range(0, 800)
"""Rows the validation reports on (800 rows)."""

RowSet = Literal["training", "selection", "evaluation"]
ROW_SETS: dict[RowSet, range] = {
    "training": TRAINING_ROWS,
    "selection": SELECTION_ROWS,
    "evaluation": EVALUATION_ROWS,
}
"""Each row set by name."""


def row_of(pair_id: str) -> int | None:
    """The dataset row a study sample's ``pair_id`` names (``"p0042"`` -> 42); None for another
    form."""
    if len(pair_id) < 2 or pair_id[0] != "p" or not pair_id[1:].isdigit():
        return None
    return int(pair_id[1:])


def row_set_of(row: int) -> RowSet | None:
    """The row set ``row`` lies in (None: outside the split)."""
    return next((name for name, rows in ROW_SETS.items() if row in rows), None)


def describe_rows(rows: Iterable[int]) -> str:
    """Rows as ranges, ``"0-9, 800-804, 1000"`` (empty: ``"none"``)."""
    ordered = sorted(set(rows))
    if not ordered:
        return "none"
    spans: list[tuple[int, int]] = []
    for r in ordered:
        if spans and r == spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], r)
        else:
            spans.append((r, r))
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def row_sets_record() -> dict[str, list[int]]:
    """The row sets as an organism card records them: ``{name: [first, last]}`` (inclusive)."""
    return {name: [rows.start, rows.stop - 1] for name, rows in ROW_SETS.items()}
