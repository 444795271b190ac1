"""What a selfcommit log holds, by the task version that wrote it (``Task(version=...)``).

Version 1 (:data:`VERSION`): the task metadata states the probe positions (``positions``), the
no-answer rule (``no_answer``: a response without a final answer is left out of the run
metrics with its pair), how a_final is read (``final_answer_reading``) and that the paired
``wins/``, ``ties/`` metrics are counts (``paired_wins``). The exact estimator's fields
(``-T estimator``) were added to version 1 without a new version: a score without
``estimator`` was sampled (the record's default), and its ``*_exact`` fields are None.

Version 0 (logs without a task version) holds any of those statements or none; a statement a
version-0 log lacks means what that log's code did: t = 0 was a point of every curve and of
its summaries; a response with no final answer was scored as c = 0 everywhere and counted in
the metrics; a_final was the last ``\\boxed{}``, else ``#### N``, else the number after
"answer is", else the last number anywhere; ``wins/``, ``ties/`` held the rates (wins /
n_pairs). :func:`conventions` is the one place that reads a log's version.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cotaudit.studies.selfcommit.stats import paired_count_rates, table_summaries

VERSION = 1
"""The selfcommit task's version (its logs' ``eval.task_version``)."""

POSITIONS_UNSTATED = (
    "t = 0, stride, ..., T (this log states no positions: it was written when t = 0 was a point "
    "of every curve and of its summaries, so a trace committed from the start has tau_first = 0)"
)
READING_UNSTATED = (
    "this log states no reading; it was written when a_final was the last \\boxed{}, else "
    '#### N, else the number after "answer is", else the last number anywhere (a CoT cut by the '
    "token limit counted as answered)"
)
NO_ANSWER_UNSTATED = (
    "This log predates that rule (its logged metrics scored such responses as c = 0 "
    "everywhere), so logged metrics may differ from the tables."
)
WINS_AS_RATES = (
    "This log does not declare its paired wins: its logged `wins/`, `ties/` metrics are the "
    "rates (wins / n_pairs); the tables show the counts and check the logged rates against "
    "`win_rate/`, `tie_rate/`."
)


@dataclass(frozen=True)
class LogConventions:
    """How one selfcommit log was written: ``positions`` and ``final_answer_reading`` as the
    log states them (or what a version-0 log without them did), ``no_answer_note`` and
    ``wins_note`` what the report says of the log's metrics ("" when they follow the current
    rules), ``wins_as_counts`` whether the logged ``wins/``, ``ties/`` are counts."""

    positions: str
    final_answer_reading: str
    no_answer_note: str = ""
    wins_note: str = ""
    wins_as_counts: bool = True


def conventions(task_version: int, task_metadata: Mapping[str, Any]) -> LogConventions:
    """The conventions of a log of ``task_version`` with ``task_metadata`` (module docstring):
    a version-1 log states them all; a version-0 log is read by what its metadata states."""
    if task_version >= VERSION:
        return LogConventions(
            positions=task_metadata["positions"],
            final_answer_reading=task_metadata["final_answer_reading"],
        )
    wins_as_counts = "paired_wins" in task_metadata
    return LogConventions(
        positions=task_metadata.get("positions", POSITIONS_UNSTATED),
        final_answer_reading=task_metadata.get("final_answer_reading", READING_UNSTATED),
        no_answer_note="" if "no_answer" in task_metadata else NO_ANSWER_UNSTATED,
        wins_note="" if wins_as_counts else WINS_AS_RATES,
        wins_as_counts=wins_as_counts,
    )


def as_logged(table: Mapping[str, float], wins_as_counts: bool) -> dict[str, float]:
    """``table`` with the paired count keys of its summaries (``wins/<s>``, ``ties/<s>``, and
    the both-correct ones: :func:`cotaudit.studies.selfcommit.stats.paired_count_rates` of
    :func:`~cotaudit.studies.selfcommit.stats.table_summaries`) holding what the log holds under
    them: the counts, or where ``wins_as_counts`` is False the rates (``win_rate/<s>``,
    ``tie_rate/<s>``)."""
    out = dict(table)
    if wins_as_counts:
        return out
    for count, rate in paired_count_rates(table_summaries(table)).items():
        if count in out and rate in out:
            out[count] = out[rate]
    return out
