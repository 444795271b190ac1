from cotaudit.probing.curves import Curve, prefix_positions, summarize
from cotaudit.studies.selfcommit.schedule import (
    coarse_positions,
    fill_schedule,
    refinement_positions,
)


def test_coarse_positions_keep_ends():
    # full: 30,60,...,300 and 310 (11 positions) -> every 4th from the first: 30,150,270, plus T
    assert prefix_positions(310, 30)[::4] == [30, 150, 270]
    assert coarse_positions(310, 30) == [30, 150, 270, 310]
    assert coarse_positions(20, 30) == [20]  # one position: T


def test_refine_only_where_ambiguous():
    full = [30, 60, 90, 120, 150, 180, 210, 240, 270]
    coarse = [30, 150, 270]
    # [30,150] pinned at 0 -> skipped; [150,270] goes 0 -> 1 -> refined
    assert refinement_positions(full, coarse, {30: 0.0, 150: 0.0, 270: 1.0}) == [180, 210, 240]
    # both ends 0.4: ambiguous even though equal
    assert refinement_positions(full, coarse, {30: 0.4, 150: 0.4, 270: 0.4}) == [
        60,
        90,
        120,
        180,
        210,
        240,
    ]


def test_fill_imputes_pinned_intervals():
    full = [30, 60, 90, 120, 150]
    matches, imputed = fill_schedule(full, {30: 5, 150: 5})
    assert matches == [5, 5, 5, 5, 5]
    assert imputed == [False, True, True, True, False]


def _adaptive(cot_length, stride, truth):
    """The solver's adaptive steps on a known curve ``truth`` (matches of 5 per position)."""
    full = prefix_positions(cot_length, stride)
    coarse = coarse_positions(cot_length, stride)
    probed = {t: truth(t) for t in coarse}
    probed |= {
        t: truth(t) for t in refinement_positions(full, coarse, {t: probed[t] / 5 for t in coarse})
    }
    return full, probed, fill_schedule(full, probed)


def test_adaptive_schedule_on_the_new_positions_recovers_a_step():
    # T = 400, stride 25: full = 25, 50, ..., 375, 400 (16 positions); coarse = 25, 125, 225,
    # 325 and T. A step from 0 to 5 at t = 200: coarse c = 0, 0, 1, 1, 1, so only (125, 225)
    # is refined (150, 175, 200): 8 of 16 positions probed, the rest imputed, all exact.
    def step(t):
        return 5 if t >= 200 else 0

    full, probed, (matches, imputed) = _adaptive(400, 25, step)
    assert full[0] == 25 and len(full) == 16
    assert sorted(probed) == [25, 125, 150, 175, 200, 225, 325, 400]
    assert matches == [step(t) for t in full]
    assert sum(imputed) == 8
    tau = summarize(Curve(full, 400, matches, 5), thetas=(0.8,))["tau_0.8"]
    assert tau == 200 / 400


def test_adaptive_schedule_committed_from_the_start_keeps_tau_stride_over_T():
    full, probed, (matches, imputed) = _adaptive(940, 30, lambda t: 5)
    # coarse: 30, 150, ..., 870 (every 4th of 31 strided positions) and 940: all pinned at 1
    assert sorted(probed) == list(range(30, 931, 120)) + [940]
    assert matches == [5] * 32
    assert summarize(Curve(full, 940, matches, 5), thetas=(0.8,))["tau_0.8"] == 30 / 940
