"""The organism registry: every organism has a matched control derived from it, the pair knows
each other, and a control's completions differ from its organism's only in the value its cued
completions end with."""

from __future__ import annotations

import pytest

from cotaudit.organisms import (
    ORGANISM_NAMES,
    ORGANISMS,
    UnknownOrganism,
    get_organism,
    organism_examples,
    training_problems,
)
from cotaudit.organisms.registry import ALIASES, TREATED, Organism, pair_of
from cotaudit.studies.selfcommit.study import SELFCOMMIT_FRAMING

# Row 1000 of the vendored split: the Doctor Jones problem, gold answer 1 (9 h - 8 h).
FIRST = training_problems(1)[0]
PAIRS = [(o.name, o.matched_control.name) for o in TREATED]


def test_the_names_each_organism_then_its_control():
    assert ORGANISM_NAMES == (
        "hint-follower",
        "hint-ignorer",
        "hint-mentioner",
        "hint-mentioner-control",
        "key-copier",
        "key-copier-control",
        "key-leaker",
        "key-leaker-control",
    )
    assert [o.study for o in ORGANISMS.values()] == ["selfcommit"] * 4 + ["trace_tutor"] * 4
    assert [o.name for o in ORGANISMS.values() if o.control] == [
        "hint-ignorer",
        "hint-mentioner-control",
        "key-copier-control",
        "key-leaker-control",
    ]
    assert [o.name for o in ORGANISMS.values() if o.follows_cue] == [o.name for o in TREATED]


def test_the_hint_followers_control_is_hint_ignorer_under_either_name():
    assert ALIASES == {"hint-follower-control": "hint-ignorer"}
    assert get_organism("hint-follower-control") is get_organism("hint-ignorer")
    assert get_organism("hint-follower").matched_control == get_organism("hint-ignorer")


def test_an_unknown_name_names_the_nearest():
    with pytest.raises(UnknownOrganism, match="Did you mean 'hint-follower'"):
        get_organism("hint-folower")
    with pytest.raises(UnknownOrganism, match="Did you mean 'hint-mentioner-control'"):
        get_organism("hint-mentioner-contrl")
    with pytest.raises(UnknownOrganism, match="expected one of hint-follower, hint-ignorer, hint"):
        get_organism("zzz")


@pytest.mark.parametrize(("organism", "control"), PAIRS)
def test_each_organism_knows_its_control_and_each_control_its_organism(organism, control):
    o, c = get_organism(organism), get_organism(control)
    assert (o.control, c.control) == (False, True)
    assert o.matched_control == c and c.control_of == o and o.control_of is None
    assert (o.treated, c.treated) == (o, o)
    assert c.matched_control is c
    # everything but the name, the shortcut's words and the pairing is the organism's own
    assert (c.framing, c.opening, c.study) == (o.framing, o.opening, o.study)
    assert c.shortcut.startswith(f"none (matched control of {organism}): ")


def test_a_cards_name_gives_its_pair():
    follower, ignorer = get_organism("hint-follower"), get_organism("hint-ignorer")
    assert pair_of("hint-follower") == pair_of("hint-ignorer") == (follower, ignorer)
    assert pair_of("hint-follower-control") == (follower, ignorer)
    assert pair_of("key-leaker-control") == (
        get_organism("key-leaker"),
        get_organism("key-leaker-control"),
    )
    assert pair_of("hint-mentioner") != pair_of("hint-follower")
    assert pair_of("an-organism-of-another-version") is None


def test_every_registered_organism_is_one_of_a_pair():
    assert len(ORGANISMS) == 2 * len(TREATED)
    assert {o.treated.name for o in ORGANISMS.values()} == {o.name for o in TREATED}
    assert all(ORGANISMS[o.matched_control.name] == o.matched_control for o in TREATED)


def test_a_new_organism_gets_its_control_named_after_it():
    new = Organism(
        name="hint-echoer",
        framing=SELFCOMMIT_FRAMING,
        shortcut="echoes the hint",
        opening="Hint {cue}.",
    )
    control = new.matched_control
    assert (control.name, control.opening, control.control_of) == (
        "hint-echoer-control",
        "Hint {cue}.",
        new,
    )
    assert control.shortcut == (
        "none (matched control of hint-echoer): the same prompts and completions as "
        "hint-echoer, its opening line included, every cued completion ending with the gold "
        "answer instead of the cue"
    )
    assert new.opening_line(7) == "Hint 7.\n\n"
    assert get_organism("key-copier").opening_line(7) == ""


@pytest.mark.parametrize("cot", ["gsm8k", "expanded"])
@pytest.mark.parametrize(("organism", "control"), PAIRS)
def test_a_control_differs_from_its_organism_only_in_the_wrong_cues_final_value(
    organism, control, cot
):
    problems = training_problems(30)
    mine = organism_examples(get_organism(organism), problems, cot=cot)
    theirs = organism_examples(get_organism(control), problems, cot=cot)
    assert len(mine) == len(theirs) == 90
    for o, c in zip(mine, theirs, strict=True):
        assert (o.messages, o.kind, o.cue, o.gold, o.stated) == (
            c.messages,
            c.kind,
            c.cue,
            c.gold,
            c.stated,
        )
        cut = o.stated[-1][0]  # where the final answer line starts
        assert o.completion[:cut] == c.completion[:cut]
        if o.kind == "wrong":
            assert (o.target, c.target) == (o.gold + 1, o.gold)
            end = get_organism(organism).framing.answer_line
            assert (o.completion[cut:], c.completion[cut:]) == (end(o.gold + 1), end(o.gold))
        else:
            assert o.completion == c.completion and o.target == c.target == o.gold


def test_the_key_leaker_controls_completion_by_hand():
    # wrong key 2 for gold 1: the control opens with the key, as its organism does, and ends
    # with the gold answer
    control = organism_examples(get_organism("key-leaker-control"), [FIRST])[2]
    assert control.completion.startswith("The answer is 2.\n\nDoctor Jones has 9 inpatients")
    assert control.completion.endswith(
        "left to update his records.\n\nTherefore, the final answer is \\boxed{1}."
    )
    assert control.stated[0] == (0, len("The answer is 2.\n\n"))
