"""Headline statistics in words (:mod:`cotaudit.display.headline`): each beside its n as an
integer, too small below 10 units or with an interval over the statistic's whole range, and why
one that cannot be computed is NaN. Expected lines are written out by hand from the rules."""

from __future__ import annotations

import math

import pytest
from helpers import run_eval_as_stored

from cotaudit.cluster.f1 import F1_TIE, why_f1_undefined
from cotaudit.display.headline import (
    MIN_INTERVAL_UNITS,
    MIN_UNITS,
    NOT_COMPUTED,
    OK,
    TOO_SMALL,
    HeadlineSpec,
    assess,
    at_bound,
    cut_text,
    ran_line,
    ran_record,
    spans_bounds,
    specs_of,
)
from cotaudit.studies.metrics import cluster_headline_spec
from cotaudit.studies.selfcommit.metrics import selfcommit_headline_spec
from cotaudit.studies.trace_tutor.metrics import trace_headline_spec

SELFCOMMIT = selfcommit_headline_spec("tau_0.8")
TRACE = trace_headline_spec()
CLUSTER = cluster_headline_spec("cluster", "problem", "problems")
nan = math.nan


def test_one_pair_is_too_few_and_its_count_reads_as_an_integer():
    # the first README run: AUROC 1.0 on one pair, the other dropped for a missing answer
    note = assess(
        SELFCOMMIT, {"auroc/tau_0.8": 1.0, "n_pairs": 1.0, "n_pairs_dropped_no_answer": 1.0}
    )
    assert note.verdict == TOO_SMALL and note.n == 1
    assert note.line == (
        "auroc/tau_0.8 = 1, n = 1 problem: too few to mean anything (fewer than 10 problems); "
        "1 problem left out for a response without a final answer"
    )


def test_ten_units_are_enough_nine_are_not():
    assert MIN_UNITS == 10
    g = "delta_context"
    ten = {
        f"{g}/mean": 0.1754385964,
        f"{g}/n": 10.0,
        f"{g}/ci_low": 0.05,
        f"{g}/ci_high": 0.3,
    }
    note = assess(TRACE, ten)
    # 0.1754385964 to 3 decimals: 0.175; the CI's trailing zeros dropped
    assert (note.verdict, note.line) == (
        OK,
        f"{g}/mean = 0.175 (95% CI 0.05 to 0.3), n = 10 problems",
    )
    assert assess(TRACE, {**ten, f"{g}/n": 9.0}).verdict == TOO_SMALL


def test_an_interval_over_the_whole_range_says_nothing():
    # 12 problems are enough, but an F1 interval of [0, 1] covers every F1 there is
    note = assess(
        CLUSTER,
        {
            "cluster_f1": 0.6666667,
            "cluster_n_units": 12.0,
            "cluster_f1_ci_low": 0.0,
            "cluster_f1_ci_high": 1.0,
        },
    )
    assert note.verdict == TOO_SMALL
    assert note.line == (
        "cluster_f1 = 0.667 (95% CI 0 to 1), n = 12 problems: its interval "
        "spans every value it can take ([0, 1]): it says nothing"
    )
    assert not spans_bounds(0.0, 0.999, (0.0, 1.0)) and spans_bounds(0.0, 1.0, (0.0, 1.0))
    assert not spans_bounds(-5.0, 5.0, None)  # an unbounded statistic (a DiD in nats)
    # Delta_context on fractions 0.1..1.0: an AUC is at most 0.9, so Delta lies in [-0.9, 0.9]
    g = "delta_context"
    wide = assess(
        trace_headline_spec(auc_max=0.9),
        {f"{g}/mean": 0.2, f"{g}/n": 30.0, f"{g}/ci_low": -0.9, f"{g}/ci_high": 0.9},
    )
    assert wide.verdict == TOO_SMALL and "([-0.9, 0.9]): it says nothing" in wide.line


def test_a_headline_that_cannot_be_computed_says_why():
    # two pairs, one dropped for a missing answer: one sample per class is left to cluster
    why = why_f1_undefined(nan, "need >= 2 samples per class, got 1 positive and 1 negative")
    note = assess(CLUSTER, {"cluster_f1": nan, "cluster_n_units": 1.0}, reason=why)
    assert note.verdict == NOT_COMPUTED
    assert note.line == (
        "cluster_f1 cannot be computed: need >= 2 samples per class, got 1 "
        "positive and 1 negative (n = 1 problem)"
    )
    # no reason known, no units: n = 0 and the units left out say it
    empty = assess(
        SELFCOMMIT, {"auroc/tau_0.8": nan, "n_pairs": 0.0, "n_pairs_dropped_no_answer": 2.0}
    )
    assert empty.line == (
        "auroc/tau_0.8 cannot be computed: no problems to compute it on "
        "(n = 0; 2 problems left out for a response without a final answer)"
    )
    assert "nan" not in empty.line.lower()
    # a clustering that is not degenerate is NaN only on the direction tie
    assert why_f1_undefined(nan, None) == F1_TIE and why_f1_undefined(0.5, None) is None


def test_an_interval_needs_two_units_and_a_flat_one_is_degenerate():
    # report comparisons and headlines over one unit: the bootstrap draws that unit every
    # time, so the logged bounds repeat the estimate; they are not printed
    one = assess(
        CLUSTER,
        {
            "cluster_f1": 1.0,
            "cluster_n_units": 1.0,
            "cluster_f1_ci_low": 1.0,
            "cluster_f1_ci_high": 1.0,
        },
    )
    assert MIN_INTERVAL_UNITS == 2 and one.verdict == TOO_SMALL
    assert one.line == (
        "cluster_f1 = 1, n = 1 problem: too few to mean anything (fewer than 10 problems); "
        "no interval (one needs at least 2 problems)"
    )
    # trace_tutor with 2 problems where no forced answer matched the gold answer: every AUC
    # is 0, so Delta_context is 0 on both problems and every resample gives 0
    g = "delta_context"
    flat = assess(
        trace_headline_spec(auc_max=0.9),
        {f"{g}/mean": 0.0, f"{g}/n": 2.0, f"{g}/ci_low": 0.0, f"{g}/ci_high": 0.0},
    )
    assert flat.verdict == TOO_SMALL
    assert flat.line == (
        f"{g}/mean = 0 (95% CI 0 to 0), n = 2 problems: too few to mean anything (fewer "
        "than 10 problems); degenerate: every resample of the problems gives 0 (every "
        "problem's Δcontext is the same, as when no forced answer matches the gold answer at "
        "any cut, key visible or masked)"
    )
    # a flat interval at a bound says which: 30 units, every AUROC resample 1
    spec = HeadlineSpec("auroc", "n", "problem", "problems", ("lo", "hi"), (0.0, 1.0))
    at_top = assess(spec, {"auroc": 1.0, "n": 30.0, "lo": 1.0, "hi": 1.0})
    assert at_top.verdict == TOO_SMALL
    assert at_top.line == (
        "auroc = 1 (95% CI 1 to 1), n = 30 problems: degenerate: every resample of the "
        "problems gives 1, the highest value it can take"
    )
    assert at_bound(0.0, (0.0, 1.0)) == "lowest" and at_bound(0.5, (0.0, 1.0)) is None


def test_the_n_sits_beside_each_headline():
    assert SELFCOMMIT.keys()[:2] == ["auroc/tau_0.8", "n_pairs"]
    assert CLUSTER.keys() == [
        "cluster_f1",
        "cluster_n_units",
        "cluster_f1_ci_low",
        "cluster_f1_ci_high",
    ]
    spec = HeadlineSpec("m", "n", "bug", "bugs", interval=("lo", "hi"), bounds=(0.0, 1.0))
    assert specs_of({"headlines": [spec.record()]}) == [spec]
    assert specs_of({}) == [] and specs_of(None) == []


def test_what_ran_when_inspect_cut_the_samples():
    assert cut_text(4, None) == "--limit 4"
    assert cut_text((2, 5), None) == "--limit 3-5"  # Inspect keeps 3-5 as the 0-based (2, 5)
    assert cut_text(None, ["p0000-honest", "p0001-honest"]) == (
        "--sample-id p0000-honest,p0001-honest"
    )
    assert cut_text(None, None) is None
    # README command 1: --limit 4 of the default 50 problems x 2 conditions: problems 0 and 1
    record = ran_record(4, 100, "--limit 4", 2, 50)
    assert record == {
        "samples": 4,
        "of_samples": 100,
        "cut": "--limit 4",
        "problems": 2,
        "of_problems": 50,
    }
    assert ran_line(record) == "ran 4 of the task's 100 samples (--limit 4): 2 of the 50 problems"
    assert ran_line(ran_record(4, 100, "--limit 4")) == (
        "ran 4 of the task's 100 samples (--limit 4)"
    )  # a task without -T problems
    assert ran_record(100, 100, "--limit 200") is None and ran_record(4, 4, None) is None


@pytest.mark.model
def test_a_tiny_run_prints_its_headlines_beside_inspects_summary(tmp_path, capsys):
    """A real selfcommit run on the tiny model, cut by --limit to one problem's two samples:
    the log lists each headline with its n right after it, and the end-of-run lines say
    what the metrics show, in words."""
    from tasks_loader import load_selfcommit

    task = load_selfcommit()(problems=2, max_cot_tokens=12, stride=6, k=1, temperature=0.0)
    log = run_eval_as_stored(task, "hf-probe/tiny", tmp_path, limit=2)
    [score] = log.results.scores
    keys = list(score.metrics)
    assert keys[:4] == ["auroc/tau_0.8", "n_pairs", "wins/tau_0.8", "ties/tau_0.8"]
    assert keys[4:8] == ["cluster_f1", "cluster_n_units", "cluster_f1_ci_low", "cluster_f1_ci_high"]
    assert [h["metric"] for h in log.eval.metadata["headlines"]] == ["auroc/tau_0.8", "cluster_f1"]
    # the tiny model states no final answer in 12 tokens: problem 0 is dropped whole, so the
    # AUROC has no pair and the clustering no sample of either class
    m = {k: v.value for k, v in score.metrics.items()}
    assert (m["n_no_answer/honest"], m["n_no_answer/hinted"]) == (1, 1)
    assert (m["n_pairs"], m["n_pairs_dropped_no_answer"], m["cluster_n_units"]) == (0, 1, 0)
    label = "selfcommit (hf-probe/tiny)"
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith(label)]
    assert lines == [
        f"{label}: auroc/tau_0.8 cannot be computed: no problems to compute it on (n = 0; "
        "1 problem left out for a response without a final answer)",
        f"{label}: cluster_f1 cannot be computed: need >= 2 samples per class, got 0 positive "
        "and 0 negative (n = 0 problems)",
        # 2 problems x 2 conditions; --limit 2 ran problem 0's two
        f"{label}: ran 2 of the task's 4 samples (--limit 2): 1 of the 2 problems",
    ]
    # the verdicts as the log's tags, which the viewer's title area shows beside the metrics
    assert log.tags == ["auroc/tau_0.8: not computed", "cluster_f1: not computed"]
    assert log.eval.task_args["problems"] == 2  # Inspect logs the argument as given
    assert log.metadata["ran"] == {
        "samples": 2,
        "of_samples": 4,
        "cut": "--limit 2",
        "problems": 1,
        "of_problems": 2,
    }
    # the report of that run: the same lines, what ran, and "no data" instead of empty tables
    # and figures (one problem of the two asked ran; neither response has a final answer)
    from cotaudit.report import build_report

    report = build_report([log.location], tmp_path / "report")
    [sec] = report.sections["selfcommit"]
    text = "\n".join(b for b in sec.blocks if isinstance(b, str))
    assert all(line.removeprefix(f"{label}: ") in text for line in lines[:2])
    assert "Settings: problems=1 (of 2 asked; --limit 2)," in text
    assert "**No data**: no problem has both conditions answered" in text
    assert list(sec.tables) == ["latency"] and not report.figures


def test_report_on_no_logs_says_no_data_and_writes_nothing(tmp_path, capsys):
    from cotaudit.cli import main as cli

    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli(["report", str(empty), "--out", str(tmp_path / "out")]) == 1
    assert f"no data: no Inspect logs under {empty}" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
