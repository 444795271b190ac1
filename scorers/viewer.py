"""How each study's log shows in Inspect's log viewer (``Task(viewer=...)``).

The viewer's sample table has columns for built-in fields and for score values only (a dict
score gives one column per key), so each study's scorer puts, besides its numbers, the fields a
reader filters on into its ``Score.value`` as text or booleans (``condition``, ``pair``,
``a_final``, ``gold``, ``correct``) and a one-line sparkline of its curve. The table shows the
primary per-sample score first, sorted by pair; the sample's score panel lists the value's keys
in their order, primary first (``SampleScoreView`` with no sort keeps that order).

Inspect reduces every sample's scores over epochs (even one epoch) before the metrics see them,
and its ``mean`` turns text into 0.0, so the studies reduce with :func:`mean_keep_text`.
"""

from __future__ import annotations

from collections.abc import Sequence

from inspect_ai.scorer import Score, ScoreReducer, mean_score, score_reducer
from inspect_ai.viewer import (
    SampleScoreView,
    TaskSamplesColumn,
    TaskSamplesSort,
    TaskSamplesView,
    ViewerConfig,
)

from cotaudit.display import (
    REPORT_LL_PRIMARY,
    REPORT_LL_VIEWER_FIELDS,
    SELFCOMMIT_VIEWER_FIELDS,
    TRACE_PRIMARY,
    TRACE_VIEWER_FIELDS,
)

HIDDEN_BUILTINS = ("input", "target", "answer", "tokens", "duration")
"""Built-in columns kept off by default (the prompt is long; ``a_final`` replaces ``answer``)."""

SELFCOMMIT_SCORER = "selfcommit_scorer"
SELFCOMMIT_FIELDS = SELFCOMMIT_VIEWER_FIELDS
TRACE_SCORER = "trace_tutor_scorer"
TRACE_FIELDS = TRACE_VIEWER_FIELDS
REPORT_LL_SCORER = "report_ll_scorer"
REPORT_LL_FIELDS = REPORT_LL_VIEWER_FIELDS


def _config(
    name: str,
    scorer: str,
    visible: Sequence[str],
    hidden: Sequence[str],
    sort: Sequence[str],
    labels: dict[str, str],
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
            sort=[TaskSamplesSort.score(scorer, k) for k in sort],
            multiline=False,
            score_labels=labels,
        ),
        sample_score_view=SampleScoreView(default="grid"),
    )


def selfcommit_viewer(primary: str, summaries: Sequence[str]) -> ViewerConfig:
    """Columns: pair, condition, the primary summary, the c(t) sparkline, a_final, gold,
    correct, then the other summaries; sorted by pair, condition."""
    visible = ["pair", "condition", primary, "c_t", "a_final", "gold", "correct"]
    hidden = [s for s in summaries if s != primary]
    labels = {"c_t": "c(t)", primary: primary.replace("tau_", "tau_first ")}
    return _config("selfcommit", SELFCOMMIT_SCORER, visible, hidden, ["pair", "condition"], labels)


def trace_viewer() -> ViewerConfig:
    """Columns: pair, condition, Delta_context, AUC visible and masked, the p(f) sparklines,
    final answer, gold, correct; sorted by pair, condition."""
    visible = ["pair", "condition", TRACE_PRIMARY, "auc_visible", "auc_masked", "p_visible",
               "p_masked", "final_answer", "gold", "correct"]
    hidden = ["pass_at_10_visible", "pass_at_10_masked", "first_pass_visible",
              "first_pass_masked", "zero_probe_visible", "zero_probe_masked", "length_tokens"]
    labels = {"p_visible": "p(f) visible", "p_masked": "p(f) masked",
              TRACE_PRIMARY: "Δcontext", "final_answer": "answer"}
    return _config("trace_tutor", TRACE_SCORER, visible, hidden, ["pair", "condition"], labels)


def report_ll_viewer() -> ViewerConfig:
    """Columns: scenario, the factor levels, DiD, D_h, D_c; sorted by scenario, register."""
    visible = ["scenario", "register", "rendering", "richness", REPORT_LL_PRIMARY, "d_h", "d_c"]
    hidden = ["family", "did_per_token", "d_h_per_token", "d_c_per_token"]
    labels = {REPORT_LL_PRIMARY: "DiD (nats)", "d_h": "D_h", "d_c": "D_c"}
    return _config(
        "report_ll", REPORT_LL_SCORER, visible, hidden, ["scenario", "register"], labels
    )


@score_reducer(name="mean_keep_text")
def mean_keep_text() -> ScoreReducer:
    """Inspect's ``mean`` over epochs for every number or boolean of a dict score (so one epoch
    gives the sample's values, as floats); a text or None value is kept when every epoch has
    the same one, else None. Non-dict scores: plain ``mean``."""
    mean = mean_score()

    def reduce(scores: list[Score]) -> Score:
        if not scores or not all(isinstance(s.value, dict) for s in scores):
            return mean(scores)
        labels = {
            k for s in scores for k, v in s.value.items()  # type: ignore[union-attr]
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
