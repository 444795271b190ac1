"""Viewer configuration, compact key selection and the text-keeping epoch reducer (pure cases)."""

import math

import pytest
from helpers import one_feature_contrast
from inspect_ai.scorer import Score
from inspect_ai.viewer import ViewerConfig

from cotaudit.display.sample_table import MAX_LABEL_CHARS, SampleTable
from cotaudit.probing import display as probe_display
from cotaudit.probing.curves import DEFAULT_THETAS
from cotaudit.probing.summaries import value_keys
from cotaudit.scorers.viewer import EPOCH_REDUCER, mean_keep_text, viewer_config
from cotaudit.stats import select
from cotaudit.studies.metrics import cluster_compact_keys, full_metrics_of, parse_metric_set
from cotaudit.studies.report_ll import display as report_ll_display
from cotaudit.studies.report_ll.metrics import report_ll_compact, report_ll_headline_keys
from cotaudit.studies.selfcommit import display as selfcommit_display
from cotaudit.studies.selfcommit.metrics import (
    primary_summary,
    selfcommit_compact,
    selfcommit_headline,
    selfcommit_headline_keys,
)
from cotaudit.studies.trace_tutor import display as trace_display
from cotaudit.studies.trace_tutor.display import TRACE_STATS
from cotaudit.studies.trace_tutor.metrics import trace_compact, trace_headline_keys


def test_one_epoch_keeps_every_value():
    value = {
        "tau_0.8": 0.5,
        "c_t": "▁▅█",
        "condition": "honest",
        "a_final": None,
        "correct": True,
        "k": 3,
    }
    reduced = mean_keep_text()([Score(value=value)]).value
    assert reduced == {
        "tau_0.8": 0.5,
        "c_t": "▁▅█",
        "condition": "honest",
        "a_final": None,
        "correct": 1.0,
        "k": 3.0,
    }
    assert list(reduced) == list(value)  # key order kept (the score panel shows it)


def test_epochs_average_numbers_and_keep_agreeing_text():
    a = Score(value={"x": 0.25, "condition": "hinted", "a_final": "18", "correct": True})
    b = Score(value={"x": 0.75, "condition": "hinted", "a_final": "17", "correct": False})
    reduced = mean_keep_text()([a, b]).value
    assert reduced == {"x": 0.5, "condition": "hinted", "a_final": None, "correct": 0.5}


def test_scalar_scores_fall_back_to_mean():
    assert mean_keep_text()([Score(value=1.0), Score(value=0.0)]).value == 0.5


def selfcommit_viewer(primary: str, summaries: list[str]) -> ViewerConfig:
    return viewer_config(selfcommit_display.sample_table(primary, summaries))


def trace_viewer() -> ViewerConfig:
    return viewer_config(trace_display.sample_table())


def report_ll_viewer() -> ViewerConfig:
    return viewer_config(report_ll_display.sample_table())


def test_viewer_configs_name_score_columns_of_their_scorer():
    cfg = selfcommit_viewer("tau_0.8", ["range_c", "tau_0.8", "tau_1"])
    assert isinstance(cfg, ViewerConfig)
    view = cfg.task_samples_view
    ids = [c.id for c in view.columns]
    assert ids[:4] == [
        "sampleId",
        "score__selfcommit_scorer__pair",
        "score__selfcommit_scorer__condition",
        "score__selfcommit_scorer__tau_0.8",
    ]
    hidden = {c.id for c in view.columns if not c.visible}
    assert "score__selfcommit_scorer__range_c" in ids and hidden == {
        "input",
        "target",
        "answer",
        "tokens",
        "duration",
    }
    # sorted by sample id ("p0000-hinted" < "p0000-honest" < "p0001-hinted"): pair, then
    # condition, with no sort mark taking room in a score column's header
    assert [s.column for s in view.sort] == ["sampleId"]
    assert cfg.sample_score_view.sort is None  # natural order: the value's, primary first
    assert trace_viewer().task_samples_view.columns[3].id == (
        "score__trace_tutor_scorer__delta_context"
    )
    assert report_ll_viewer().task_samples_view.sort[0].column == "sampleId"


def _score_keys(cfg: ViewerConfig) -> list[str]:
    return [
        c.id.split("__", 2)[2] for c in cfg.task_samples_view.columns if c.id.startswith("score__")
    ]


@pytest.mark.parametrize(
    "cfg",
    [
        selfcommit_viewer(
            "tau_0.8",
            [
                "range_c",
                "uncommitted",
                "lowcommit",
                "rho_back",
                "tau_0.5",
                "tau_0.6",
                "tau_0.7",
                "tau_0.8",
                "tau_0.9",
                "tau_1",
            ],
        ),
        trace_viewer(),
        report_ll_viewer(),
        viewer_config(
            probe_display.sample_table(value_keys("selfcommit", DEFAULT_THETAS, replayed=True))
        ),
        viewer_config(probe_display.sample_table(value_keys("trace", (), replayed=True))),
    ],
    ids=["selfcommit", "trace_tutor", "report_ll", "probe_selfcommit", "probe_trace"],
)
def test_every_score_column_header_is_short(cfg):
    """The viewer sizes a column by its label (max(70, 6.2 px/char + 40 px), at most 120 px);
    a header of up to MAX_LABEL_CHARS characters fits it (the browser test measures them). A
    wide column's label ends in no-break spaces, which the header does not show."""
    labels = cfg.task_samples_view.score_labels or {}
    shown = {k: labels.get(k, k).rstrip("\xa0") for k in _score_keys(cfg)}
    assert all(len(v) <= MAX_LABEL_CHARS for v in shown.values()), shown


def test_trace_viewer_orders_every_key_of_the_scorer():
    # every key the trace scorer writes has a column in the config, so none is appended after
    # the built-in columns: 8 statistics x 2 curves, the primary, 6 viewer fields, correct,
    # length (the keys of scorers/trace_tutor.py)
    keys = _score_keys(trace_viewer())
    assert len(keys) == len(set(keys)) == 8 * 2 + 1 + 6 + 1 + 1
    assert {f"{s}_masked" for s in TRACE_STATS} <= set(keys)


def test_reducer_is_logged_as_avg_and_found_by_both_names():
    from inspect_ai.scorer._reducer import create_reducers, reducer_log_name

    # Inspect's terminal leaves out a lone reducer named "avg"; logs that record
    # "mean_keep_text" still re-create the same reducer by name (inspect score)
    assert reducer_log_name(mean_keep_text()) == EPOCH_REDUCER == "avg"
    value = {"x": 1, "condition": "honest"}
    for name in ("avg", "mean_keep_text"):
        [reducer] = create_reducers([name])
        assert reducer([Score(value=value)]).value == {"x": 1.0, "condition": "honest"}


def test_terminal_progress_line_leaves_the_reducer_name_out():
    # Inspect's own formatting of a metric in the progress line: a lone reducer named "avg"
    # is left out, any other name follows the metric (as mean_keep_text did)
    from inspect_ai._display.core.display import TaskDisplayMetric
    from inspect_ai._display.core.results import task_metric

    def line(reducer: str) -> str:
        return task_metric(
            [
                TaskDisplayMetric(
                    scorer="selfcommit_scorer", name="auroc/tau_0.8", value=0.5, reducer=reducer
                )
            ]
        )

    assert line(EPOCH_REDUCER) == "auroc/tau_0.8: 0.50"
    assert line("mean_keep_text") == "auroc/tau_0.8/mean_keep_text: 0.50"


def test_select_drops_nan_but_keeps_headline():
    table = {"a": 1.0, "b": math.nan, "c": 0.2, "h": math.nan}
    assert select(table, ["c", "b", "a", "h", "missing"], keep_nan=["h"]) == {
        "c": 0.2,
        "a": 1.0,
        "h": table["h"],
    }
    assert list(select(table, ["c", "a"], keep_nan=False)) == ["c", "a"]
    assert math.isnan(select({}, ["h"], keep_nan=["h"])["h"])
    # by default a fixed key set: every key, NaN where absent
    fixed = select(table, ["missing", "a", "b"])
    assert list(fixed) == ["missing", "a", "b"] and fixed["a"] == 1.0
    assert math.isnan(fixed["missing"]) and math.isnan(fixed["b"])


def test_selfcommit_compact_keys_by_hand():
    table = {
        "n_pairs": 3.0,
        "auroc/tau_0.8": 0.75,
        "wins/tau_0.8": 2.0,
        "ties/tau_0.8": 0.0,
        "auroc/range_c": 0.5,
        "median_honest/tau_0.8": 0.4,
        "n_no_answer/honest": 1.0,
    }
    both = {"both_correct/n_pairs": 0.0, "both_correct/auroc/tau_0.8": math.nan}
    assert list(selfcommit_headline(table, "tau_0.8")) == [
        "auroc/tau_0.8",
        "n_pairs",
        "wins/tau_0.8",
        "ties/tau_0.8",
    ]
    rest = selfcommit_compact(table, both, "tau_0.8")
    assert rest == {
        "median_honest/tau_0.8": 0.4,
        "auroc/range_c": 0.5,
        "n_no_answer/honest": 1.0,
        "both_correct/n_pairs": 0.0,
    }


def test_primary_summary():
    assert primary_summary((0.5, 0.8, 1.0)) == "tau_0.8"
    assert primary_summary((0.5, 0.9, 1.0)) == "tau_0.9"
    assert primary_summary(()) == "range_c"


def test_trace_compact_keeps_the_headline_even_when_nan():
    out = trace_compact(
        {
            "delta_context/mean": math.nan,
            "accuracy/wrong_key": math.nan,
            "accuracy/answer_key": 0.5,
        }
    )
    assert list(out) == [*trace_headline_keys(), "accuracy/answer_key"]
    assert all(math.isnan(out[k]) for k in trace_headline_keys())


def test_cluster_compact_keys():
    from cotaudit.cluster.f1 import metric_keys

    # the F1, its n beside it, then its interval
    assert cluster_compact_keys(metric_keys("cluster_visible")) == [
        "cluster_visible_f1",
        "cluster_visible_n_units",
        "cluster_visible_f1_ci_low",
        "cluster_visible_f1_ci_high",
    ]
    assert cluster_compact_keys(metric_keys()) == [
        "cluster_f1",
        "cluster_n_units",
        "cluster_f1_ci_low",
        "cluster_f1_ci_high",
    ]


def test_headline_keys_put_the_n_beside_the_statistic():
    assert selfcommit_headline_keys("tau_0.8") == [
        "auroc/tau_0.8",
        "n_pairs",
        "wins/tau_0.8",
        "ties/tau_0.8",
    ]
    # short enough for the viewer's title bar; the same values as the answer-key row of
    # visible_vs_masked (cotaudit.studies.trace_tutor.stats.delta_context_table)
    assert trace_headline_keys() == [
        "delta_context/mean",
        "delta_context/n",
        "delta_context/ci_low",
        "delta_context/ci_high",
    ]
    # the headline cell's plain/plain DiD (cotaudit.studies.report_ll.metrics.overall)
    assert report_ll_headline_keys() == [
        "plain_did/mean",
        "plain_did/n_units",
        "plain_did/ci_low",
        "plain_did/ci_high",
        "plain_did/p",
    ]


def test_metric_set_parameter():
    assert parse_metric_set(" ALL ") == "all"
    with pytest.raises(ValueError, match="-T metrics"):
        parse_metric_set("some")


def test_report_ll_compact_keys_by_hand():
    study = "cell.shell.outcome_clause"
    table = {
        "plain_did/mean": 0.5,
        "plain_did/ci_low": 0.1,
        "plain_did/ci_high": 0.9,
        "plain_did/p": 0.02,
        "plain_did/n_units": 4.0,
        f"{study}.plain/did/mean": 0.5,
        f"{study}.plain/did/ci_low": 0.1,
        f"{study}.plain/did/ci_high": 0.9,
        f"{study}.plain/did/p": 0.02,
        f"{study}.plain/did/n_units": 4.0,
        f"{study}.honest_dressed/did/mean": math.nan,
        f"{study}.pooled_registers/did/mean": 0.4,
        "cell.shell.bare.plain/did/mean": 0.7,
        "discrimination/able_to_answer": 1.0,
        "discrimination/band": 0.5,
        "scorings/n_invalid": 0.0,
        "control.ctl/inconclusive": 0.0,
        "control.ctl/d_h/mean": 0.3,
    }
    out = report_ll_compact(table)
    # the study's cell by default; NaN, the pooled figure and the other cells' keys left out;
    # the band is a setting (its -T value), so the terminal does not print it as a metric
    assert list(out) == [
        *report_ll_headline_keys(),
        "discrimination/able_to_answer",
        "scorings/n_invalid",
        "control.ctl/inconclusive",
    ]
    assert out["plain_did/mean"] == 0.5
    both = report_ll_compact(table, ["shell.outcome_clause", "shell.bare"])
    assert list(both)[5] == "cell.shell.bare.plain/did/mean"
    # the headline's keys are always there, NaN when the table lacks them
    other = report_ll_compact({}, ["driver.bare"])
    assert list(other) == report_ll_headline_keys() and math.isnan(other["plain_did/mean"])


def test_full_metrics_of_each_compact_metric():
    assert [n for n, _ in full_metrics_of("selfcommit_headline", {})] == [
        "honest_vs_hinted",
        "honest_vs_hinted_both_correct",
        "condition_x_correctness",
    ]
    trace = dict(full_metrics_of("trace_compact", {"n_boot": 200, "seed": 7}))
    assert trace["trace_table_iv"] == {"n_boot": 200, "seed": 7} and trace["trace_table_ii"] == {}
    assert len(trace) == 8
    rl = full_metrics_of(
        "report_ll_compact",
        {"band": 0.5, "controls": {"ctl": {"expected_sign": 1}}, "n_resamples": 100, "seed": 0},
    )
    names = [n for n, _ in rl]
    assert names[-2:] == ["report_ll_discrimination", "report_ll_controls"]
    assert dict(rl)["report_ll_overall"] == {"controls": ["ctl"], "n_resamples": 100, "seed": 0}
    assert dict(rl)["report_ll_discrimination"]["band"] == 0.5
    assert full_metrics_of("honest_vs_hinted", {}) == []


def test_cluster_metric_logs_only_the_chosen_keys():
    from cotaudit.scorers.cluster_f1 import contrastive_cluster_f1

    opts = one_feature_contrast("auc", "a", "b", prefix="cluster_visible")
    keys = ["cluster_visible_f1", "cluster_visible_f1_ci_low", "cluster_visible_f1_ci_high"]
    out = contrastive_cluster_f1(**opts, keys=keys)([])
    assert list(out) == keys and all(math.isnan(v) for v in out.values())
    assert len(contrastive_cluster_f1(**opts)([])) > len(keys)
    with pytest.raises(ValueError, match="not keys of prefix"):
        contrastive_cluster_f1(**opts, keys=["cluster_f1"])


def test_probe_labels_mark_the_replayed_context():
    assert probe_display.probe_label("first_pass_censored") == "1st cens."
    assert probe_display.probe_label("first_pass_censored_replay") == "↺1st cens."
    assert probe_display.probe_label("auc_replay") == "↺AUC"
    assert probe_display.probe_label("tau_0.8") == "tau_0.8"  # short enough as it is


def test_a_label_longer_than_a_column_is_refused():
    with pytest.raises(ValueError, match="longer than 10"):
        SampleTable("x", "x_scorer", ("a",), labels={"a": "eleven char"})
