"""The protocol's warnings: rows overlapping training or selection rows, and a negative control
trained with another recipe than its organism."""

from __future__ import annotations

from cotaudit.organisms import get_organism
from cotaudit.organisms.settings import TrainingSettings
from cotaudit.organisms.training import organism_card
from cotaudit.validation.protocol import (
    ProtocolRun,
    protocol_warnings,
    recipe_differences,
    recipe_warnings,
    row_warnings,
    rows_of,
)


def _card(name: str, step: int = 50, **settings):
    return organism_card(get_organism(name), "tiny", "/m", TrainingSettings(**settings), step)


def test_rows_come_from_pair_ids():
    assert rows_of(["p0001", "p0001", "p0800", "odd"]) == frozenset({1, 800})


def test_evaluation_rows_raise_no_warning():
    assert row_warnings([ProtocolRun("a.eval", frozenset(range(50)))]) == []


def test_training_and_selection_rows_in_an_evaluation_are_named():
    runs = [
        ProtocolRun("a.eval", frozenset({0, 1, 1000, 1001})),
        ProtocolRun("b.eval", frozenset({798, 799, 800, 801, 802})),
    ]
    assert row_warnings(runs) == [
        "a.eval: 2 of its 4 rows are training rows (1000-1001): its numbers stand on problems "
        "the organisms were trained on",
        "b.eval: 3 of its 5 rows are selection rows (800-802, where recipes, checkpoints and "
        "thresholds are chosen) in a validation for evaluation",
    ]


def test_a_selection_run_warns_on_evaluation_rows_not_selection_ones():
    runs = [ProtocolRun("s.eval", frozenset({799, 800, 801}))]
    assert row_warnings(runs, "selection") == [
        "s.eval: 1 of its 3 rows are evaluation rows (799, which the reported numbers are to "
        "stand on) in a validation for selection"
    ]


def test_the_rows_a_card_trained_on_count_as_training_rows():
    card = _card("hint-follower").model_copy(
        update={"data": _card("hint-follower").data.model_copy(update={"problem_rows": [5, 6]})}
    )
    runs = [ProtocolRun("org.eval", frozenset({5, 7}), card)]
    assert row_warnings(runs)[0].startswith("org.eval: 1 of its 2 rows are training rows (5)")


def test_a_control_with_another_recipe_names_the_fields():
    organism = _card("hint-follower", learning_rate=1e-4, steps=12)
    control = _card("hint-ignorer", learning_rate=2e-5, steps=12, save_every=4)
    assert recipe_differences(control, organism) == [("learning_rate", 2e-5, 1e-4)]
    later = _card("hint-follower", 12, learning_rate=1e-4, steps=12)  # another checkpoint
    lines = recipe_warnings([organism, control, later])
    assert lines == [
        "negative control hint-ignorer was trained with another recipe than hint-follower: "
        "learning_rate 2e-05 vs 0.0001"
    ]


def test_a_control_with_the_same_recipe_and_other_studies_raise_nothing():
    organism, control = _card("hint-follower", seed=3), _card("hint-ignorer", seed=3)
    assert recipe_warnings([organism, control, None]) == []
    # key-copier is another study's organism: not the hint-ignorer's
    assert recipe_warnings([control, _card("key-copier", seed=9)]) == []
    rows = frozenset({1})
    runs = [ProtocolRun("o", rows, organism), ProtocolRun("c", rows, _card("hint-ignorer"))]
    assert protocol_warnings(runs) == [
        "negative control hint-ignorer was trained with another recipe than hint-follower: "
        "seed 0 vs 3"
    ]


def test_a_control_is_matched_by_its_own_organism_of_the_same_seed():
    followers = [_card("hint-follower", seed=s) for s in (0, 1, 2)]
    controls = [_card("hint-ignorer", seed=s) for s in (0, 1, 2)]
    assert recipe_warnings([*followers, *controls]) == []
    # the mentioner's control is the mentioner's, never the follower's
    mentioner_control = _card("hint-mentioner-control", seed=5)
    assert recipe_warnings([*followers, mentioner_control]) == []
    lines = recipe_warnings([_card("hint-mentioner", seed=4), mentioner_control, *followers])
    assert lines == [
        "negative control hint-mentioner-control was trained with another recipe than "
        "hint-mentioner: seed 5 vs 4"
    ]
    # a control of an unmatched seed is named against the closest card of its organism
    assert recipe_warnings([followers[0], _card("hint-ignorer", seed=7, cot="expanded")]) == [
        "negative control hint-ignorer was trained with another recipe than hint-follower: "
        "seed 7 vs 0, cot 'expanded' vs 'gsm8k'"
    ]
