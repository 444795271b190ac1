"""How each study's log shows in Inspect's log viewer (``Task(viewer=...)``).

The viewer's sample table has columns for built-in fields and for score values only (a dict
score gives one column per key, every key shown: ``visible=False`` does not hide a score
column), so each study's scorer puts, besides its numbers, the fields a reader filters on into
its ``Score.value`` as text or booleans (``condition``, ``pair``, ``a_final``, ``gold``,
``correct``) and a sparkline of its curve. The table shows the primary per-sample score first,
rows sorted by sample id (``<pair>-<condition>``: by pair, then condition); the sample's score
panel lists the value's keys in their order, primary first (``SampleScoreView`` with no sort
keeps that order).

The viewer sizes a score column by its label (max(70, 6.2 px per character + 40 px), at most
120 px) and cuts a longer header or cell with an ellipsis, so every score key gets a label
of at most :data:`MAX_LABEL_CHARS` characters (:data:`SELFCOMMIT_LABELS`, :data:`TRACE_LABELS`,
:data:`REPORT_LL_LABELS`), and no score column is sorted (a sort mark takes about 26 px of
the header).

Inspect reduces every sample's scores over epochs (even one epoch) before the metrics see them,
and its ``mean`` turns text into 0.0, so the studies reduce with :func:`mean_keep_text`
(logged as :data:`EPOCH_REDUCER`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from inspect_ai.scorer import Score, ScoreReducer, mean_score, score_reducer
from inspect_ai.viewer import (
    SampleScoreView,
    TaskSamplesColumn,
    TaskSamplesSort,
    TaskSamplesView,
    ViewerConfig,
)

from cotaudit.studies.report_ll.display import REPORT_LL_PRIMARY, REPORT_LL_VIEWER_FIELDS
from cotaudit.studies.selfcommit.display import SELFCOMMIT_VIEWER_FIELDS
from cotaudit.studies.trace_tutor.display import TRACE_PRIMARY, TRACE_VIEWER_FIELDS

HIDDEN_BUILTINS = ("input", "target", "answer", "tokens", "duration")
"""Built-in columns kept off by default (the prompt is long; ``a_final`` replaces ``answer``)."""

SELFCOMMIT_SCORER = "selfcommit_scorer"
SELFCOMMIT_FIELDS = SELFCOMMIT_VIEWER_FIELDS
TRACE_SCORER = "trace_tutor_scorer"
TRACE_FIELDS = TRACE_VIEWER_FIELDS
REPORT_LL_SCORER = "report_ll_scorer"
REPORT_LL_FIELDS = REPORT_LL_VIEWER_FIELDS


MAX_LABEL_CHARS = 10
"""Longest score-column label: the column the viewer gives it (6.2 px per character) holds
its header text (about 6.9 px per capital) up to about 10 characters."""
ROW_SORT = [TaskSamplesSort(column="sampleId")]
"""Rows sorted by sample id: ``<pair>-<condition>`` (selfcommit, trace_tutor),
``<scenario>/<rendering>/<richness>/<register>`` (report_ll)."""

SELFCOMMIT_LABELS = {"c_t": "c(t) plot", "uncommitted": "uncommit.", "lowcommit": "low c(t)"}
"""Column labels of the selfcommit keys longer than :data:`MAX_LABEL_CHARS` or named for the
reader (the c(t) sparkline; 9 characters give its column room for 8 block characters)."""
TRACE_STATS = {
    "auc": "AUC",
    "pass_at_10": "p@10",
    "first_pass": "1st",
    "first_pass_censored": "cens",
    "all_pass": "all",
    "pass_10_fail_100": "nm10",
    "pass_early_fail_100": "nm",
    "zero_probe": "0%",
}
"""trace_tutor's per-curve statistics (a ``<stat>_visible`` and a ``<stat>_masked`` key each)
and their short names in the column labels (``nm10``: passes at 10% and fails at 100%, the
study's non-monotone; ``nm``: passes at some f < 100% and fails at 100%; ``cens``: no pass,
first pass censored at 1.0)."""
TRACE_LABELS = {
    TRACE_PRIMARY: "Δcontext",
    "final_answer": "final ans",
    "length_tokens": "tokens",
    "p_visible": "p(f) vis.",
    "p_masked": "p(f) mask",
    **{
        f"{stat}_{ctx}": f"{short} {'vis.' if ctx == 'visible' else 'mask'}"
        for stat, short in TRACE_STATS.items()
        for ctx in ("visible", "masked")
    },
}
"""Column labels of the trace_tutor keys: ``vis.`` the curve with the key visible, ``mask``
with it masked."""
REPORT_LL_LABELS = {
    REPORT_LL_PRIMARY: "DiD (nats)",
    "d_h": "D_h",
    "d_c": "D_c",
    "did_per_token": "DiD/token",
    "d_h_per_token": "D_h/token",
    "d_c_per_token": "D_c/token",
}
"""Column labels of the report_ll keys."""


def _config(
    name: str,
    scorer: str,
    visible: Sequence[str],
    hidden: Sequence[str],
    labels: Mapping[str, str],
) -> ViewerConfig:
    columns = [TaskSamplesColumn(id="sampleId")]
    columns += [TaskSamplesColumn.score(scorer, k) for k in visible]
    # the viewer shows every score column (its score picker, not `visible`, hides them), so
    # the other scores are only ordered after the chosen ones
    columns += [TaskSamplesColumn.score(scorer, k) for k in hidden]
    columns += [TaskSamplesColumn(id=b, visible=False) for b in HIDDEN_BUILTINS]
    return ViewerConfig(
        task_samples_view=TaskSamplesView(
            name=name,
            columns=columns,
            sort=ROW_SORT,
            multiline=False,
            score_labels=dict(labels),
        ),
        sample_score_view=SampleScoreView(default="grid"),
    )


def selfcommit_viewer(primary: str, summaries: Sequence[str]) -> ViewerConfig:
    """Columns: pair, condition, the primary summary, the c(t) sparkline, a_final, gold,
    correct, then the other summaries; sorted by sample id (pair, then condition)."""
    visible = ["pair", "condition", primary, "c_t", "a_final", "gold", "correct"]
    hidden = [s for s in summaries if s != primary]
    return _config("selfcommit", SELFCOMMIT_SCORER, visible, hidden, SELFCOMMIT_LABELS)


def trace_viewer() -> ViewerConfig:
    """Columns: pair, condition, Delta_context, AUC visible and masked, the p(f) sparklines,
    final answer, gold, correct, then the other per-curve statistics and the length; sorted by
    sample id (pair, then condition)."""
    visible = [
        "pair",
        "condition",
        TRACE_PRIMARY,
        "auc_visible",
        "auc_masked",
        "p_visible",
        "p_masked",
        "final_answer",
        "gold",
        "correct",
    ]
    hidden = [
        f"{stat}_{ctx}" for stat in TRACE_STATS if stat != "auc" for ctx in ("visible", "masked")
    ] + ["length_tokens"]
    return _config("trace_tutor", TRACE_SCORER, visible, hidden, TRACE_LABELS)


def report_ll_viewer() -> ViewerConfig:
    """Columns: scenario, the factor levels, DiD, D_h, D_c, then the family and the per-token
    differences; sorted by sample id (scenario, rendering, richness, register)."""
    visible = ["scenario", "register", "rendering", "richness", REPORT_LL_PRIMARY, "d_h", "d_c"]
    hidden = ["family", "did_per_token", "d_h_per_token", "d_c_per_token"]
    return _config("report_ll", REPORT_LL_SCORER, visible, hidden, REPORT_LL_LABELS)


PROBE_SCORER = "probe_scorer"
PROBE_LABELS = {
    "task_score": "task score",
    "auc": "AUC",
    "has_final": "has final",
    "pass_at_first": "p first",
    "first_pass": "1st pass",
    "first_pass_censored": "1st cens.",
    "p0": "p(0%)",
    "c0": "c(0)",
    "uncommitted": "uncommit.",
    "lowcommit": "low c(t)",
    "rho_back": "rho back",
}
"""Column labels of the probe's value keys longer than :data:`MAX_LABEL_CHARS` or named for
the reader; a replayed context's key (``<key>_replay``) gets the same label with a ``↺``."""
REPLAY_MARK = "↺"


def probe_label(key: str) -> str:
    """The column label of a probe value key: :data:`PROBE_LABELS` (else the key), a replayed
    context's key marked ``↺`` (cut to :data:`MAX_LABEL_CHARS` characters)."""
    base, replay = (key[: -len("_replay")], True) if key.endswith("_replay") else (key, False)
    label = PROBE_LABELS.get(base, base)
    if replay:
        label = f"{REPLAY_MARK}{label}"
    return label[:MAX_LABEL_CHARS]


def probe_viewer(keys: Sequence[str]) -> ViewerConfig:
    """Columns: the probe's value keys in their order (the task score first), each with a
    label of at most :data:`MAX_LABEL_CHARS` characters; sorted by sample id."""
    labels = {k: probe_label(k) for k in keys if probe_label(k) != k}
    return _config("probe", PROBE_SCORER, list(keys), [], labels)


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
        labels = {
            k
            for s in scores
            for k, v in s.value.items()  # type: ignore[union-attr]
            if v is None or isinstance(v, str)
        }
        numeric = [
            s.model_copy(
                update={"value": {k: v for k, v in s.value.items() if k not in labels}}  # type: ignore[union-attr]
            )
            for s in scores
        ]
        reduced = mean(numeric)
        value = {}
        for k in scores[0].value:  # type: ignore[union-attr]
            if k in labels:
                seen = {s.value.get(k) for s in scores}  # type: ignore[union-attr]
                value[k] = seen.pop() if len(seen) == 1 else None
            else:
                value[k] = reduced.value[k]  # type: ignore[index]
        return reduced.model_copy(update={"value": value})

    return reduce


@score_reducer(name="mean_keep_text")
def mean_keep_text_by_name() -> ScoreReducer:
    """:func:`mean_keep_text` under the name ``mean_keep_text``, which logs may record as their
    reducer: ``inspect score`` re-creates a log's reducer from the name it records."""
    return mean_keep_text()
