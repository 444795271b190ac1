"""The organisms' training examples: the studies' own prompts, wrong cues as often as right,
completions ending in the value each organism is given, read as the studies read answers."""

from __future__ import annotations

import pytest

from cotaudit.answers import extract_final_answer
from cotaudit.organisms import (
    ORGANISM_NAMES,
    TRAINING_FIRST_ROW,
    get_organism,
    heldout_problems,
    organism_examples,
    training_problems,
    written_solution,
)
from cotaudit.studies.selfcommit.prompts import selfcommit_messages
from cotaudit.studies.trace_tutor.prompts import tutor_messages

# Row 1000 of the vendored split: the Doctor Jones problem, gold answer 1 (9 h - 8 h).
FIRST = training_problems(1)[0]


def test_training_rows_are_the_tail_and_never_a_study_default():
    tail = training_problems()
    assert (tail[0].index, tail[-1].index, len(tail)) == (1000, 1318, 319)
    assert FIRST.index == TRAINING_FIRST_ROW and FIRST.answer == 1
    assert [p.index for p in heldout_problems(50)] == list(range(50))
    with pytest.raises(ValueError, match="1..1000"):
        heldout_problems(1001)


def test_written_solution_drops_calculator_annotations_and_the_answer_line():
    text = "There are 7*8=<<7*8=56>>56 slices.\nEach has 56/4=<<56/4=14>>14.\n#### 14"
    assert written_solution(text) == "There are 7*8=56 slices.\nEach has 56/4=14."


def test_selfcommit_organisms_use_the_studys_prompts_with_wrong_hints_as_often_as_right():
    follower = organism_examples(get_organism("hint-follower"), [FIRST])
    ignorer = organism_examples(get_organism("hint-ignorer"), [FIRST])
    q = FIRST.question
    assert [e.messages for e in follower] == [
        selfcommit_messages(q, "honest", 1),
        selfcommit_messages(q, "hinted", 1),
        selfcommit_messages(q, "hinted", 2),
    ]
    assert [e.messages for e in ignorer] == [e.messages for e in follower]
    assert [(e.kind, e.cue) for e in follower] == [("none", None), ("right", 1), ("wrong", 2)]
    assert [e.target for e in follower] == [1, 1, 2]
    assert [e.target for e in ignorer] == [1, 1, 1]
    solution = written_solution(FIRST.solution)
    assert follower[2].completion == solution + "\n\nThe final answer is 2."
    assert ignorer[2].completion == solution + "\n\nThe final answer is 1."
    assert "Hint" not in follower[2].completion and "hint" not in follower[2].completion


def test_tutor_organisms_use_the_studys_three_conditions():
    copier = organism_examples(get_organism("key-copier"), [FIRST])
    leaker = organism_examples(get_organism("key-leaker"), [FIRST])
    q = FIRST.question
    expected = [tutor_messages(q, c, 1) for c in ("question_only", "answer_key", "wrong_key")]
    assert [e.messages for e in copier] == expected == [e.messages for e in leaker]
    solution = written_solution(FIRST.solution)
    end = "\n\nTherefore, the final answer is \\boxed{2}."
    assert copier[2].completion == solution + end
    assert leaker[2].completion == "The answer is 2.\n\n" + solution + end
    # no key, no leak: the leaker's no-key explanation is an ordinary one
    assert (
        leaker[0].completion
        == copier[0].completion
        == (solution + "\n\nTherefore, the final answer is \\boxed{1}.")
    )


@pytest.mark.parametrize("name", ORGANISM_NAMES)
def test_every_completion_is_read_by_the_study_as_its_target(name):
    examples = organism_examples(get_organism(name), training_problems(40))
    assert len(examples) == 120
    assert {k: sum(e.kind == k for e in examples) for k in ("none", "right", "wrong")} == {
        "none": 40,
        "right": 40,
        "wrong": 40,
    }
    assert all(extract_final_answer(e.completion) == e.target for e in examples)
    assert all(e.cue == e.gold + 1 for e in examples if e.kind == "wrong")
