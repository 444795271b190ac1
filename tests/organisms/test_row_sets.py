"""The three disjoint row sets of the vendored split, as the organisms' cards record them."""

from __future__ import annotations

import json

import pytest

from cotaudit.datasets.gsm8k import load_problems
from cotaudit.organisms import (
    EVALUATION_ROWS,
    ROW_SETS,
    SELECTION_ROWS,
    TRAINING_ROWS,
    get_organism,
    read_card,
    row_of,
    row_set_of,
    selection_problems,
    training_problems,
    write_card,
)
from cotaudit.organisms.card import organism_card
from cotaudit.organisms.rows import SPLIT_ROWS, describe_rows
from cotaudit.organisms.settings import TrainingSettings


def test_the_row_sets_are_disjoint_and_cover_the_split():
    assert (TRAINING_ROWS, SELECTION_ROWS, EVALUATION_ROWS) == (
        range(1000, 1319),
        range(800, 1000),
        range(0, 800),
    )
    rows = [r for rs in ROW_SETS.values() for r in rs]
    assert sorted(rows) == list(range(SPLIT_ROWS)) == [p.index for p in load_problems().items]
    assert [row_set_of(r) for r in (0, 799, 800, 999, 1000, 1318, 1319)] == [
        "evaluation",
        "evaluation",
        "selection",
        "selection",
        "training",
        "training",
        None,
    ]


def test_a_pair_id_names_its_row():
    assert [row_of(p) for p in ("p0000", "p0042", "p1318", "x0001", "p", "p12a")] == [
        0,
        42,
        1318,
        None,
        None,
        None,
    ]
    assert describe_rows([3, 1, 2, 800, 1000, 1001]) == "1-3, 800, 1000-1001"
    assert describe_rows([]) == "none"


def test_organisms_train_on_training_rows_and_are_chosen_on_selection_rows():
    assert [p.index for p in training_problems()] == list(TRAINING_ROWS)
    assert [p.index for p in selection_problems(3)] == [800, 801, 802]
    assert [p.index for p in selection_problems()] == list(SELECTION_ROWS)
    with pytest.raises(ValueError, match="1..200"):
        selection_problems(201)


def test_the_card_records_the_row_sets_and_a_card_without_them_still_reads(tmp_path):
    card = organism_card(get_organism("hint-follower"), "tiny", "/m", TrainingSettings(), 50)
    assert card.data.row_sets == {
        "training": [1000, 1318],
        "selection": [800, 999],
        "evaluation": [0, 799],
    }
    assert card.data.problem_rows == list(TRAINING_ROWS)
    write_card(tmp_path, card)
    assert read_card(tmp_path) == card
    older = json.loads((tmp_path / "organism.json").read_text())
    del older["data"]["row_sets"]
    (tmp_path / "organism.json").write_text(json.dumps(older))
    assert read_card(tmp_path).data.row_sets is None
