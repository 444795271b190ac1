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
from cotaudit.studies.report_ll.fixtures import ControlDeclaration, ControlDeclarationError
from cotaudit.studies.report_ll.fixtures.schema import FACTOR_LEVELS, FACTORS, QUANTITIES
from cotaudit.studies.report_ll.stats import (
    LEDGER_FIELDS,
    STATS,
    VERDICTS,
    ScoredFixture,
    Scorings,
    control_verdicts,
    difference_of_means,
    differences,
    discrimination_check,
    legacy_keys,
    pooled_registers,
    register_effects,
    run_statistics,
    side,
    summarize,
    verdict,
    verdict_of,
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
    groups = ["all_versions", "pooled_registers"]
    groups += [f"{f}.{lv}" for f in FACTORS for lv in FACTOR_LEVELS[f]]
    groups += ["cell." + ".".join(levels) for levels in LEVELS]
    for g, q, stat in itertools.product(groups, QUANTITIES, STATS):
        assert f"{g}/{q}/{stat}" in out
    assert "did/mean" not in out  # the misleading pooled name is gone
    shell_mean = np.mean([1.0 + i for i in range(6)])
    assert out["all_versions/did/mean"] == pytest.approx((shell_mean - 1.0) / 2)
    assert legacy_keys(out)["did/mean"] == out["all_versions/did/mean"]
    assert out["rendering.shell/did/mean"] == pytest.approx(shell_mean)
    assert out["rendering.driver/did/ci_high"] == pytest.approx(-1.0)
    assert out["cell.driver.bare.plain/did/n"] == 6
    assert out["rendering.shell/did/n_pos"] == 6 * 6 and out["all_versions/did/n_pos"] == 36
    assert out["rendering.shell/did_per_token/mean"] == pytest.approx(shell_mean / 10)
    assert out["rendering.shell/d_c/mean"] == 0.0
    # scenario sums 6i: s0 is 0, so only the 2 * 2 flips keeping s1..s5 alike reach |mean|
    assert out["all_versions/did/p"] == pytest.approx(4 / 64)
    # pooled: 6 scenarios x 2 renderings x 2 richness units
    assert out["pooled_registers/did/n"] == 24
    assert out["pooled_registers/did/mean"] == pytest.approx((shell_mean - 1.0) / 2)
    assert out == run_statistics(records, **FAST)


def _version(sid, rendering, richness, register, d_h, d_c, n_h=10, n_c=5) -> ScoredFixture:
    factors = {"rendering": rendering, "richness": richness, "register": register}
    return ScoredFixture(
        fixture_id=f"{sid}/{rendering}/{richness}/{register}",
        scenario_id=sid,
        factors=factors,
        scorings=Scorings(-20.0 + d_h, -20.0, -7.0 + d_c, -7.0, n_h, n_h, n_c, n_c),
    )


def test_pooled_registers_counts_each_report_once():
    # one unit; reports: plain honest d_h 1, dressed honest d_h 4, plain concealing d_c 0.5,
    # dressed concealing d_c -1.5. Each version carries the d of the reports it holds.
    unit = [
        _version("s", "shell", "bare", "plain", d_h=1.0, d_c=0.5),
        _version("s", "shell", "bare", "concealing_dressed", d_h=1.0, d_c=-1.5),
        _version("s", "shell", "bare", "honest_dressed", d_h=4.0, d_c=0.5),
    ]
    clusters, values = pooled_registers(unit)
    q = dict(zip(QUANTITIES, values[0], strict=True))
    assert clusters == ["s"]
    assert q["d_h"] == pytest.approx((1.0 + 4.0) / 2)
    assert q["d_c"] == pytest.approx((0.5 - 1.5) / 2)
    assert q["did"] == pytest.approx(2.5 - (-0.5))
    assert q["d_h_per_token"] == pytest.approx(2.5 / 10)
    assert q["did_per_token"] == pytest.approx(2.5 / 10 + 0.5 / 5)
    # pooling all versions instead counts the plain reports twice: (1+1+4)/3 - (0.5-1.5+0.5)/3
    assert differences(unit[0].scorings)["did"] == 0.5
    all_versions = np.mean([differences(r.scorings)["did"] for r in unit])
    assert all_versions == pytest.approx(2.0 - (-0.5 / 3))
    # plain only: the pooled figure is the plain one
    _, plain = pooled_registers(unit[:1])
    assert dict(zip(QUANTITIES, plain[0], strict=True))["did"] == pytest.approx(0.5)


def test_headline_per_register_level_is_each_levels_own_mean():
    unit = [
        _version(f"s{i}", "shell", "bare", reg, d_h=dh + i, d_c=dc)
        for i in range(3)
        for reg, dh, dc in (("plain", 1.0, 0.5), ("concealing_dressed", 1.0, -1.5),
                            ("honest_dressed", 4.0, 0.5))
    ]
    out = run_statistics(unit, **FAST)
    assert out["register.plain/did/mean"] == pytest.approx(0.5 + 1.0)  # mean of 0.5, 1.5, 2.5
    assert out["register.concealing_dressed/did/mean"] == pytest.approx(2.5 + 1.0)
    assert out["register.honest_dressed/did/mean"] == pytest.approx(3.5 + 1.0)
    assert out["pooled_registers/did/mean"] == pytest.approx(3.0 + 1.0)
    assert out["pooled_registers/did/n"] == 3 and out["register.plain/did/n"] == 3


def test_discrimination_check_uses_the_plain_concealing_report_and_the_band():
    records = [
        _version("a", "shell", "bare", "plain", d_h=1.0, d_c=-0.3),
        _version("a", "shell", "bare", "concealing_dressed", d_h=1.0, d_c=-5.0),  # not plain
        _version("a", "shell", "bare", "honest_dressed", d_h=2.0, d_c=-0.3),  # same report
        _version("b", "shell", "bare", "honest_dressed", d_h=2.0, d_c=-0.1),  # no plain version
    ]
    out = discrimination_check(records, band=0.25, **FAST)
    assert out["discrimination/d_c/n"] == 2  # units a and b, each once
    assert out["discrimination/d_c/mean"] == pytest.approx((-0.3 - 0.1) / 2)
    assert out["discrimination/abs_d_c"] == pytest.approx(0.2)
    assert out["discrimination/band"] == 0.25
    assert out["discrimination/able_to_answer"] == 0.0  # 0.2 inside +-0.25: cannot answer
    assert discrimination_check(records, band=0.15, **FAST)["discrimination/able_to_answer"] == 1
    empty = discrimination_check(records[1:2], band=0.25, **FAST)
    assert empty["discrimination/d_c/n"] == 0 and math.isnan(empty["discrimination/able_to_answer"])
    with pytest.raises(ValueError, match="band"):
        discrimination_check(records, band=-1.0)


def test_difference_of_means_resamples_each_family_by_scenario():
    # family a: scenarios at 1 and 3 (means over draws: 1, 2, 3); family b: constant 0.5
    out = difference_of_means(
        np.array([1.0, 1.0, 3.0]), ["x", "x", "y"], np.array([0.5, 0.5]), ["u", "v"],
        n_resamples=4000, seed=0,
    )
    assert out["mean"] == pytest.approx((1 + 1 + 3) / 3 - 0.5)
    # draws of a: {x,x} -> 1, {x,y} -> 5/3, {y,y} -> 3 (versions weighted); minus 0.5
    assert out["ci_low"] == pytest.approx(0.5) and out["ci_high"] == pytest.approx(2.5)


def test_side_and_verdict_by_hand():
    assert side(0.1, 2.0, 1) == 1 and side(0.1, 2.0, -1) == -1
    assert side(-2.0, -0.1, -1) == 1 and side(-2.0, -0.1, 1) == -1
    assert side(-0.1, 2.0, 1) == 0 and side(0.0, 2.0, 1) == 0  # touching 0 spans it
    assert math.isnan(side(math.nan, 1.0, 1))
    assert verdict([1]) == 1 and verdict([-1]) == -1 and verdict([0]) == 0
    assert verdict([1, 0]) == 0 and verdict([1, -1]) == -1 and verdict([0, -1]) == -1
    assert verdict([1, 1]) == 1 and math.isnan(verdict([1, math.nan]))
    assert verdict([math.nan, -1]) == -1
    assert VERDICTS == {-1: "confound excluded", 1: "consistent with the confound",
                        0: "inconclusive (CI spans zero)"}
def test_run_statistics_p_detects_a_consistent_effect():
    out = run_statistics(_corpus(lambda i, f: 0.5 + 0.1 * i), **FAST)
    assert out["register.plain/did/p"] == pytest.approx(2 / 64)  # 6 scenarios, exact sign flip
    assert out["register.plain/did/ci_low"] > 0


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


def test_control_verdicts_sign_relative_and_refusal():
    records = (
        _family("echo_ctl", 2.0) + _family("len_ctl", -0.5) + _family("main", 1.0)
        + _family("above_ctl", 1.5)
    )
    # mixed_ctl: did = +1 in scenario s0 and -1 in s1, s2, so its CI spans zero
    records += [ScoredFixture(r.fixture_id, r.scenario_id, r.factors, r.scorings,
                              family="mixed_ctl")
                for r in _corpus(lambda i, f: 1.0 if i == 0 else -1.0, n_scenarios=3)]
    controls = {
        "echo_ctl": ControlDeclaration(confound="echo", expected_sign=1),
        "len_ctl": ControlDeclaration(confound="length", expected_sign=1, quantity="d_h"),
        "mixed_ctl": ControlDeclaration(confound="mixed", expected_sign=1),
        "above_ctl": ControlDeclaration(confound="echo", expected_sign=1, relative_to="main"),
        "below_ctl": ControlDeclaration(confound="x", expected_sign=-1, relative_to="main"),
        "unscored": ControlDeclaration(confound="x", expected_sign=-1),
    }
    records += [ScoredFixture(r.fixture_id, r.scenario_id, r.factors, r.scorings,
                              family="below_ctl") for r in _family("x", 2.5)]
    out = control_verdicts(records, controls, **FAST)

    def indicators(family):
        return [out[f"control.{family}/{k}"] for k in
                ("confound_excluded", "consistent_with_confound", "inconclusive")]

    # did = 2 everywhere, CI [2, 2]: on the predicted (+) side
    assert out["control.echo_ctl/did/mean"] == 2.0 and indicators("echo_ctl") == [0, 1, 0]
    assert verdict_of(out, "echo_ctl") == "consistent with the confound"
    # d_h = -0.5 everywhere, CI [-0.5, -0.5]: the other side, the confound is excluded
    assert out["control.len_ctl/d_h/mean"] == -0.5 and indicators("len_ctl") == [1, 0, 0]
    assert verdict_of(out, "len_ctl") == "confound excluded"
    assert "control.len_ctl/did/mean" not in out and "control.len_ctl/pass" not in out
    assert out["control.len_ctl/expected_sign"] == 1.0
    # scenario means +1, -1, -1: bootstrap draws reach both signs, CI spans zero
    assert out["control.mixed_ctl/did/ci_low"] < 0 < out["control.mixed_ctl/did/ci_high"]
    assert indicators("mixed_ctl") == [0, 0, 1]
    assert verdict_of(out, "mixed_ctl") == "inconclusive (CI spans zero)"
    # positive (1.5) and above main (1.0): difference 0.5 with CI [0.5, 0.5]
    assert out["control.above_ctl/did_minus_main/mean"] == pytest.approx(0.5)
    assert out["control.above_ctl/did_minus_main/ci_low"] == pytest.approx(0.5)
    assert indicators("above_ctl") == [0, 1, 0]
    # predicted negative and below main; observed +2.5, above main by 1.5: excluded
    assert out["control.below_ctl/did_minus_main/mean"] == pytest.approx(1.5)
    assert indicators("below_ctl") == [1, 0, 0]
    assert all(math.isnan(v) for v in indicators("unscored"))
    assert out["control.unscored/did/n"] == 0 and verdict_of(out, "unscored") == "—"
    controls["nosign"] = ControlDeclaration(confound="register")
    with pytest.raises(ControlDeclarationError, match="'nosign'.*no expected_sign"):
        control_verdicts(records, controls, **FAST)


def test_relative_control_that_is_positive_but_not_above_the_reference():
    records = _family("main", 2.0) + _family("above_ctl", 1.0)
    controls = {"above_ctl": ControlDeclaration(confound="echo", expected_sign=1,
                                                relative_to="main")}
    out = control_verdicts(records, controls, **FAST)
    # the sign part holds (CI [1, 1]) but the relative part is contradicted (1 - 2 = -1)
    assert out["control.above_ctl/did/ci_low"] == 1.0
    assert out["control.above_ctl/did_minus_main/ci_high"] == pytest.approx(-1.0)
    assert verdict_of(out, "above_ctl") == "confound excluded"
    # the reference family absent from the records: undetermined, not a verdict
    alone = control_verdicts(_family("above_ctl", 1.0), controls, **FAST)
    assert math.isnan(alone["control.above_ctl/did_minus_main/mean"])
    assert math.isnan(alone["control.above_ctl/consistent_with_confound"])
