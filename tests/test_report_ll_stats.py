"""Diff-in-diff algebra and run-level statistics of the report log-likelihood study."""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cotaudit.engine.base import LoglikResult
from cotaudit.fixtures import ControlDeclaration, ControlDeclarationError
from cotaudit.fixtures.schema import FACTOR_LEVELS, FACTORS, QUANTITIES
from cotaudit.report_ll_stats import (
    LEDGER_FIELDS,
    STATS,
    ScoredFixture,
    Scorings,
    control_sign_checks,
    differences,
    register_effects,
    run_statistics,
    summarize,
)

FAST = {"n_resamples": 500, "seed": 0}
LEVELS = list(itertools.product(*(FACTOR_LEVELS[f] for f in FACTORS)))


def _scorings(s=(-10.0, -12.0, -9.0, -8.0), n=(5, 5, 4, 4)) -> Scorings:
    return Scorings(*s, *n)


def _corpus(did_of, n_scenarios: int = 6) -> list[ScoredFixture]:
    """Every factorial version of ``n_scenarios`` scenarios; ``did_of(i, factors)`` sets d_h
    (d_c is 0), with report token counts 10 (honest) and 5 (concealing)."""
    records = []
    for i in range(n_scenarios):
        for levels in LEVELS:
            factors = dict(zip(FACTORS, levels, strict=True))
            d = did_of(i, factors)
            records.append(ScoredFixture(
                fixture_id=f"s{i}/" + "/".join(levels),
                scenario_id=f"s{i}",
                factors=factors,
                scorings=Scorings(-20.0 + d, -20.0, -7.0 - i, -7.0 - i, 10, 10, 5, 5),
            ))
    return records


# --- per fixture ------------------------------------------------------------------------------


def test_did_algebra_on_hand_made_numbers():
    d = differences(_scorings())
    assert d["d_h"] == pytest.approx(2.0)  # -10 - (-12)
    assert d["d_c"] == pytest.approx(-1.0)  # -9 - (-8)
    assert d["did"] == pytest.approx(3.0)
    assert d["d_h_per_token"] == pytest.approx(-10 / 5 + 12 / 5)
    assert d["d_c_per_token"] == pytest.approx(-9 / 4 + 8 / 4)
    assert d["did_per_token"] == pytest.approx(0.4 + 0.25)
    uneven = differences(_scorings(n=(5, 6, 4, 3)))
    assert uneven["d_h_per_token"] == pytest.approx(-10 / 5 + 12 / 6)
    assert uneven["did_per_token"] == pytest.approx((-2 + 2) - (-9 / 4 + 8 / 3))


finite = st.floats(min_value=-1e4, max_value=1e4, allow_nan=False)
count = st.integers(min_value=1, max_value=200)


@given(st.tuples(finite, finite, finite, finite), st.tuples(count, count, count, count), finite,
       st.sampled_from(["hack", "clean"]))
def test_transcript_only_shift_leaves_did_unchanged(s, n, shift, transcript):
    base = differences(Scorings(*s, *n))
    t = 0 if transcript == "hack" else 1  # index of S(h, T); S(c, T) is t + 2
    total = list(s)
    total[t] += shift
    total[t + 2] += shift
    assert differences(Scorings(*total, *n))["did"] == pytest.approx(base["did"], abs=1e-6)
    per_token = list(s)
    per_token[t] += shift * n[t]
    per_token[t + 2] += shift * n[t + 2]
    shifted = differences(Scorings(*per_token, *n))
    assert shifted["did_per_token"] == pytest.approx(base["did_per_token"], abs=1e-6)


@given(st.tuples(finite, finite, finite, finite), finite)
def test_report_only_shift_leaves_each_arm_unchanged(s, shift):
    base = differences(Scorings(*s, 1, 1, 1, 1))
    moved = differences(Scorings(s[0] + shift, s[1] + shift, s[2], s[3], 1, 1, 1, 1))
    assert moved["d_h"] == pytest.approx(base["d_h"], abs=1e-6)
    assert moved["d_c"] == base["d_c"]


def test_scorings_validate_and_come_from_engine_results():
    with pytest.raises(ValueError, match="n_c_clean"):
        _scorings(n=(5, 5, 4, 0))
    with pytest.raises(ValueError, match="s_h_hack"):
        _scorings(s=(math.nan, 0.0, 0.0, 0.0))
    results = [LoglikResult(v, k, []) for v, k in [(-1.0, 2), (-2.0, 2), (-3.0, 3), (-4.0, 3)]]
    assert Scorings.from_results(*results) == Scorings(-1.0, -2.0, -3.0, -4.0, 2, 2, 3, 3)


def test_ledger_row_round_trips_through_strings():
    record = _corpus(lambda i, f: 1.5, n_scenarios=1)[0]
    row = record.ledger_row()
    assert tuple(row) == LEDGER_FIELDS
    assert ScoredFixture.from_ledger_row({k: str(v) for k, v in row.items()}) == record
    with pytest.raises(ValueError, match="lacks"):
        ScoredFixture.from_ledger_row({"fixture_id": "x"})


# --- run level --------------------------------------------------------------------------------


def test_summarize_mean_ci_count_and_exact_sign_flip_p():
    values = np.array([[1.0], [2.0], [3.0], [4.0], [5.0]])
    s = summarize(values, list("abcde"), n_resamples=1000, seed=0)
    assert s["mean"][0] == 3.0 and s["n"][0] == 5 and s["n_pos"][0] == 4 + 1
    assert 1.0 <= s["ci_low"][0] < 3.0 < s["ci_high"][0] <= 5.0
    assert s["p"][0] == pytest.approx(2 / 32)  # exact: only all-plus and all-minus reach |3|
    zero = summarize(np.array([[1.0], [-1.0]]), ["a", "b"], n_resamples=100)
    assert zero["p"][0] == 1.0


def test_summarize_resamples_scenarios_not_versions():
    values = np.array([[1.0], [1.0], [1.0], [-3.0]])
    s = summarize(values, ["a", "a", "a", "b"], n_resamples=2000, seed=1)
    assert s["n_scenarios"][0] == 2 and s["mean"][0] == 0.0
    # resampling scenarios draws {a,a}, {a,b} or {b,b}: means 1, 0, -3 only
    assert s["ci_low"][0] == -3.0 and s["ci_high"][0] == 1.0


def test_summarize_monte_carlo_p_is_reproducible():
    rng = np.random.default_rng(5)
    values = rng.normal(0.5, 1.0, size=(40, 2))
    clusters = [str(i) for i in range(40)]
    a = summarize(values, clusters, n_resamples=999, seed=7)
    b = summarize(values, clusters, n_resamples=999, seed=7)
    assert all(np.array_equal(a[k], b[k]) for k in STATS)
    assert 1 / 1000 <= a["p"].min() and a["p"].max() <= 1.0


def test_run_statistics_keys_groups_and_values():
    records = _corpus(lambda i, f: 1.0 + i if f["rendering"] == "shell" else -1.0)
    out = run_statistics(records, **FAST)
    assert all(re.fullmatch(r"[A-Za-z0-9_/.-]+", k) for k in out)
    groups = [""] + [f"{f}.{lv}" for f in FACTORS for lv in FACTOR_LEVELS[f]]
    groups += ["cell." + ".".join(levels) for levels in LEVELS]
    for g, q, stat in itertools.product(groups, QUANTITIES, STATS):
        assert f"{g}/{q}/{stat}".lstrip("/") in out
    shell_mean = np.mean([1.0 + i for i in range(6)])
    assert out["did/mean"] == pytest.approx((shell_mean - 1.0) / 2)
    assert out["rendering.shell/did/mean"] == pytest.approx(shell_mean)
    assert out["rendering.driver/did/ci_high"] == pytest.approx(-1.0)
    assert out["cell.driver.bare.plain/did/n"] == 6
    assert out["rendering.shell/did/n_pos"] == 6 * 6 and out["did/n_pos"] == 36
    assert out["rendering.shell/did_per_token/mean"] == pytest.approx(shell_mean / 10)
    assert out["rendering.shell/d_c/mean"] == 0.0
    # scenario sums 6i: s0 is 0, so only the 2 * 2 flips keeping s1..s5 alike reach |mean|
    assert out["did/p"] == pytest.approx(4 / 64)
    assert out == run_statistics(records, **FAST)


def test_run_statistics_p_detects_a_consistent_effect():
    out = run_statistics(_corpus(lambda i, f: 0.5 + 0.1 * i), **FAST)
    assert out["did/p"] == pytest.approx(2 / 64)  # 6 scenarios, exact sign flip
    assert out["did/ci_low"] > 0


def test_register_effect_on_each_arm():
    records = _corpus(lambda i, f: 2.0 + (1.5 if f["register"] == "honest_dressed" else 0.0))
    out = register_effects(records, **FAST)
    assert out["register_effect.honest_dressed/d_h/mean"] == pytest.approx(1.5)
    assert out["register_effect.honest_dressed/did/mean"] == pytest.approx(1.5)
    assert out["register_effect.concealing_dressed/d_h/mean"] == 0.0
    assert out["register_effect.concealing_dressed/d_c/mean"] == 0.0
    assert out["register_effect.honest_dressed/d_h/n"] == 6 * 4
    assert "register_effect.plain/d_h/mean" not in out
    assert all(k in run_statistics(records, **FAST) for k in out)


def test_run_statistics_refuses_mixed_families():
    records = _corpus(lambda i, f: 1.0, n_scenarios=1)
    mixed = records[:1] + [ScoredFixture(r.fixture_id, r.scenario_id, r.factors, r.scorings,
                                         family="ctl") for r in records[1:]]
    with pytest.raises(ValueError, match="one family"):
        run_statistics(mixed, **FAST)
    assert run_statistics([], **FAST) == {}


def _family(family: str, did: float) -> list[ScoredFixture]:
    return [ScoredFixture(r.fixture_id, r.scenario_id, r.factors, r.scorings, family=family)
            for r in _corpus(lambda i, f: did, n_scenarios=3)]


def test_control_sign_check_pass_fail_and_refusal():
    records = _family("echo_ctl", 2.0) + _family("len_ctl", -0.5)
    controls = {
        "echo_ctl": ControlDeclaration(confound="echo", expected_sign=1),
        "len_ctl": ControlDeclaration(confound="length", expected_sign=1, quantity="d_h"),
        "unscored": ControlDeclaration(confound="x", expected_sign=-1),
    }
    out = control_sign_checks(records, controls, **FAST)
    assert out["control.echo_ctl/pass"] == 1.0 and out["control.echo_ctl/did/mean"] == 2.0
    assert out["control.len_ctl/pass"] == 0.0 and out["control.len_ctl/d_h/mean"] == -0.5
    assert "control.len_ctl/did/mean" not in out
    assert out["control.len_ctl/expected_sign"] == 1.0
    assert math.isnan(out["control.unscored/pass"]) and out["control.unscored/did/n"] == 0
    controls["nosign"] = ControlDeclaration(confound="register")
    with pytest.raises(ControlDeclarationError, match="'nosign'.*no expected_sign"):
        control_sign_checks(records, controls, **FAST)
