"""The spread of a validation's numbers across training seeds beside their spread across
problems: hand-derived values for made-up per-seed numbers, and which runs form a seed group."""

from __future__ import annotations

import math

import pytest

from cotaudit.organisms import get_organism
from cotaudit.organisms.card import organism_card
from cotaudit.organisms.settings import TrainingSettings
from cotaudit.validation.seeds import (
    NOT_MEASURED,
    ONE_SEED,
    SHORTCUT_RATE,
    Quantity,
    SeedRun,
    SeedValue,
    recipe_of,
    seed_summaries,
    shortcut_rate_value,
    spread,
    wilson_interval,
)

NAN = math.nan
TAU = Quantity("auroc", "tau_0.8")
TAU_DIFF = Quantity("difference", "tau_0.8")
LENGTH = Quantity("auroc", "length", baseline=True)


def test_three_seeds_mean_range_sample_sd_and_median_width():
    """AUROCs 0.75, 0.5, 1.0: mean 0.75, range 0.5 to 1.0, SD sqrt((0 + 0.0625 + 0.0625) / 2)
    = 0.25; interval widths 0.2, 0.4, 0.3: median 0.3, SE 0.3 / (2 * 1.959964) = 0.076532."""
    values = [
        SeedValue(0.75, 0.65, 0.85),
        SeedValue(0.5, 0.3, 0.7),
        SeedValue(1.0, 0.7, 1.0),
    ]
    s = spread(values)
    assert s.n_seeds == 3 and s.n_intervals == 3
    assert s.mean == pytest.approx(0.75)
    assert (s.minimum, s.maximum) == (0.5, 1.0)
    assert s.sd == pytest.approx(0.25)
    assert s.median_width == pytest.approx(0.3)
    assert s.se == pytest.approx(0.3 / 3.919928, rel=1e-6)


def test_a_seed_not_measured_is_left_out_and_widths_need_an_interval():
    """Seeds 0.6 (no interval), NaN, 0.8 (width 0.1), 0.9 (width 0.3): mean 2.3 / 3 = 0.766667,
    SD sqrt((0.166667^2 + 0.033333^2 + 0.133333^2) / 2) = sqrt(0.046667 / 2) = 0.152753;
    median width of 0.1 and 0.3: 0.2, from 2 seeds."""
    values = [
        SeedValue(0.6),
        NOT_MEASURED,
        SeedValue(0.8, 0.75, 0.85),
        SeedValue(0.9, 0.7, 1.0),
    ]
    s = spread(values)
    assert s.n_seeds == 3 and s.n_intervals == 2
    assert s.mean == pytest.approx(0.766667, abs=1e-6)
    assert s.sd == pytest.approx(0.152753, abs=1e-6)
    assert s.median_width == pytest.approx(0.2)


def test_one_seed_has_no_sd_and_none_has_no_number():
    one = spread([SeedValue(0.7, 0.6, 0.9)])
    assert one.n_seeds == 1 and one.mean == 0.7 and math.isnan(one.sd)
    assert one.median_width == pytest.approx(0.3)
    none = spread([NOT_MEASURED, NOT_MEASURED])
    assert none.n_seeds == 0 and math.isnan(none.mean) and math.isnan(none.median_width)


def test_wilson_interval_of_three_of_four():
    """3/4: center (0.75 + 1.920729 / 4) / (1 + 3.841459 / 4) = 0.627527, half 0.999795 *
    sqrt(0.046875 + 0.060023) = 0.326886: [0.3006, 0.9544] (the published value)."""
    low, high = wilson_interval(3, 4)
    assert low == pytest.approx(0.30064, abs=1e-5)
    assert high == pytest.approx(0.95441, abs=1e-5)
    # 0/10: low 0, high z^2 / (n + z^2) = 3.841459 / 13.841459 = 0.277533
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.277533), abs=1e-6)
    assert all(math.isnan(b) for b in wilson_interval(1, 1))  # one problem: no interval
    rate = shortcut_rate_value(3, 4)
    assert (rate.estimate, rate.note) == (0.75, "3/4") and rate.width == pytest.approx(
        0.65377, abs=1e-5
    )
    assert math.isnan(shortcut_rate_value(0, 0).estimate)


def _card(seed: int, step: int = 100, name: str = "hint-follower", **settings):
    values = {"problems": 4, "seed": seed, "recipe": "default", **settings}
    return organism_card(get_organism(name), "tiny", "/m", TrainingSettings(**values), step)


def _run(log: str, card, tau: float, diff: float, rate: tuple[int, int], rows=range(10)):
    return SeedRun(
        log,
        "selfcommit",
        frozenset(rows),
        False,
        card,
        {
            TAU: SeedValue(tau, tau - 0.1, tau + 0.1),
            TAU_DIFF: SeedValue(diff, note="length"),
            LENGTH: SeedValue(tau - diff),
            SHORTCUT_RATE: shortcut_rate_value(*rate),
        },
    )


def test_runs_differing_only_in_seed_form_one_group_per_quantity():
    """Seeds 2, 0, 1 of one recipe (given out of order) at step 100: one group, seeds in order,
    four quantities in the runs' order. Shortcut rates 6/8, 4/8, 8/8: mean 0.75, SD 0.25."""
    runs = [
        _run("s2.eval", _card(2), 0.9, 0.2, (6, 8)),
        _run("s0.eval", _card(0), 0.7, 0.1, (4, 8)),
        _run("s1.eval", _card(1), 0.8, 0.0, (8, 8)),
    ]
    summaries = seed_summaries(runs)
    assert [s.quantity for s in summaries] == [TAU, TAU_DIFF, LENGTH, SHORTCUT_RATE]
    tau, diff, _, rate = summaries
    assert tau.seeds == (0, 1, 2) and tau.logs == ("s0.eval", "s1.eval", "s2.eval")
    assert [v.estimate for v in tau.values] == [0.7, 0.8, 0.9]
    assert tau.spread.mean == pytest.approx(0.8) and tau.spread.sd == pytest.approx(0.1)
    assert tau.spread.median_width == pytest.approx(0.2) and tau.words is None
    assert diff.spread.mean == pytest.approx(0.1) and diff.spread.sd == pytest.approx(0.1)
    assert diff.spread.n_intervals == 0 and [v.note for v in diff.values] == ["length"] * 3
    assert [v.note for v in rate.values] == ["4/8", "8/8", "6/8"]
    assert rate.spread.mean == pytest.approx(0.75) and rate.spread.sd == pytest.approx(0.25)
    assert (tau.organism, tau.step, tau.recipe_label, tau.control) == (
        "hint-follower",
        100,
        "default",
        False,
    )
    assert "seed" not in tau.recipe and tau.recipe == recipe_of(_card(5))


def test_another_recipe_step_organism_or_rows_is_another_group():
    """A learning rate of 1e-4 (the same recipe name: labelled #1 and #2), step 50, the
    negative control, other rows: each its own group of one seed, which says so."""
    base = _run("a.eval", _card(0), 0.8, 0.1, (1, 2))
    others = [
        _run("lr.eval", _card(1, learning_rate=1e-4), 0.8, 0.1, (1, 2)),
        _run("step.eval", _card(1, step=50), 0.8, 0.1, (1, 2)),
        _run("ctl.eval", _card(1, name="hint-ignorer"), 0.8, 0.1, (1, 2)),
        _run("rows.eval", _card(1), 0.8, 0.1, (1, 2), rows=range(20)),
    ]
    taus = [s for s in seed_summaries([base, *others]) if s.quantity == TAU]
    assert len(taus) == 5 and all(len(s.seeds) == 1 for s in taus)
    assert all(s.words == ONE_SEED and math.isnan(s.spread.sd) for s in taus)
    labels = {s.logs[0]: s.recipe_label for s in taus}
    assert labels["a.eval"] == "default #1" and labels["lr.eval"] == "default #2"
    assert labels["step.eval"] == "default #1"
    control = next(s for s in taus if s.logs == ("ctl.eval",))
    assert control.control and control.organism == "hint-ignorer"


def test_a_second_run_of_a_seed_is_left_out_and_a_missing_quantity_is_not_measured():
    first = _run("first.eval", _card(0), 0.6, 0.1, (1, 2))
    again = _run("again.eval", _card(0), 0.9, 0.1, (1, 2))
    other = SeedRun("other.eval", "selfcommit", frozenset(range(10)), False, _card(1), {})
    summaries = seed_summaries([first, again, other])
    tau = summaries[0]
    assert tau.seeds == (0, 1) and tau.left_out == ("again.eval",)
    assert tau.values[0].estimate == 0.6 and math.isnan(tau.values[1].estimate)
    assert tau.words == ONE_SEED
    assert seed_summaries([other]) == []


def test_the_table_row_of_one_seed_says_so_and_escapes_the_card_text():
    """A negative control's one run whose card names its recipe ``a*b|c``: the row gives the
    seed's value, the words for one seed, its Wilson width (2/4: 2 * 1.959964 / 1.960365 *
    sqrt(0.0625 + 3.841459 / 64) = 0.699922, SE 0.699922 / 3.919928 = 0.178555) and the recipe
    escaped for Markdown."""
    from cotaudit.validation.table import seed_table

    card = _card(7, name="hint-ignorer", recipe="a*b|c")
    run = SeedRun(
        "c.eval",
        "selfcommit",
        frozenset(range(4)),
        False,
        card,
        {SHORTCUT_RATE: shortcut_rate_value(2, 4)},
    )
    [summary] = seed_summaries([run])
    [_, row] = seed_table([summary])
    assert row == (
        "| selfcommit | 0-3 | hint-ignorer (negative control) | a\\*b\\|c | 100 | shortcut rate | "
        f"7: 0.500 (2/4) | 0.500 | {ONE_SEED} | 0.700 (≈ 0.179) |"
    )
