"""How each study's log shows in Inspect's log viewer (``Task(viewer=...)``).

The viewer's sample table has columns for built-in fields and for score values only (a dict
score gives one column per key, every key shown: ``visible=False`` does not hide a score
column), so each study's scorer puts, besides its numbers, the fields a reader filters on into
its ``Score.value`` as text or booleans (``condition``, ``pair``, ``a_final``, ``gold``,
``correct``) and a sparkline of its curve. The table shows the primary per-sample score first,
rows sorted by sample id (``<pair>-<condition>``: by pair, then condition); the sample's score
panel lists the value's keys in their order, primary first (``SampleScoreView`` with no sort
keeps that order).

Each study declares its table (:class:`cotaudit.display.sample_table.SampleTable`: columns and
labels of at most ten characters) in its ``display.sample_table``; :func:`viewer_config`
builds the ``ViewerConfig``. No score column is sorted (a sort mark takes about 26 px of the
header).

Inspect reduces every sample's scores over epochs (even one epoch) before the metrics see them,
and its ``mean`` turns text into 0.0, so the studies reduce with :func:`mean_keep_text`
(logged as :data:`EPOCH_REDUCER`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from inspect_ai.scorer import Score, ScoreReducer, mean_score, score_reducer
from inspect_ai.viewer import (
    SampleScoreView,
    TaskSamplesColumn,
    TaskSamplesSort,
    TaskSamplesView,
    ViewerConfig,
)

from cotaudit.display.sample_table import SampleTable

HIDDEN_BUILTINS = ("input", "target", "answer", "tokens", "duration")
"""Built-in columns kept off by default (the prompt is long; ``a_final`` replaces ``answer``)."""


ROW_SORT = [TaskSamplesSort(column="sampleId")]
"""Rows sorted by sample id: ``<pair>-<condition>`` (selfcommit, trace_tutor),
``<scenario>/<rendering>/<richness>/<register>`` (report_ll)."""


def viewer_config(table: SampleTable) -> ViewerConfig:
    """The ``Task(viewer=...)`` of a study's sample table: the sample id, the ``visible`` score
    keys then the ``hidden`` ones, the built-ins of :data:`HIDDEN_BUILTINS` off, rows sorted by
    sample id, the study's labels (``wide`` columns' padded), the sample's scores as a grid."""
    columns = [TaskSamplesColumn(id="sampleId")]
    columns += [TaskSamplesColumn.score(table.scorer, k) for k in table.visible]
    # the viewer shows every score column (its score picker, not `visible`, hides them), so
    # the other scores are only ordered after the chosen ones
    columns += [TaskSamplesColumn.score(table.scorer, k) for k in table.hidden]
    columns += [TaskSamplesColumn(id=b, visible=False) for b in HIDDEN_BUILTINS]
    return ViewerConfig(
        task_samples_view=TaskSamplesView(
            name=table.name,
            columns=columns,
            sort=ROW_SORT,
            multiline=False,
            score_labels=table.column_labels(),
        ),
        sample_score_view=SampleScoreView(default="grid"),
    )


EPOCH_REDUCER = "avg"
"""The name :func:`mean_keep_text` is registered and logged under. Inspect writes the name of
any reducer a task sets into each score of the log's results (its own ``mean`` included; only
a task that sets none logs no name), and the viewer's title bar shows it under every metric;
its terminal leaves out a lone reducer named ``avg`` (``inspect_ai._display.core.results``), so
the progress line and the summary show the bare metric names."""


@score_reducer(name=EPOCH_REDUCER)
def mean_keep_text() -> ScoreReducer:
    """Inspect's ``mean`` over epochs for every number or boolean of a dict score (so one epoch
    gives the sample's values, as floats); a text or None value is kept when every epoch has
    the same one, else None. Non-dict scores: plain ``mean``."""
    mean = mean_score()

    def reduce(scores: list[Score]) -> Score:
        if not scores or not all(isinstance(s.value, dict) for s in scores):
            return mean(scores)
        values: list[dict[str, Any]] = [dict(cast(Mapping[str, Any], s.value)) for s in scores]
        labels = {k for v in values for k, x in v.items() if x is None or isinstance(x, str)}
        numeric = [
            s.model_copy(update={"value": {k: x for k, x in v.items() if k not in labels}})
            for s, v in zip(scores, values, strict=True)
        ]
        reduced_score = mean(numeric)
        reduced = cast(Mapping[str, Any], reduced_score.value)
        value: dict[str, Any] = {}
        for k in values[0]:
            if k in labels:
                seen = {v.get(k) for v in values}
                value[k] = seen.pop() if len(seen) == 1 else None
            else:
                value[k] = reduced[k]
        return reduced_score.model_copy(update={"value": value})

    return reduce


@score_reducer(name="mean_keep_text")
def mean_keep_text_by_name() -> ScoreReducer:
    """:func:`mean_keep_text` under the name ``mean_keep_text``, which logs may record as their
    reducer: ``inspect score`` re-creates a log's reducer from the name it records."""
    return mean_keep_text()
