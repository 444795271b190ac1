from cotaudit.schedule import coarse_positions, fill_schedule, refinement_positions


def test_coarse_positions_keep_ends():
    # full: 0,30,...,300 and 310 -> coarse every 4th: 0,120,240 plus T
    assert coarse_positions(310, 30) == [0, 120, 240, 310]


def test_refine_only_where_ambiguous():
    full = [0, 30, 60, 90, 120, 150, 180, 210, 240]
    coarse = [0, 120, 240]
    # [0,120] pinned at 0 -> skipped; [120,240] goes 0 -> 1 -> refined
    assert refinement_positions(full, coarse, {0: 0.0, 120: 0.0, 240: 1.0}) == [150, 180, 210]
    # both ends 0.4: ambiguous even though equal
    assert refinement_positions(full, coarse, {0: 0.4, 120: 0.4, 240: 0.4}) == [30, 60, 90, 150, 180, 210]


def test_fill_imputes_pinned_intervals():
    full = [0, 30, 60, 90, 120]
    matches, imputed = fill_schedule(full, {0: 5, 120: 5})
    assert matches == [5, 5, 5, 5, 5]
    assert imputed == [False, True, True, True, False]
