"""Compact and full metric sets on real runs: the compact set is the full tables' values under
the same names (NaN strata left out), the headline is declared and leads the results, sample
values carry the viewer's fields, and ``cotaudit report`` recomputes every table from a compact
log, reading the scores through Inspect's data frames as the whole-log walk reads them."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from helpers import TRACE_TUTOR_TINY, run_eval
from inspect_ai.log import read_eval_log

from cotaudit.logs.files import run_from_frames
from cotaudit.logs.read import run_from_log
from cotaudit.report import build_report
from cotaudit.studies.report_ll.metrics import report_ll_headline_keys
from cotaudit.studies.selfcommit.metrics import selfcommit_headline_keys
from cotaudit.studies.trace_tutor.metrics import trace_headline_keys

pytestmark = pytest.mark.model

TINY_RUNS = {
    "trace_tutor": ("tasks/trace_tutor.py", "hf-probe/tiny", TRACE_TUTOR_TINY),
    "report_ll": (
        "tasks/report_ll.py",
        "hf-probe/tiny",
        dict(scenarios=1, n_resamples=200, cluster_boot=20),
    ),
}
STUDIES = ["selfcommit", *TINY_RUNS]
"""The tiny model gives selfcommit no final answer (no curve): the default model does, read as
its last number (its 60-token CoTs are cut before they state one); its two runs are the shared
ones of tests/conftest.py (``selfcommit_default_small``)."""
SCORERS = {
    "selfcommit": "selfcommit_scorer",
    "trace_tutor": "trace_tutor_scorer",
    "report_ll": "report_ll_scorer",
}
HEADLINES = {
    "selfcommit": selfcommit_headline_keys("tau_0.8"),
    "trace_tutor": trace_headline_keys(),
    "report_ll": report_ll_headline_keys(),
}


@pytest.fixture(scope="module")
def logs(selfcommit_default_small, trace_tutor_tiny_all, tmp_path_factory):
    """Each study once with the compact set (default) and once with ``-T metrics=all`` (the
    default model's selfcommit runs and the tiny trace_tutor's full tables: the shared ones of
    tests/conftest.py and tests/report/conftest.py)."""
    out: dict[tuple[str, str], object] = {
        ("selfcommit", metric_set): log for metric_set, log in selfcommit_default_small.items()
    }
    out[("trace_tutor", "all")] = trace_tutor_tiny_all
    for study, (task, model, args) in TINY_RUNS.items():
        for metric_set in ("compact", "all"):
            if (study, metric_set) in out:
                continue
            log_dir = tmp_path_factory.mktemp(f"{study}_{metric_set}")
            extra = {} if metric_set == "compact" else {"metrics": "all"}
            out[(study, metric_set)] = run_eval(task, model, log_dir, task_args={**args, **extra})
    return out


def _metrics(log) -> dict[str, float]:
    [score] = log.results.scores
    return {k: m.value for k, m in score.metrics.items()}


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-12)


@pytest.mark.parametrize("study", STUDIES)
def test_compact_values_are_the_full_tables_values(logs, study) -> None:
    small, full = _metrics(logs[(study, "compact")]), _metrics(logs[(study, "all")])
    headline = HEADLINES[study]
    assert list(small)[: len(headline)] == headline
    assert len(small) <= 30 < len(full)  # a screenful, against the full tables
    for key, value in small.items():
        assert key in full, key
        assert _same(value, full[key]), (key, value, full[key])
        if key not in headline and "cluster_" not in key:  # cluster F1: NaN when degenerate
            assert not math.isnan(value), key  # no NaN rows for empty strata
    ref = logs[(study, "compact")].results.headline
    assert (ref.scorer, ref.metric) == (SCORERS[study], headline[0])
    assert logs[(study, "all")].results.headline.metric == headline[0]


@pytest.mark.parametrize("study", STUDIES)
def test_sample_values_lead_with_the_primary_score_and_carry_the_viewer_fields(logs, study):
    from cotaudit.studies.report_ll.display import REPORT_LL_PRIMARY, REPORT_LL_VIEWER_FIELDS
    from cotaudit.studies.selfcommit.display import SELFCOMMIT_VIEWER_FIELDS
    from cotaudit.studies.trace_tutor.display import TRACE_PRIMARY, TRACE_VIEWER_FIELDS

    log = logs[(study, "compact")]
    fields, first = {
        "selfcommit": (SELFCOMMIT_VIEWER_FIELDS, "tau_0.8"),
        "trace_tutor": (TRACE_VIEWER_FIELDS, TRACE_PRIMARY),
        "report_ll": (REPORT_LL_VIEWER_FIELDS, REPORT_LL_PRIMARY),
    }[study]
    for sample in log.samples:
        value = sample.scores[SCORERS[study]].value
        assert next(iter(value)) == first
        assert set(fields) <= set(value)
    # the epoch reduction the metrics saw keeps the text fields (Inspect's mean would make 0.0)
    reduced = log.reductions[0].samples[0].value
    text = [f for f in fields if f not in ("correct",)]
    assert all(isinstance(reduced[f], str) for f in text), reduced
    assert log.eval.viewer.task_samples_view.columns[1].id.startswith(f"score__{SCORERS[study]}")


def test_selfcommit_sparkline_and_exact_fractions(logs) -> None:
    log = logs[("selfcommit", "compact")]
    curved = [s for s in log.samples if s.scores["selfcommit_scorer"].metadata.get("c")]
    assert curved, "the default model answered no problem"
    for s in curved:
        score = s.scores["selfcommit_scorer"]
        m, k = score.metadata["matches"], score.metadata["k"]
        assert len(score.value["c_t"]) == len(m)
        assert score.value["range_c"] == (max(m) - min(m)) / k  # one division: exact
        assert repr(score.value["uncommitted"]) == repr(sum(k - x for x in m) / (len(m) * k))
        assert "```text" in score.explanation and score.value["c_t"] in score.explanation


def _norm(x) -> str:
    return json.dumps(x, sort_keys=True, default=str)


@pytest.mark.parametrize("study", STUDIES)
def test_frames_read_what_the_log_walk_reads(logs, study) -> None:
    log = logs[(study, "compact")]
    walked = run_from_log(read_eval_log(log.location), log.location)
    framed = run_from_frames(log.location)
    for field in (
        "task",
        "study",
        "model",
        "status",
        "task_args",
        "task_metadata",
        "epochs",
        "n_samples",
    ):
        assert getattr(framed, field) == getattr(walked, field), field
    for name, a in walked.scorers.items():
        b = framed.scorers[name]
        assert [d.name for d in a.metric_defs] == [d.name for d in b.metric_defs]
        assert a.metrics.keys() == b.metrics.keys()
        assert [str(s.sample_id) for s in a.samples] == [str(s.sample_id) for s in b.samples]
        for x, y in zip(a.samples, b.samples, strict=True):
            # the reduction stores numbers as floats (True as 1.0); the frame the sample's own
            assert x.score.value.keys() == y.score.value.keys()
            for k, v in x.score.value.items():
                w = y.score.value[k]
                assert (
                    (v is None and w is None)
                    or (isinstance(v, str) and v == w)
                    or (_same(float(v), float(w)))
                ), (k, v, w)
            # the sample's own score carries later edits (cluster contrast notes) too
            assert y.score.explanation.startswith(x.score.explanation)
            assert _norm(x.score.metadata) == _norm(
                {k: v for k, v in y.score.metadata.items() if k in x.score.metadata}
            )
            kept = {k: v for k, v in (x.sample_metadata or {}).items() if v is not None}
            assert _norm(kept) == _norm(y.sample_metadata)


def test_report_recomputes_every_table_from_compact_logs(logs, tmp_path) -> None:
    compact_logs = [Path(logs[(s, "compact")].location) for s in STUDIES]
    full_logs = [Path(logs[(s, "all")].location) for s in STUDIES]
    small = build_report(compact_logs, tmp_path / "compact", strict=True)
    full = build_report(full_logs, tmp_path / "all", strict=True)
    for study in STUDIES:
        [a], [b] = small.sections[study], full.sections[study]
        assert a.consistency.ok and b.consistency.ok
        assert a.consistency.n_checked == len(_metrics(logs[(study, "compact")]))
        assert a.tables.keys() == b.tables.keys()
        for name, table in a.tables.items():
            other = b.tables[name]
            assert [[c.text for c in r] for r in table.rows] == [
                [c.text for c in r] for r in other.rows
            ], (study, name)
