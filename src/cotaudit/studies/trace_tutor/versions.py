"""What a trace_tutor log of each task version holds where it differs from the metric table: the
one place the report reads a log of a version other than the current one.

Version 2 (:data:`TASK_VERSION`): every logged metric is the value of
:data:`cotaudit.studies.trace_tutor.metrics.METRICS` under the logged options.

Version 1 differs in its compact set only: the headline is logged under the keys of the full
table, ``visible_vs_masked/answer_key/{mean_diff, n, mean_ci_low, mean_ci_high}`` (today's
``delta_context/{mean, n, ci_low, ci_high}``, the same values); the report finds them in its
recomputation of the full tables, which the compact set is drawn from.

Version 0 (the task carried no version) differs in two places, each recognised by the log's
content:

- ``first_pass_median/<curve>`` of ``trace_table_ii`` is the midpoint median of the first-pass
  fractions (numpy's: the mean of the two middle values for even n) in a log whose
  ``definitions`` metadata does not define ``first_pass_median``; the lower median otherwise;
- a log without ``trace_checkpoint_counts`` carries the broad count
  ``pass_early_fail_100/<curve>`` of that metric (some f < 1 passes, 100% fails) as
  ``non_monotone/<curve>`` in ``trace_anchoring``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from cotaudit.stats import median
from cotaudit.studies.metrics import Table
from cotaudit.studies.trace_tutor import stats as ts

TASK_VERSION = 2
"""The trace_tutor task's ``Task(version=...)``."""


def logged_differences(
    task_version: int,
    definitions: Mapping[str, Any],
    metric_names: Collection[str],
    samples: Sequence[Any],
) -> Table:
    """The values a log of ``task_version`` holds where they differ from the metric table's
    (empty for the current version): ``definitions`` is the log's
    ``eval.metadata["definitions"]``, ``metric_names`` the metrics its scorer lists, ``samples``
    its scored samples."""
    if task_version >= 1:
        return {}
    records = ts.records_from_scores(samples)
    out: Table = {}
    if "trace_table_ii" in metric_names and "first_pass_median" not in definitions:
        midpoint = ts.table_ii(records, first_pass_average=median)
        out.update({k: v for k, v in midpoint.items() if k.startswith("first_pass_median/")})
    if "trace_anchoring" in metric_names and "trace_checkpoint_counts" not in metric_names:
        broad = ts.non_monotone_counts(records)
        out.update(
            {
                k.replace("pass_early_fail_100/", "non_monotone/", 1): v
                for k, v in broad.items()
                if k.startswith("pass_early_fail_100/")
            }
        )
    return out
