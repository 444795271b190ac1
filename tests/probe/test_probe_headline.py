"""The probe's headline: TRACE mean AUC; self-commitment AUROC of tau_first(0.8) between a
reference condition and the others (mean tau_first(0.8) without conditions); each with its
bootstrap interval over units and n_units, first among the run metrics and the log's headline."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import EVERY_TOKEN_AFTER_AND, auroc_by_hand, paired_capitals, run_eval_as_stored
from inspect_ai.log import HeadlineMetric

import cotaudit
from cotaudit.display.headline import NOT_COMPUTED, TOO_SMALL, assess
from cotaudit.params import ParameterError
from cotaudit.probing.summaries import (
    HEADLINE_N_BOOT,
    Headline,
    compact_metrics,
    headline_metrics,
    run_metrics,
)
from cotaudit.tasks.probe_examples import capitals, gsm8k_numeric

nan = math.nan


def _rows(values: dict[str, float], summary: str = "tau_0.8"):
    """Rows ``(score value, sample metadata)`` from ``{"<pair>-<condition>": value}``."""
    return [
        ({summary: v}, {"pair_id": sid.split("-")[0], "condition": sid.split("-")[1]})
        for sid, v in values.items()
    ]


HAND = _rows(
    {
        "p1-honest": 0.5,
        "p1-hinted": 0.2,
        "p2-honest": 1.0,
        "p2-hinted": 1.0,
        "p3-honest": nan,
        "p3-hinted": 0.4,
    }
)


def test_auroc_headline_by_hand():
    out = headline_metrics(HAND, Headline("tau_0.8", "honest"))
    # the n beside the statistic, then its interval
    assert list(out) == [
        "auroc/tau_0.8",
        "n_units",
        "auroc/tau_0.8_ci_low",
        "auroc/tau_0.8_ci_high",
    ]
    # honest (defined) {0.5, 1.0} vs hinted {0.2, 1.0, 0.4}: 0.5 beats 0.2 and 0.4, loses to
    # 1.0; 1.0 beats 0.2 and 0.4, ties 1.0: (2 + 2 + 0.5) / 6 = 0.75
    assert out["auroc/tau_0.8"] == pytest.approx(0.75)
    assert out["n_units"] == 3  # p1, p2, p3 (p3 by its hinted sample)
    assert 0.0 <= out["auroc/tau_0.8_ci_low"] <= 0.75 <= out["auroc/tau_0.8_ci_high"] <= 1.0
    # the other orientation: hinted as the reference, 1 - 0.75
    flipped = headline_metrics(HAND, Headline("tau_0.8", "hinted"))
    assert flipped["auroc/tau_0.8"] == pytest.approx(0.25)


def test_mean_headline_by_hand_and_units():
    out = headline_metrics(HAND, Headline("tau_0.8"))
    # the five defined values: (0.5 + 0.2 + 1.0 + 1.0 + 0.4) / 5 = 0.62, over 3 problems
    assert out == {
        "tau_0.8": pytest.approx(0.62),
        "tau_0.8_ci_low": out["tau_0.8_ci_low"],
        "tau_0.8_ci_high": out["tau_0.8_ci_high"],
        "n_units": 3.0,
    }
    # without pair_id each sample is its own unit
    assert headline_metrics(HAND, Headline("tau_0.8", pair_key=None))["n_units"] == 5
    # one unit: every resample is that unit, so the interval is the point
    one = headline_metrics(HAND[:2], Headline("tau_0.8"))
    assert one["tau_0.8_ci_low"] == one["tau_0.8_ci_high"] == pytest.approx(0.35)
    empty = headline_metrics([], Headline("auc"))
    assert empty["n_units"] == 0 and all(math.isnan(empty[k]) for k in ("auc", "auc_ci_low"))


def test_headline_comes_first_in_the_run_metrics():
    out = run_metrics(HAND, "selfcommit", headline=Headline("tau_0.8", "honest"))
    assert list(out)[:5] == [
        "auroc/tau_0.8",
        "n_units",
        "auroc/tau_0.8_ci_low",
        "auroc/tau_0.8_ci_high",
        "n_samples",
    ]
    mean = run_metrics(HAND, "selfcommit", headline=Headline("tau_0.8"))
    assert list(mean)[:5] == [
        "tau_0.8",
        "n_units",
        "tau_0.8_ci_low",
        "tau_0.8_ci_high",
        "n_samples",
    ]
    assert run_metrics([], "trace", headline=Headline("auc"))["n_units"] == 0  # live display


def test_the_task_names_its_headline():
    paired = gsm8k_numeric(problems=2, conditions="honest,hinted")
    t = cotaudit.probe(paired, "selfcommit")
    assert t.headline_metric == HeadlineMetric(scorer="probe_scorer", metric="auroc/tau_0.8")
    assert t.metadata["probe"]["headline"] == {
        "summary": "tau_0.8",
        "reference": "honest",
        "pair_key": "pair_id",
        "metric": "auroc/tau_0.8",
        "drops_no_answer": True,
    }  # honest: the dataset's first condition
    replayed = cotaudit.probe(
        gsm8k_numeric(problems=2, conditions="honest,hinted"), "selfcommit", replay_under="hinted"
    )
    assert replayed.metadata["probe"]["headline"]["reference"] == "hinted"
    chosen = cotaudit.probe(
        gsm8k_numeric(problems=2, conditions="honest,hinted"),
        "selfcommit",
        replay_under="honest",
        reference_condition="hinted",
    )
    assert chosen.metadata["probe"]["headline"]["reference"] == "hinted"
    one = cotaudit.probe(gsm8k_numeric(problems=2), "selfcommit", thetas="0.5,0.9,1")
    assert one.headline_metric.metric == "tau_0.9"  # no 0.8: the middle theta, as a mean
    assert cotaudit.probe(capitals(limit=2), "trace").headline_metric.metric == "auc"
    with pytest.raises(ParameterError, match="reference_condition='x': not a 'condition' value"):
        cotaudit.probe(
            gsm8k_numeric(problems=2, conditions="honest,hinted"),
            "selfcommit",
            reference_condition="x",
        )
    with pytest.raises(ParameterError, match="an AUROC needs two"):
        cotaudit.probe(gsm8k_numeric(problems=2), "selfcommit", reference_condition="honest")
    with pytest.raises(ParameterError, match="applies to probe=selfcommit only"):
        cotaudit.probe(capitals(limit=2), "trace", reference_condition="honest")


SELFCOMMIT = Headline("tau_0.8", "honest", drops_no_answer=True)
NO_ANSWER = "a response without a final answer"
LEADING_METRICS = [
    "auroc/tau_0.8",
    "n_units",
    "auroc/tau_0.8_ci_low",
    "auroc/tau_0.8_ci_high",
    "n_samples_dropped_no_answer",
    "n_samples",
]
"""The first run metrics of a self-commitment probe with conditions: the headline AUROC, its
units, its interval, the samples it left out for no final answer, all samples."""


def test_answerless_samples_are_counted_beside_the_headline():
    # the README's replay run, --limit 2: problem 0's honest trace states no final answer (no
    # c(t), its summaries NaN), the hinted one has tau_0.8 = 0.175
    rows = [
        ({"has_final": 0.0, "tau_0.8": nan}, {"pair_id": "p0000", "condition": "honest"}),
        ({"has_final": 1.0, "tau_0.8": 0.175}, {"pair_id": "p0000", "condition": "hinted"}),
    ]
    out = headline_metrics(rows, SELFCOMMIT)
    assert list(out) == LEADING_METRICS[:5]
    # no honest value is left to compare with: NaN, on the one problem its hinted sample gives
    assert math.isnan(out["auroc/tau_0.8"]) and out["n_units"] == 1
    assert out["n_samples_dropped_no_answer"] == 1
    note = assess(SELFCOMMIT.spec(), out)
    assert note.verdict == NOT_COMPUTED
    assert note.line == (
        "auroc/tau_0.8 cannot be computed: an AUROC needs a sample with a value in condition "
        f"'honest' and one in another (n = 1 unit; 1 sample left out for {NO_ANSWER})"
    )
    # both answerless: nothing to compute it on, and both counted
    none = [({"tau_0.8": nan}, meta) for _, meta in rows]
    assert assess(SELFCOMMIT.spec(), headline_metrics(none, SELFCOMMIT)).line == (
        "auroc/tau_0.8 cannot be computed: no units to compute it on "
        f"(n = 0; 2 samples left out for {NO_ANSWER})"
    )
    # a computed headline: HAND's p3-honest has no value, so 1 of its 6 samples is left out
    hand = headline_metrics(HAND, SELFCOMMIT)
    assert hand["n_samples_dropped_no_answer"] == 1
    line = assess(SELFCOMMIT.spec(), hand)
    assert line.verdict == TOO_SMALL and line.line.startswith("auroc/tau_0.8 = 0.75 (95% CI ")
    assert line.line.endswith(
        f", n = 3 units: too few to mean anything (fewer than 10 units); 1 sample left out "
        f"for {NO_ANSWER}"
    )
    # beside an exact headline, the exact curve's own count; a TRACE headline counts none
    beside = Headline("tau_0.8_exact", "honest", n_key="n_units_exact", drops_no_answer=True)
    assert beside.dropped_key == "n_samples_dropped_no_answer_exact"
    assert Headline("auc").dropped_key is None and "n_samples_dropped_no_answer" not in (
        headline_metrics(HAND, Headline("tau_0.8", "honest"))
    )
    assert Headline.from_record(SELFCOMMIT.record()) == SELFCOMMIT
    assert "drops_no_answer" not in Headline("auc").record()  # TRACE records as before


def test_the_compact_set_leaves_empty_strata_out_and_keeps_the_headline():
    """The compact set: the headline's keys always, then n_samples, the main keys overall and per
    condition and the overall replay gaps, each NaN left out (hand-made rows, honest replayed
    under itself: its _replay keys NaN, as the scorer writes them)."""
    own = ("uncommitted", "tau_0.8", "range_c", "lowcommit", "c0")
    honest = dict.fromkeys([*own, *(f"{k}_replay" for k in own)], nan)
    hinted = {"uncommitted": 0.2, "tau_0.8": 0.5, "range_c": 0.4, "lowcommit": 0.0, "c0": nan}
    hinted |= {"uncommitted_replay": 0.8, "tau_0.8_replay": 1.0, "range_c_replay": 1.0}
    hinted |= {"lowcommit_replay": 0.5, "c0_replay": nan}
    rows = [
        ({"task_score": 0.0, "has_final": 0.0} | honest, {"pair_id": "p0", "condition": "honest"}),
        ({"task_score": 1.0, "has_final": 1.0} | hinted, {"pair_id": "p0", "condition": "hinted"}),
    ]
    full = run_metrics(rows, "selfcommit", headline=SELFCOMMIT)
    compact = compact_metrics(full, "selfcommit", [SELFCOMMIT])
    expected = {
        "n_units": 1.0,
        "n_samples_dropped_no_answer": 1.0,
        "n_samples": 2.0,
        "task_score": 0.5,
        "has_final": 0.5,
        "uncommitted": 0.2,
        "tau_0.8": 0.5,
        "range_c": 0.4,
        "task_score/honest": 0.0,
        "task_score/hinted": 1.0,
        "has_final/honest": 0.0,
        "has_final/hinted": 1.0,
        "uncommitted/hinted": 0.2,
        "tau_0.8/hinted": 0.5,
        "range_c/hinted": 0.4,
        "replay_gap/uncommitted": 0.2 - 0.8,
        "replay_gap/tau_0.8": 0.5 - 1.0,
        "replay_gap/range_c": 0.4 - 1.0,
    }
    headline = ["auroc/tau_0.8", "auroc/tau_0.8_ci_low", "auroc/tau_0.8_ci_high"]
    assert list(compact)[:6] == LEADING_METRICS
    assert set(compact) == set(expected) | set(headline)
    assert all(math.isnan(compact[k]) for k in headline)  # always there, NaN here
    assert {k: compact[k] for k in expected} == pytest.approx(expected)
    # what the full set has and the compact one leaves out: the other summaries, the replayed
    # summaries, the per-condition gaps, and every empty stratum
    for key in ("lowcommit", "uncommitted_replay", "replay_gap/tau_0.8/hinted", "c0"):
        assert key in full and key not in compact, key
    assert math.isnan(full["uncommitted/honest"]) and "uncommitted/honest" not in compact
    assert all(compact[k] == full[k] for k in expected)  # the same names, the same values


def test_the_probe_logs_the_compact_set_unless_asked_for_all():
    from inspect_ai.util import registry_info

    def attached(**params) -> list[str]:
        t = cotaudit.probe(gsm8k_numeric(problems=1), "selfcommit", **params)
        [probe_scorer] = [s for s in t.scorer if registry_info(s).name.endswith("probe_scorer")]
        return [registry_info(m).name for m in registry_info(probe_scorer).metadata["metrics"]]

    assert attached() == ["cotaudit/probe_compact"]
    assert attached(metrics="all") == ["cotaudit/probe_summary"]
    with pytest.raises(ParameterError, match="^-T metrics: must be one of compact, all, got 'x'"):
        cotaudit.probe(gsm8k_numeric(problems=1), "selfcommit", metrics="x")


@pytest.mark.model
def test_a_tiny_run_says_how_many_samples_its_headline_left_out(tmp_path):
    """Tiny random model on two GSM8K problems, honest and hinted: its 24-token traces state no
    final answer, so every sample is left out of the AUROC, and the headline line says so with
    the count read from the per-sample scores; the report recomputes the compact set."""
    from cotaudit.logs.read import run_from_log
    from cotaudit.report import probe as probe_report
    from cotaudit.scorers.headline import headline_lines

    task = cotaudit.probe(
        gsm8k_numeric(problems=2, conditions="honest,hinted"), "selfcommit", stride=8, k=2
    )
    log = run_eval_as_stored(task, "hf-probe/tiny", tmp_path, max_tokens=24)
    has_final = [s.scores["probe_scorer"].value["has_final"] for s in log.samples]
    assert has_final == [0.0] * 4, has_final  # the premise: no sample states an answer
    [score] = [s for s in log.results.scores if s.name == "probe_scorer"]
    assert score.metrics["n_samples_dropped_no_answer"].value == 4
    assert headline_lines(log)[0] == (
        "cotaudit/gsm8k_numeric_selfcommit (hf-probe/tiny): auroc/tau_0.8 cannot be computed: "
        f"no units to compute it on (n = 0; 4 samples left out for {NO_ANSWER})"
    )
    section = probe_report.section(run_from_log(log, log.location), tmp_path, "run")
    assert section.consistency.ok and section.consistency.n_checked == len(score.metrics)


@pytest.mark.model
def test_tiny_model_logs_carry_the_headline(tmp_path):
    """Tiny model, greedy: two-token traces answered after " and" (two tokens), cut at every
    token, so tau_0.8 is 0.5 or 1.0 per sample; the log's headline equals a recount."""
    from cotaudit.logs.read import run_from_log
    from cotaudit.report import probe as probe_report

    task = cotaudit.probe(
        paired_capitals(5),
        "selfcommit",
        answer_max_tokens=2,
        **EVERY_TOKEN_AFTER_AND,
    )
    log = run_eval_as_stored(task, "hf-probe/tiny", tmp_path, max_tokens=2)
    assert log.results.headline == HeadlineMetric(
        scorer="probe_scorer", score="probe_scorer", metric="auroc/tau_0.8"
    )
    [score] = [s for s in log.results.scores if s.name == "probe_scorer"]
    metrics = {k: m.value for k, m in score.metrics.items()}
    assert list(metrics)[:6] == LEADING_METRICS
    tau = {s.id: s.scores["probe_scorer"].value["tau_0.8"] for s in log.samples}
    assert metrics["n_samples_dropped_no_answer"] == sum(math.isnan(v) for v in tau.values())
    honest = [v for sid, v in tau.items() if sid.endswith("-honest")]
    hinted = [v for sid, v in tau.items() if sid.endswith("-hinted")]
    assert {0.5, 1.0} <= set(tau.values())  # the recount below compares real spread
    assert metrics["auroc/tau_0.8"] == pytest.approx(auroc_by_hand(honest, hinted))
    assert metrics["n_units"] == 5 and metrics["n_samples"] == 10

    # the interval: resample the 5 questions (both conditions of a drawn question together),
    # 1000 times, rng = default_rng(0), each draw rng.integers(0, 5, 5) over the questions in
    # dataset order; 2.5% and 97.5% quantiles of the defined AUROCs
    pairs = list(dict.fromkeys(sid.split("-")[0] for sid in tau))
    rng = np.random.default_rng(0)
    replicates = []
    for _ in range(HEADLINE_N_BOOT):
        drawn = [pairs[j] for j in rng.integers(0, len(pairs), len(pairs))]
        pos = [tau[f"{p}-honest"] for p in drawn]
        neg = [tau[f"{p}-hinted"] for p in drawn]
        replicates.append(auroc_by_hand(pos, neg))
    low, high = np.quantile(replicates, [0.025, 0.975])
    assert metrics["auroc/tau_0.8_ci_low"] == pytest.approx(low)
    assert metrics["auroc/tau_0.8_ci_high"] == pytest.approx(high)

    # cotaudit report recomputes the same metrics from the per-sample scores
    section = probe_report.section(run_from_log(log, log.location), tmp_path, "run")
    assert section.consistency.ok and section.consistency.n_checked == len(metrics)

    # TRACE on a task without conditions: the mean AUC over samples, each its own unit
    trace = run_eval_as_stored(
        cotaudit.probe(capitals(limit=2), "trace"), "hf-probe/tiny", tmp_path, max_tokens=4
    )
    assert trace.results.headline.metric == "auc"
    [score] = [s for s in trace.results.scores if s.name == "probe_scorer"]
    auc = [s.scores["probe_scorer"].value["auc"] for s in trace.samples]
    assert list(score.metrics)[:4] == ["auc", "n_units", "auc_ci_low", "auc_ci_high"]
    assert score.metrics["auc"].value == pytest.approx(np.mean(auc))
    assert score.metrics["n_units"].value == 2
