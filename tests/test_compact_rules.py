"""The compact metric set's rules (:mod:`cotaudit.studies.metrics`), checked on every study's
key lists and selections and on the generic probe's compact set of synthetic rows, no model: at
most ``COMPACT_MAX_KEYS`` keys per curve estimator a run reads (the cluster F1's included), no
key twice, the headline's keys first, and on a table where every value is NaN only the
headlines remain (no ``nan`` rows)."""

from __future__ import annotations

import math

import pytest

from cotaudit.cluster.f1 import metric_keys
from cotaudit.probing.exact import ESTIMATORS
from cotaudit.probing.summaries import (
    MAIN_KEYS,
    REPLAY_SUFFIX,
    Headline,
    compact_metrics,
    gap_keys,
    run_metrics,
)
from cotaudit.studies.metrics import COMPACT_MAX_KEYS, cluster_compact_keys
from cotaudit.studies.report_ll.metrics import (
    REPORT_LL_VERDICTS,
    report_ll_compact,
    report_ll_compact_keys,
    report_ll_headline_keys,
)
from cotaudit.studies.report_ll.scores import CLUSTER_PREFIX
from cotaudit.studies.report_ll.stats import CELL_ORDER
from cotaudit.studies.selfcommit.metrics import (
    headline_summaries,
    selfcommit_compact,
    selfcommit_compact_keys,
    selfcommit_headline,
    selfcommit_headline_keys,
)
from cotaudit.studies.trace_tutor.metrics import (
    curve_estimators,
    trace_compact,
    trace_compact_keys,
    trace_headline_keys,
)
from cotaudit.studies.trace_tutor.record import estimator_key

CLUSTER = cluster_compact_keys(metric_keys())


def _curves(estimator: str) -> int:
    return len(curve_estimators(estimator))


def _fits(keys: list[str], curves: int) -> None:
    assert len(keys) == len(set(keys)), [k for k in keys if keys.count(k) > 1]
    assert len(keys) <= COMPACT_MAX_KEYS * curves, len(keys)


@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize("primary", ["tau_0.8", "tau_0.9", "range_c"])
def test_selfcommit_compact_set(primary, estimator):
    headline = selfcommit_headline_keys(primary, estimator)
    rest = selfcommit_compact_keys(primary, estimator)
    _fits([*headline, *CLUSTER, *rest], _curves(estimator))
    nan = {k: math.nan for k in [*headline, *rest]}
    assert list(selfcommit_headline(nan, primary, estimator)) == headline  # always there
    assert selfcommit_compact(nan, nan, primary, estimator) == {}  # no nan rows
    assert len(headline_summaries(primary, estimator)) == _curves(estimator)


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_trace_tutor_compact_set(estimator):
    keys = trace_compact_keys(estimator)
    cluster = [  # the cluster F1 of each probe context, of each curve estimator read
        k
        for curves in curve_estimators(estimator)
        for probe in ("visible", "masked")
        for k in cluster_compact_keys(metric_keys(estimator_key(f"cluster_{probe}", curves)))
    ]
    _fits([*keys, *cluster], _curves(estimator))
    headlines = [k for c in curve_estimators(estimator) for k in trace_headline_keys(c)]
    assert keys[:4] == headlines[:4]
    out = trace_compact({k: math.nan for k in keys}, estimator)
    assert list(out) == headlines  # no nan rows but the headlines'


@pytest.mark.parametrize("n_cells", [1, 2, len(CELL_ORDER)])
def test_report_ll_compact_set(n_cells):
    cells = list(CELL_ORDER[:n_cells])
    control = [f"control.ctl/{v}" for v in REPORT_LL_VERDICTS]  # one control family
    keys = report_ll_compact_keys(control, cells)
    _fits([*keys, *cluster_compact_keys(metric_keys(CLUSTER_PREFIX))], 1)
    assert keys[:5] == report_ll_headline_keys()
    out = report_ll_compact({k: math.nan for k in keys}, cells)
    assert list(out) == report_ll_headline_keys()


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("probe", ["trace", "selfcommit"])
def test_probe_compact_set_of_two_conditions(probe, exact):
    """The generic probe's compact set depends on the task's conditions: on two (honest and
    hinted, replayed, as the README's self-commitment example runs) it fits the cap; a value
    that is NaN everywhere leaves no row."""
    summary = "auc" if probe == "trace" else "tau_0.8"
    reference = None if probe == "trace" else "honest"
    twins = [f"{k}_exact" for k in MAIN_KEYS[probe] if k not in ("task_score", "has_final")]
    keys = [*MAIN_KEYS[probe], *(twins if exact else [])]
    keys += [f"{k}{REPLAY_SUFFIX}" for k in gap_keys(probe)]
    rows = [
        (
            {k: (i + len(k)) % 5 / 4 for k in keys}
            | {k: math.nan for k in keys if k.startswith("p0")},
            {"condition": c, "pair_id": i},
        )
        for i in range(6)
        for c in ("honest", "hinted")
    ]
    headlines = [Headline(summary, reference), *([Headline(f"{summary}_exact", reference)] * exact)]
    full = run_metrics(rows, probe, "condition", *headlines)
    out = compact_metrics(full, probe, headlines)
    _fits(list(out), 2 if exact else 1)
    assert list(out)[: len(headlines[0].keys())] == headlines[0].keys()
    assert not any(k.startswith("p0") for k in out)  # NaN in every sample: no row
