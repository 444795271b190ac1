"""Multiple-choice bookkeeping of a probe (pure): the order a prompt shows a sample's choices in,
and what a target or a selected answer means across prompts that order them differently.

Inspect's convention (``multiple_choice()``, ``choice()``, ``Sample.choices``):

- a target's letters index the sample's choices in *dataset order* ("A" = the sample's first
  choice; a dataset shuffled with ``shuffle_choices`` has its targets remapped to its new order);
- a solver that shuffles at solve time (``multiple_choice(shuffle=...)``) reorders
  ``state.choices``; each choice keeps its ``original_position`` (its dataset position);
- the prompt names choices by their *shown* position (A = the first choice shown), so a letter
  the model writes is read in the shown order, and ``choice()`` maps the chosen choice back to
  its ``original_position`` before comparing it with the target.

So a forced letter means "the choice shown at that letter in the prompt it was forced under";
the letter that is correct there is :func:`shown_letters` of that prompt's target and choices.
"""

from __future__ import annotations

import string
from collections.abc import Sequence

from pydantic import BaseModel

LETTERS = string.ascii_uppercase
"""The letters choices are named by (A = the first shown)."""
ALPHABET: tuple[str, ...] = tuple(LETTERS)
"""The letters a forced answer can name without choices (a leading capital letter)."""


class ShownChoice(BaseModel, frozen=True):
    """One choice as a prompt shows it: its text and its position in the sample's dataset order
    (list index = the shown position)."""

    value: str
    original_position: int


def choice_letters(choices: Sequence[ShownChoice] | None) -> tuple[str, ...]:
    """The letters a prompt names its choices by (A, B, ... in shown order); without choices,
    every capital letter (:data:`ALPHABET`)."""
    return ALPHABET[: len(choices)] if choices else ALPHABET


def target_positions(target: Sequence[str]) -> list[int] | None:
    """Dataset positions named by a target's letters, sorted: ``["C"]`` -> [2],
    ``["A, C"]`` or ``["A", "C"]`` -> [0, 2]; None when a token is not a single letter."""
    tokens = [tok for part in target for tok in part.replace(",", " ").split()]
    if not tokens or any(len(tok) != 1 or tok.upper() not in LETTERS for tok in tokens):
        return None
    return sorted({LETTERS.index(tok.upper()) for tok in tokens})


def _joined(positions: Sequence[int]) -> str:
    return ", ".join(LETTERS[p] for p in sorted(set(positions)))


def shown_letters(target: Sequence[str], choices: Sequence[ShownChoice]) -> str | None:
    """The letters under which a prompt showing ``choices`` (in that order) lists the target's
    choices: for each dataset position p the target names, the letter of the shown index i with
    ``choices[i].original_position == p``; sorted, ", "-joined. None when the target is not
    letters or names a position no shown choice has."""
    positions = target_positions(target)
    if positions is None:
        return None
    shown = {c.original_position: i for i, c in enumerate(choices)}
    if any(p not in shown for p in positions):
        return None
    return _joined([shown[p] for p in positions])


def dataset_letters(
    selected: Sequence[ShownChoice], reference: Sequence[ShownChoice]
) -> str | None:
    """Selected choices named by the *reference* sample's dataset letters: for each selected
    choice, the reference choice with the same value, lettered by its ``original_position``;
    sorted, ", "-joined. None when nothing is selected or a selected value is not among the
    reference's choices.

    With ``reference`` = the choices the selection was made among, this is the letter
    ``choice()`` reports as ``Score.answer``; with the choices of another prompt for the same
    question, it names the same choices in that sample's letters, so answers forced under
    differently ordered prompts compare by the choices they pick."""
    if not selected:
        return None
    position: dict[str, int] = {}
    for c in reference:
        position.setdefault(c.value, c.original_position)
    if any(c.value not in position for c in selected):
        return None
    return _joined([position[c.value] for c in selected])
