"""Diff-in-diff algebra and run-level statistics of the report log-likelihood study."""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cotaudit.engine.base import LoglikResult
from cotaudit.studies.report_ll.fixtures import ControlDeclaration, ControlDeclarationError
from cotaudit.studies.report_ll.fixtures.schema import FACTOR_LEVELS, FACTORS, QUANTITIES
from cotaudit.studies.report_ll.stats import (
    CELL_ORDER,
    FACTORIAL_REGISTERS,
    ID_FIELDS,
    LEDGER_FIELDS,
    NON_DIAGNOSTIC,
    POOLED_CELLS,
    STATS,
    STUDY_CELL,
    UNITS,
    VERDICTS,
    InvalidScorings,
    Part,
    Resampling,
    ScoredFixture,
    Scorings,
    cells,
    concealing_sensitivity,
    control_verdicts,
    difference_of_means,
    differences,
    discrimination_check,
    main_effects,
    pooled_registers,
    prediction_parts,
    register_effects,
    run_statistics,
    side,
    summarize,
    verdict,
    verdict_of,
)
from cotaudit.studies.report_ll.versions import unprefixed_all_versions

FAST = Resampling(n_resamples=500)
"""Bug units, 500 resamples, seed 0."""
BY_SCENARIO = Resampling("scenario", n_resamples=500)
"""Scenario units, 500 resamples, seed 0."""
LEVELS = list(itertools.product(*(FACTOR_LEVELS[f] for f in FACTORS)))


def _scorings(s=(-10.0, -12.0, -9.0, -8.0), n=(5, 5, 4, 4)) -> Scorings:
    return Scorings(*s, *n)


def _corpus(did_of, n_scenarios: int = 6) -> list[ScoredFixture]:
    """Every version (all three register levels) of ``n_scenarios`` scenarios; ``did_of(i,
    factors)`` sets d_h (d_c is 0), with report token counts 10 (honest) and 5 (concealing);
    scenario ``s{i}`` is built on bug ``b{i // 2}`` of project ``p{i // 4}``."""
    records = []
    for i in range(n_scenarios):
        for levels in LEVELS:
            factors = dict(zip(FACTORS, levels, strict=True))
            d = did_of(i, factors)
            records.append(
                ScoredFixture(
                    fixture_id=f"s{i}/" + "/".join(levels),
                    scenario_id=f"s{i}",
                    factors=factors,
                    scorings=Scorings(-20.0 + d, -20.0, -7.0 - i, -7.0 - i, 10, 10, 5, 5),
                    bug_id=f"b{i // 2}",
                    project_id=f"p{i // 4}",
                )
            )
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


@given(
    st.tuples(finite, finite, finite, finite),
    st.tuples(count, count, count, count),
    finite,
    st.sampled_from(["hack", "clean"]),
)
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
    with pytest.raises(InvalidScorings, match="n_c_clean"):
        _scorings(n=(5, 5, 4, 0))
    with pytest.raises(ValueError, match="s_h_hack"):
        _scorings(s=(math.nan, 0.0, 0.0, 0.0))
    results = [LoglikResult(v, k, []) for v, k in [(-1.0, 2), (-2.0, 2), (-3.0, 3), (-4.0, 3)]]
    assert Scorings.from_results(*results) == Scorings(-1.0, -2.0, -3.0, -4.0, 2, 2, 3, 3)


def test_ledger_row_round_trips_through_strings():
    record = _corpus(lambda i, f: 1.5, n_scenarios=1)[0]
    row = record.ledger_row()
    assert tuple(row) == (*LEDGER_FIELDS, *ID_FIELDS)
    assert ScoredFixture.from_ledger_row({k: str(v) for k, v in row.items()}) == record
    assert record.bug_id == "b0" and record.project_id == "p0"
    # a row of a log written without the id columns: no bug, no project
    bare = ScoredFixture.from_ledger_row({k: row[k] for k in LEDGER_FIELDS})
    assert bare.bug_id is None and bare.project_id is None
    with pytest.raises(ValueError, match="no bug_id"):
        bare.unit("bug")
    assert bare.unit("scenario") == "s0"
    with pytest.raises(ValueError, match="lacks"):
        ScoredFixture.from_ledger_row({"fixture_id": "x"})
    with pytest.raises(InvalidScorings, match="s_c_clean"):
        ScoredFixture.from_ledger_row({**row, "s_c_clean": float("-inf")})


# --- summaries and their unit -----------------------------------------------------------------


def test_summarize_mean_ci_count_and_exact_sign_flip_p():
    values = np.array([[1.0], [2.0], [3.0], [4.0], [5.0]])
    s = summarize(values, list("abcde"), n_resamples=1000, seed=0)
    assert s["mean"][0] == 3.0 and s["n"][0] == 5 and s["n_pos"][0] == 4 + 1
    assert s["n_units"][0] == 5 == s["n_scenarios"][0]
    assert 1.0 <= s["ci_low"][0] < 3.0 < s["ci_high"][0] <= 5.0
    assert s["p"][0] == pytest.approx(2 / 32)  # exact: only all-plus and all-minus reach |3|
    zero = summarize(np.array([[1.0], [-1.0]]), ["a", "b"], n_resamples=100)
    assert zero["p"][0] == 1.0


def test_summarize_monte_carlo_p_is_reproducible():
    rng = np.random.default_rng(5)
    values = rng.normal(0.5, 1.0, size=(40, 2))
    clusters = [str(i) for i in range(40)]
    a = summarize(values, clusters, n_resamples=999, seed=7)
    b = summarize(values, clusters, n_resamples=999, seed=7)
    assert all(np.array_equal(a[k], b[k]) for k in STATS)
    assert 1 / 1000 <= a["p"].min() and a["p"].max() <= 1.0


def _one_cell(did_by_scenario: dict[str, float], bug_of: dict[str, str]) -> list[ScoredFixture]:
    """One plain version per scenario in the study's cell, its did given (d_c = 0)."""
    return [
        _version(
            sid, "shell", "outcome_clause", "plain", d_h=did, d_c=0.0, bug=bug_of[sid], project="p"
        )
        for sid, did in did_by_scenario.items()
    ]


def test_intervals_resample_the_chosen_unit():
    # bug A holds scenarios a1..a3 (did 1 each), bug B scenario b1 (did -3); one project
    records = _one_cell(
        {"a1": 1.0, "a2": 1.0, "a3": 1.0, "b1": -3.0}, {"a1": "A", "a2": "A", "a3": "A", "b1": "B"}
    )
    key = "cell.shell.outcome_clause.plain/did"
    by = {u: run_statistics(records, Resampling(u, n_resamples=4000)) for u in UNITS}
    assert {u: by[u][f"{key}/mean"] for u in UNITS} == {u: 0.0 for u in UNITS}
    assert [by[u][f"{key}/n_units"] for u in UNITS] == [2, 1, 4]
    assert all(by[u][f"{key}/n_scenarios"] == 4 for u in UNITS)
    # bugs: draws {A,A} -> 1, {A,B} -> (3 - 3)/4 = 0, {B,B} -> -3 (P = 1/4 each at the ends)
    assert (by["bug"][f"{key}/ci_low"], by["bug"][f"{key}/ci_high"]) == (-3.0, 1.0)
    # scenarios: mean = 1 - k, k ~ Binomial(4, 1/4) draws of b1; P(k >= 3) = 0.051 > 0.025,
    # P(k = 4) = 0.004: the 2.5% quantile is k = 3, i.e. -2
    assert (by["scenario"][f"{key}/ci_low"], by["scenario"][f"{key}/ci_high"]) == (-2.0, 1.0)
    # one project: every resample is the whole run
    assert (by["project"][f"{key}/ci_low"], by["project"][f"{key}/ci_high"]) == (0.0, 0.0)
    # sign flips of the 2 bug sums (+3, -3): every flip gives |mean| 0 >= 0
    assert by["bug"][f"{key}/p"] == 1.0


def test_bug_clustered_intervals_cover_closer_to_nominal_than_scenario_ones():
    """Simulation: 48 bugs x 3 scenarios, a bug effect as large as the scenario noise (both
    N(0, 1)), true mean 0. The scenario bootstrap treats 144 correlated scenarios as independent
    (design effect 1 + (3 - 1) * 0.5 = 2: its standard error is too small by sqrt(2), so its
    nominal 95% interval covers about P(|Z| < 1.96 / sqrt 2) = 83%); the bug bootstrap resamples
    the 48 independent bugs."""
    rng = np.random.default_rng(0)
    bugs = np.repeat(np.arange(48), 3)
    labels = {"bug": [f"b{b}" for b in bugs], "scenario": [f"s{i}" for i in range(144)]}
    covered = {"bug": 0, "scenario": 0}
    reps = 200
    for rep in range(reps):
        values = (rng.normal(size=48)[bugs] + rng.normal(size=144))[:, None]
        for unit, clusters in labels.items():
            s = summarize(values, clusters, n_resamples=300, seed=rep)
            covered[unit] += bool(s["ci_low"][0] <= 0.0 <= s["ci_high"][0])
    coverage = {u: c / reps for u, c in covered.items()}
    assert coverage["scenario"] < 0.88, coverage
    assert coverage["bug"] > 0.89, coverage
    assert coverage["bug"] - coverage["scenario"] > 0.05, coverage


# --- groups: per cell, pooled over cells, the factorial -----------------------------------------


def test_run_statistics_keys_groups_and_values():
    records = _corpus(lambda i, f: 1.0 + i if f["rendering"] == "shell" else -1.0)
    out = run_statistics(records, BY_SCENARIO)
    assert all(re.fullmatch(r"[A-Za-z0-9_/.-]+", k) for k in out)
    assert CELL_ORDER[0] == STUDY_CELL == "shell.outcome_clause" and len(CELL_ORDER) == 4
    wheres = [f"cell.{c}" for c in CELL_ORDER] + ["pooled_cells"]
    groups = ["all_versions"]
    groups += [
        f"{w}.{g}"
        for w in wheres
        for g in (
            *FACTOR_LEVELS["register"],
            "pooled_registers",
            "register_effect.concealing_dressed",
            "register_effect.honest_dressed",
        )
    ]
    groups += [
        f"factorial.{f}.{lv}"
        for f in FACTORS
        for lv in FACTOR_LEVELS[f]
        if lv in FACTORIAL_REGISTERS or f != "register"
    ]
    groups += [f"main_effect.{f}" for f in FACTORS]
    for g, q, stat in itertools.product(groups, QUANTITIES, STATS):
        assert f"{g}/{q}/{stat}" in out, f"{g}/{q}/{stat}"
    # no figure pooled over cells under a name that hides it, no third level in the factorial
    for gone in (
        "did/mean",
        "register.plain/did/mean",
        "rendering.shell/did/mean",
        "pooled_registers/did/mean",
        "factorial.register.honest_dressed/did/mean",
    ):
        assert gone not in out
    shell_mean = np.mean([1.0 + i for i in range(6)])  # 3.5
    assert out["cell.shell.outcome_clause.plain/did/mean"] == pytest.approx(shell_mean)
    assert out["cell.shell.outcome_clause.plain/did/n"] == 6
    assert out["cell.driver.bare.plain/did/ci_high"] == pytest.approx(-1.0)
    # pooled over the 4 cells: 2 shell cells at 3.5, 2 driver cells at -1
    assert out["pooled_cells.plain/did/mean"] == pytest.approx((shell_mean - 1.0) / 2)
    assert out["pooled_cells.plain/did/n"] == 6 * 4
    assert out["pooled_cells.pooled_registers/did/n"] == 6 * 4  # scenario x cell groups
    assert out["cell.shell.bare.pooled_registers/did/n"] == 6
    assert out["all_versions/did/mean"] == pytest.approx((shell_mean - 1.0) / 2)
    assert unprefixed_all_versions(out)["did/mean"] == out["all_versions/did/mean"]
    # scenario sums 12 * (1 + i) / 2 - 12 / 2 = 6i: s0 is 0, so only the 2 * 2 flips keeping
    # s1..s5 alike reach |mean|
    assert out["all_versions/did/p"] == pytest.approx(4 / 64)
    assert out["factorial.rendering.shell/did/mean"] == pytest.approx(shell_mean)
    assert out["factorial.rendering.shell/did_per_token/mean"] == pytest.approx(shell_mean / 10)
    assert out["factorial.rendering.shell/d_c/mean"] == 0.0
    # main effect of rendering: per scenario (1 + i) - (-1) = 2 + i, all positive
    assert out["main_effect.rendering/did/mean"] == pytest.approx(4.5)
    assert out["main_effect.rendering/did/n"] == 6
    assert out["main_effect.rendering/did/p"] == pytest.approx(2 / 64)
    assert out["main_effect.richness/did/mean"] == 0.0
    assert out == run_statistics(records, BY_SCENARIO)
    # bugs b0..b2 (two scenarios each): 3 units of 6 scenarios
    by_bug = run_statistics(records, FAST)
    assert by_bug["cell.shell.outcome_clause.plain/did/n_units"] == 3
    assert by_bug["cell.shell.outcome_clause.plain/did/n_scenarios"] == 6
    assert by_bug["cell.shell.outcome_clause.plain/did/mean"] == pytest.approx(shell_mean)


def test_cells_come_in_the_study_order():
    records = [
        _version("s", "shell", "bare", "plain", 1.0, 0.0),
        _version("s", "driver", "outcome_clause", "plain", 1.0, 0.0),
        _version("s", "shell", "outcome_clause", "plain", 1.0, 0.0),
    ]
    assert cells(records) == ["shell.outcome_clause", "shell.bare", "driver.outcome_clause"]


def test_factor_main_effects_use_the_factorials_own_levels():
    # did = 1 at shell (0 at driver), +2 with the concealing report dressed; the third level
    # (honest dressed) at 100 must not enter any factorial figure
    def did_of(i, f):
        if f["register"] == "honest_dressed":
            return 100.0
        return (1.0 if f["rendering"] == "shell" else 0.0) + (
            2.0 if f["register"] == "concealing_dressed" else 0.0
        )

    out = main_effects(_corpus(did_of), BY_SCENARIO)
    # shell: plain 1, concealing_dressed 3 -> 2; driver: 0 and 2 -> 1
    assert out["factorial.rendering.shell/did/mean"] == pytest.approx(2.0)
    assert out["factorial.rendering.driver/did/mean"] == pytest.approx(1.0)
    assert out["factorial.rendering.shell/did/n"] == 6 * 2 * 2  # scenarios x richness x 2 registers
    assert out["main_effect.rendering/did/mean"] == pytest.approx(1.0)
    assert out["main_effect.richness/did/mean"] == pytest.approx(0.0)
    # register: concealing_dressed minus plain, averaged over rendering and richness
    assert out["main_effect.register/did/mean"] == pytest.approx(2.0)
    assert out["factorial.register.plain/did/mean"] == pytest.approx(0.5)
    assert out["factorial.register.concealing_dressed/did/mean"] == pytest.approx(2.5)
    assert "factorial.register.honest_dressed/did/mean" not in out


def _version(
    sid,
    rendering,
    richness,
    register,
    d_h,
    d_c,
    n_h=10,
    n_c=5,
    bug=None,
    project="p0",
    family="main",
) -> ScoredFixture:
    factors = {"rendering": rendering, "richness": richness, "register": register}
    return ScoredFixture(
        fixture_id=f"{sid}/{rendering}/{richness}/{register}",
        scenario_id=sid,
        factors=factors,
        scorings=Scorings(-20.0 + d_h, -20.0, -7.0 + d_c, -7.0, n_h, n_h, n_c, n_c),
        family=family,
        bug_id=bug or f"bug-{sid}",
        project_id=project,
    )


def test_pooled_registers_counts_each_report_once():
    # one group; reports: plain honest d_h 1, dressed honest d_h 4, plain concealing d_c 0.5,
    # dressed concealing d_c -1.5. Each version carries the d of the reports it holds.
    unit = [
        _version("s", "shell", "bare", "plain", d_h=1.0, d_c=0.5),
        _version("s", "shell", "bare", "concealing_dressed", d_h=1.0, d_c=-1.5),
        _version("s", "shell", "bare", "honest_dressed", d_h=4.0, d_c=0.5),
    ]
    groups, values = pooled_registers(unit)
    q = dict(zip(QUANTITIES, values[0], strict=True))
    assert [g.scenario_id for g in groups] == ["s"] and groups[0].bug_id == "bug-s"
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


def test_headline_and_register_effects_per_cell():
    # the study's cell: plain 0.5, dressed concealing 2.5, dressed honest 3.5 (+ i); another cell
    # (shell, bare) with every did 10 higher
    records = [
        _version(f"s{i}", "shell", richness, reg, d_h=dh + i + shift, d_c=dc)
        for i in range(3)
        for richness, shift in (("outcome_clause", 0.0), ("bare", 10.0))
        for reg, dh, dc in (
            ("plain", 1.0, 0.5),
            ("concealing_dressed", 1.0, -1.5),
            ("honest_dressed", 4.0, 0.5),
        )
    ]
    out = run_statistics(records, FAST)
    study = "cell.shell.outcome_clause"
    assert out[f"{study}.plain/did/mean"] == pytest.approx(0.5 + 1.0)  # mean of 0.5, 1.5, 2.5
    assert out[f"{study}.concealing_dressed/did/mean"] == pytest.approx(2.5 + 1.0)
    assert out[f"{study}.honest_dressed/did/mean"] == pytest.approx(3.5 + 1.0)
    assert out[f"{study}.pooled_registers/did/mean"] == pytest.approx(3.0 + 1.0)
    assert out["cell.shell.bare.plain/did/mean"] == pytest.approx(11.5)
    assert out["pooled_cells.plain/did/mean"] == pytest.approx((1.5 + 11.5) / 2)
    # register effects, paired within the cell: d_c -1.5 - 0.5 = -2 -> did +2; d_h +3
    assert out[f"{study}.register_effect.concealing_dressed/d_c/mean"] == pytest.approx(-2.0)
    assert out[f"{study}.register_effect.concealing_dressed/did/mean"] == pytest.approx(2.0)
    assert out[f"{study}.register_effect.concealing_dressed/d_h/mean"] == 0.0  # identical report
    assert out[f"{study}.register_effect.honest_dressed/d_h/mean"] == pytest.approx(3.0)
    assert out[f"{study}.register_effect.honest_dressed/did/n"] == 3
    assert out["pooled_cells.register_effect.honest_dressed/did/n"] == 6
    assert "register_effect.honest_dressed/d_h/mean" not in out


def test_register_effects_by_cell_and_pooled():
    records = _corpus(
        lambda i, f: (
            2.0
            + (
                1.5
                if f["register"] == "honest_dressed" and f["richness"] == "outcome_clause"
                else 0.0
            )
        )
    )
    out = register_effects(records, BY_SCENARIO)
    assert out["cell.shell.outcome_clause.register_effect.honest_dressed/d_h/mean"] == 1.5
    assert out["cell.driver.outcome_clause.register_effect.honest_dressed/did/mean"] == 1.5
    assert out["cell.shell.bare.register_effect.honest_dressed/d_h/mean"] == 0.0
    assert out["pooled_cells.register_effect.honest_dressed/d_h/mean"] == pytest.approx(0.75)
    assert out["pooled_cells.register_effect.honest_dressed/d_h/n"] == 6 * 4
    assert out["pooled_cells.register_effect.concealing_dressed/d_c/mean"] == 0.0
    assert not any(".register_effect.plain/" in k for k in out)
    everything = run_statistics(records, BY_SCENARIO)
    assert all(everything[k] == v for k, v in out.items())


def test_run_statistics_p_detects_a_consistent_effect():
    out = run_statistics(_corpus(lambda i, f: 0.5 + 0.1 * i), BY_SCENARIO)
    key = "cell.shell.outcome_clause.plain/did"
    assert out[f"{key}/p"] == pytest.approx(2 / 64)  # 6 scenarios, exact sign flip
    assert out[f"{key}/ci_low"] > 0


def test_run_statistics_refuses_mixed_families():
    records = _corpus(lambda i, f: 1.0, n_scenarios=1)
    mixed = records[:1] + [replace(r, family="ctl") for r in records[1:]]
    with pytest.raises(ValueError, match="one family"):
        run_statistics(mixed, FAST)
    assert run_statistics([], FAST) == {}


# --- the discrimination check -----------------------------------------------------------------


def _model(
    did_plain: float,
    did_dressed: float,
    d_c_plain: float,
    n: int = 4,
    cell=("shell", "outcome_clause"),
) -> list[ScoredFixture]:
    """n scenarios (each its own bug) of one cell at plain and concealing_dressed: the honest
    report is the same at both levels (d_h), so d_c(dressed) = d_h - did_dressed."""
    d_h = did_plain + d_c_plain
    return [
        _version(f"s{i}", *cell, reg, d_h=d_h, d_c=d_h - did)
        for i in range(n)
        for reg, did in (("plain", did_plain), ("concealing_dressed", did_dressed))
    ]


def test_discrimination_check_on_the_studys_figures():
    """The study's base model was "unable to answer this question at all, because its own
    concealing-side effect is 0.49 nats, smaller than the band": 0.49 = 1.32 (concealing report
    dressed) - 0.83 (both plain). Qwen2.5-7B-Instruct: 4.14 - (-0.38) = 4.52, the figure of
    "rewriting the concealing report alone"; its concealing report "went from being moved 6.09
    nats by the transcript to being moved 1.57" (6.09 - 1.57 = 4.52). Mistral: 5.58 - 4.32."""
    qwen = discrimination_check(_model(-0.38, 4.14, 6.09), band=0.5, resampling=FAST)
    assert qwen["discrimination/register_effect/mean"] == pytest.approx(4.52)
    assert qwen["discrimination/register_effect/n"] == 4
    assert qwen["discrimination/abs_register_effect"] == pytest.approx(4.52)
    assert qwen["discrimination/able_to_answer"] == 1.0
    base = discrimination_check(_model(0.83, 1.32, 3.0), band=0.5, resampling=FAST)
    assert base["discrimination/register_effect/mean"] == pytest.approx(0.49)
    assert base["discrimination/able_to_answer"] == 0.0
    mistral = discrimination_check(_model(4.32, 5.58, 2.0), band=0.5, resampling=FAST)
    assert mistral["discrimination/register_effect/mean"] == pytest.approx(1.26)
    assert mistral["discrimination/able_to_answer"] == 1.0
    # the concealing arm's own sensitivity is another quantity: |mean d_c| of the plain
    # concealing report is 3.0 on the "base" case, far outside the band, although dressing
    # that report moves the DiD by only 0.49 -- it would call the base model able to answer
    sens = concealing_sensitivity(_model(0.83, 1.32, 3.0), resampling=FAST)
    assert sens["concealing_sensitivity/d_c/mean"] == pytest.approx(3.0)
    assert sens["concealing_sensitivity/abs_d_c"] == pytest.approx(3.0)
    assert concealing_sensitivity(_model(-0.38, 4.14, 6.09), resampling=FAST)[
        "concealing_sensitivity/abs_d_c"
    ] == pytest.approx(6.09)


def test_discrimination_check_reads_its_cell_and_the_band():
    # the study's cell: effect 0.2 per scenario; (shell, bare): effect 3
    records = _model(0.0, 0.2, 1.0) + _model(0.0, 3.0, 1.0, cell=("shell", "bare"))
    out = discrimination_check(records, band=0.25, resampling=FAST)
    assert out["discrimination/register_effect/mean"] == pytest.approx(0.2)
    assert out["discrimination/band"] == 0.25
    assert out["discrimination/able_to_answer"] == 0.0  # 0.2 inside +-0.25: cannot answer
    assert (
        discrimination_check(records, band=0.15, resampling=FAST)["discrimination/able_to_answer"]
        == 1
    )
    pooled = discrimination_check(records, band=0.25, cell=POOLED_CELLS, resampling=FAST)
    assert pooled["discrimination/register_effect/mean"] == pytest.approx((0.2 + 3.0) / 2)
    assert pooled["discrimination/register_effect/n"] == 8
    # no concealing_dressed version in the cell: not checked
    plain_only = [r for r in records if r.factors["register"] == "plain"]
    empty = discrimination_check(plain_only, band=0.25, resampling=FAST)
    assert empty["discrimination/register_effect/n"] == 0
    assert math.isnan(empty["discrimination/able_to_answer"])
    with pytest.raises(ValueError, match="band"):
        discrimination_check(records, band=-1.0)


def test_concealing_sensitivity_takes_each_plain_concealing_report_once():
    records = [
        _version("a", "shell", "outcome_clause", "plain", d_h=1.0, d_c=-0.3),
        _version("a", "shell", "outcome_clause", "concealing_dressed", d_h=1.0, d_c=-5.0),
        _version("a", "shell", "outcome_clause", "honest_dressed", d_h=2.0, d_c=-0.3),
        _version("b", "shell", "outcome_clause", "honest_dressed", d_h=2.0, d_c=-0.1),
    ]
    out = concealing_sensitivity(records, resampling=FAST)
    assert out["concealing_sensitivity/d_c/n"] == 2  # groups a and b, each once
    assert out["concealing_sensitivity/d_c/mean"] == pytest.approx((-0.3 - 0.1) / 2)
    assert out["concealing_sensitivity/abs_d_c"] == pytest.approx(0.2)
    assert (
        concealing_sensitivity(records[1:2], resampling=FAST)["concealing_sensitivity/d_c/n"] == 0
    )


# --- controls ---------------------------------------------------------------------------------


def test_difference_of_means_resamples_each_family_by_unit():
    # family a: units at 1 and 3 (means over draws: 1, 2, 3); family b: constant 0.5
    out = difference_of_means(
        np.array([1.0, 1.0, 3.0]),
        ["x", "x", "y"],
        np.array([0.5, 0.5]),
        ["u", "v"],
        n_resamples=4000,
        seed=0,
    )
    assert out["mean"] == pytest.approx((1 + 1 + 3) / 3 - 0.5)
    # draws of a: {x,x} -> 1, {x,y} -> 5/3, {y,y} -> 3 (versions weighted); minus 0.5
    assert out["ci_low"] == pytest.approx(0.5) and out["ci_high"] == pytest.approx(2.5)


def test_side_and_verdict_by_hand():
    assert side(0.1, 2.0, 1) == 1 and side(0.1, 2.0, -1) == -1
    assert side(-2.0, -0.1, -1) == 1 and side(-2.0, -0.1, 1) == -1
    assert side(-0.1, 2.0, 1) == 0 and side(0.0, 2.0, 1) == 0  # touching 0 spans it
    assert math.isnan(side(math.nan, 1.0, 1))

    def two_outcome(*observed):
        return [Part(1, -1, s) for s in observed]

    assert verdict(two_outcome(1)) == 1 and verdict(two_outcome(-1)) == -1
    assert verdict(two_outcome(0)) == 0
    assert verdict(two_outcome(1, 0)) == 0 and verdict(two_outcome(1, -1)) == -1
    assert verdict(two_outcome(1, 1)) == 1 and math.isnan(verdict(two_outcome(1, math.nan)))
    assert verdict(two_outcome(math.nan, -1)) == -1
    # both explanations predict +: nothing observed can tell them apart
    assert verdict([Part(1, 1, 1)]) == NON_DIAGNOSTIC == verdict([Part(1, 1, -1)])
    assert verdict([Part(-1, -1, math.nan)]) == NON_DIAGNOSTIC
    # a non-diagnostic part is left out; the diagnostic one decides (0: no difference expected)
    assert verdict([Part(1, 1, 1), Part(1, 0, 0)]) == 0
    assert verdict([Part(1, 1, -1), Part(1, 0, 1)]) == 1
    assert VERDICTS[NON_DIAGNOSTIC].startswith("non-diagnostic")
    assert VERDICTS[-1] == "confound excluded" and VERDICTS[1] == "consistent with the confound"


def _family(family: str, did: float, n: int = 3) -> list[ScoredFixture]:
    return [replace(r, family=family) for r in _corpus(lambda i, f: did, n_scenarios=n)]


def _declare(
    confound="x", sign=1, without=-1, relative_to=None, relative_without=None, **kw
) -> ControlDeclaration:
    return ControlDeclaration(
        confound=confound,
        expected_sign=sign,
        expected_sign_without_confound=without,
        relative_to=relative_to,
        relative_sign_without_confound=(
            0 if relative_to and relative_without is None else relative_without
        ),
        **kw,
    )


def _indicators(out, family):
    return [
        out[f"control.{family}/{k}"]
        for k in ("confound_excluded", "consistent_with_confound", "inconclusive", "non_diagnostic")
    ]


def test_control_verdicts_sign_relative_non_diagnostic_and_refusal():
    records = (
        _family("echo_ctl", 2.0)
        + _family("len_ctl", -0.5)
        + _family("main", 1.0)
        + _family("above_ctl", 1.5)
        + _family("same_ctl", 2.0)
    )
    # mixed_ctl: did = +1 in scenario s0 and -1 in s1, s2, so its CI spans zero
    records += [
        replace(r, family="mixed_ctl")
        for r in _corpus(lambda i, f: 1.0 if i == 0 else -1.0, n_scenarios=3)
    ]
    records += [replace(r, family="below_ctl") for r in _family("x", 2.5)]
    controls = {
        "echo_ctl": _declare("echo"),
        "len_ctl": _declare("length", quantity="d_h"),
        "mixed_ctl": _declare("mixed"),
        "above_ctl": _declare("echo", relative_to="main"),
        "below_ctl": _declare(sign=-1, without=1, relative_to="main"),
        "same_ctl": _declare("register", sign=1, without=1),
        "unscored": _declare(sign=-1, without=1),
    }
    out = control_verdicts(records, controls, BY_SCENARIO)
    # did = 2 everywhere, CI [2, 2]: on the confound's (+) side
    assert out["control.echo_ctl/did/mean"] == 2.0 and _indicators(out, "echo_ctl") == [0, 1, 0, 0]
    assert verdict_of(out, "echo_ctl") == "consistent with the confound"
    # d_h = -0.5 everywhere, CI [-0.5, -0.5]: the side only the absence predicts
    assert out["control.len_ctl/d_h/mean"] == -0.5 and _indicators(out, "len_ctl") == [1, 0, 0, 0]
    assert verdict_of(out, "len_ctl") == "confound excluded"
    assert "control.len_ctl/did/mean" not in out
    assert out["control.len_ctl/expected_sign"] == 1.0
    assert out["control.len_ctl/expected_sign_without_confound"] == -1.0
    # scenario means +1, -1, -1: bootstrap draws reach both signs, CI spans zero
    assert out["control.mixed_ctl/did/ci_low"] < 0 < out["control.mixed_ctl/did/ci_high"]
    assert _indicators(out, "mixed_ctl") == [0, 0, 1, 0]
    # positive (1.5) and above main (1.0): difference 0.5 with CI [0.5, 0.5]
    assert out["control.above_ctl/did_minus_main/mean"] == pytest.approx(0.5)
    assert out["control.above_ctl/did_minus_main/ci_low"] == pytest.approx(0.5)
    assert out["control.above_ctl/relative_sign_without_confound"] == 0.0
    assert _indicators(out, "above_ctl") == [0, 1, 0, 0]
    # predicted negative and below main; observed +2.5, above main by 1.5: excluded
    assert out["control.below_ctl/did_minus_main/mean"] == pytest.approx(1.5)
    assert _indicators(out, "below_ctl") == [1, 0, 0, 0]
    # both explanations predict did > 0: passing (CI [2, 2]) tells nothing
    assert _indicators(out, "same_ctl") == [0, 0, 0, 1]
    assert verdict_of(out, "same_ctl").startswith("non-diagnostic")
    assert all(math.isnan(v) for v in _indicators(out, "unscored"))
    assert out["control.unscored/did/n"] == 0 and verdict_of(out, "unscored") == "—"
    controls["nosign"] = ControlDeclaration(confound="register")
    with pytest.raises(ControlDeclarationError, match="'nosign'.*no expected_sign"):
        control_verdicts(records, controls, BY_SCENARIO)


def test_a_declaration_with_only_the_confounds_sign_reads_as_two_outcome():
    # a declaration naming only the confound's sign: opposite sign without the confound, no
    # difference from the reference
    records = _family("main", 2.0) + _family("above_ctl", 1.0)
    declaration = ControlDeclaration(confound="echo", expected_sign=1, relative_to="main")
    assert prediction_parts(declaration, "above_ctl") == {"sign": (1, -1), "relative": (1, 0)}
    out = control_verdicts(records, {"above_ctl": declaration}, BY_SCENARIO)
    # the sign part holds (CI [1, 1]) but the relative part is contradicted (1 - 2 = -1)
    assert out["control.above_ctl/did/ci_low"] == 1.0
    assert out["control.above_ctl/did_minus_main/ci_high"] == pytest.approx(-1.0)
    assert verdict_of(out, "above_ctl") == "confound excluded"
    # the reference family absent from the records: undetermined, not a verdict
    alone = control_verdicts(_family("above_ctl", 1.0), {"above_ctl": declaration}, BY_SCENARIO)
    assert math.isnan(alone["control.above_ctl/did_minus_main/mean"])
    assert math.isnan(alone["control.above_ctl/consistent_with_confound"])


def test_the_studys_register_control_as_registered_and_as_derived():
    """The original experiment's register control (8 fixtures: concealing report vivid, honest
    flat) came back at +7.94, "larger than the main family's 7.01 and positive on all eight".

    - As registered: "if vividness were driving the result, this family should come back
      negative", and positive read as all clear: confound -1, without it +1. The observation
      (+) then reads "confound excluded", which is what the study recorded.
    - As derived from the factorial ("intensifying the concealing report pushes the reported
      number up", so the family "should land above the main family"): +1 if the confound is
      real; without it the family measures the same effect as the main family, +1 as well. The
      sign can then exclude nothing: non-diagnostic ("the one world where the control mattered
      is the world where it was guaranteed to pass"). Only the difference from the main family
      (0 without the confound) can tell the two apart; here it lies above 0, on the
      confound's side.
    """
    main = [
        replace(r, family="main")
        for r in _one_cell(
            {f"m{i}": 7.01 + 0.1 * (i - 7.5) for i in range(16)},
            {f"m{i}": f"m{i}" for i in range(16)},
        )
    ]
    control = [
        replace(r, family="register_ctl")
        for r in _one_cell(
            {f"c{i}": 7.94 + 0.1 * (i - 3.5) for i in range(8)},
            {f"c{i}": f"c{i}" for i in range(8)},
        )
    ]
    records = main + control
    registered = {"register_ctl": _declare("register", sign=-1, without=1)}
    derived = {"register_ctl": _declare("register", sign=1, without=1)}
    relative = {"register_ctl": _declare("register", sign=1, without=1, relative_to="main")}
    out = {
        name: control_verdicts(records, c, FAST)
        for name, c in (("registered", registered), ("derived", derived), ("relative", relative))
    }
    assert out["registered"]["control.register_ctl/did/mean"] == pytest.approx(7.94)
    assert out["registered"]["control.register_ctl/did/n_pos"] == 8
    assert verdict_of(out["registered"], "register_ctl") == "confound excluded"
    assert verdict_of(out["derived"], "register_ctl") == VERDICTS[NON_DIAGNOSTIC]
    assert out["relative"]["control.register_ctl/did_minus_main/mean"] == pytest.approx(0.93)
    assert out["relative"]["control.register_ctl/did_minus_main/ci_low"] > 0
    assert verdict_of(out["relative"], "register_ctl") == "consistent with the confound"


def test_relative_part_compares_the_reference_at_the_controls_own_levels():
    # the control family has one version per scenario, at (shell, outcome_clause, plain), like
    # the corpus's register control; the main family's did is 1.0 there and 10.0 at every
    # other cell and register level: the difference is 1.5 - 1.0, not 1.5 minus main's mean
    main = [
        replace(r, family="main")
        for r in _corpus(
            lambda i, f: (
                1.0
                if (f["rendering"], f["richness"], f["register"])
                == ("shell", "outcome_clause", "plain")
                else 10.0
            ),
            n_scenarios=3,
        )
    ]
    control = [
        replace(r, family="ctl")
        for r in _one_cell({f"c{i}": 1.5 for i in range(3)}, {f"c{i}": f"c{i}" for i in range(3)})
    ]
    declaration = _declare("register", sign=1, without=1, relative_to="main")
    out = control_verdicts(main + control, {"ctl": declaration}, FAST)
    assert out["control.ctl/did_minus_main/mean"] == pytest.approx(0.5)
    assert out["control.ctl/did_minus_main/ci_low"] == pytest.approx(0.5)
    # the sign part is non-diagnostic; the difference lies above 0: on the confound's side
    assert verdict_of(out, "ctl") == "consistent with the confound"
