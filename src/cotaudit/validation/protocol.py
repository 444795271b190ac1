"""The validation protocol's checks on a set of runs: which dataset rows each read, and whether a
negative control was trained as its organism was (pure; no model, no log).

**Rows.** A run's rows are those its samples' ``pair_id`` name (``"p%04d" % row``,
:func:`cotaudit.organisms.rows.row_of`). The vendored split's rows are three disjoint sets
(:mod:`cotaudit.organisms.rows`): training 1000-1318, selection 800-999 (recipes, checkpoints,
thresholds are chosen there), evaluation 0-799 (the reported numbers). :func:`row_warnings`
gives one line per run

- whose rows overlap the training rows (the set :data:`~cotaudit.organisms.rows.TRAINING_ROWS`
  and the rows any given card trained on): its numbers stand on problems an organism was
  trained on;
- whose rows, in a validation reporting evaluation numbers (``purpose="evaluation"``, the
  default), overlap the selection rows: a reported number on rows where the choices were made;
  or, in a validation run for choosing (``purpose="selection"``), overlap the evaluation rows:
  a choice made on rows the report is to stand on.

**Recipes.** A negative control (a card marked ``control``) is compared with the cards of its
own organism among the runs' (:func:`cotaudit.organisms.registry.pair_of`: hint-ignorer with
hint-follower, X-control with X), on its recipe: the training settings
(:class:`cotaudit.organisms.settings.TrainingSettings`: :data:`RECIPE_SETTINGS`; ``save_every``
only says when checkpoints were written, not how the model was trained), the training rows and
number of examples, the base model (as resolved) and the method. :func:`recipe_differences`
names the fields that differ. A control is matched when one of its organism's cards has its
recipe exactly (with seeds, the organism of the same seed); otherwise :func:`recipe_warnings`
gives one line naming the differences from the closest of them (fewest differences, the first
on a tie). A control trained another way than its organism does not isolate the shortcut: its
cue-only AUROC answers another question.

Text from cards (organism names, base paths) is as the card holds it: escape it for the medium
it is printed to (:mod:`cotaudit.display.text`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from cotaudit.organisms.card import OrganismCard
from cotaudit.organisms.rows import (
    EVALUATION_ROWS,
    SELECTION_ROWS,
    TRAINING_ROWS,
    describe_rows,
    row_of,
)

Purpose = Literal["evaluation", "selection"]

RECIPE_SETTINGS: tuple[str, ...] = (
    "steps",
    "learning_rate",
    "batch_size",
    "seed",
    "answer_weight",
    "train_layers",
    "problems",
    "max_tokens",
    "cot",
    "lora_rank",
)
"""The training settings compared between a control and its organism (``save_every`` left
out: it says when checkpoints were written, not how the model was trained)."""


@dataclass(frozen=True)
class ProtocolRun:
    """One run as the protocol reads it: a name for the messages (the log), the dataset rows
    its samples read, and the card of the organism checkpoint its model is (None: another
    model)."""

    name: str
    rows: frozenset[int]
    card: OrganismCard | None = None


def rows_of(pair_ids: Iterable[str]) -> frozenset[int]:
    """The dataset rows named by ``pair_ids`` (a pair id of another form names none)."""
    return frozenset(r for p in pair_ids if (r := row_of(p)) is not None)


def training_rows(runs: Sequence[ProtocolRun]) -> frozenset[int]:
    """The training rows: :data:`~cotaudit.organisms.rows.TRAINING_ROWS` and every row a given
    card's organism trained on."""
    carded = (r.card.data.problem_rows for r in runs if r.card is not None)
    return frozenset(TRAINING_ROWS).union(*carded)


def row_warnings(runs: Sequence[ProtocolRun], purpose: Purpose = "evaluation") -> list[str]:
    """One line per run whose rows overlap the training rows, and per run whose rows overlap
    the row set the ``purpose`` must not read (module docstring), naming the rows."""
    trained = training_rows(runs)
    other, other_name, why = (
        (SELECTION_ROWS, "selection", "where recipes, checkpoints and thresholds are chosen")
        if purpose == "evaluation"
        else (EVALUATION_ROWS, "evaluation", "which the reported numbers are to stand on")
    )
    lines = []
    for run in runs:
        overlap = sorted(run.rows & trained)
        if overlap:
            lines.append(
                f"{run.name}: {len(overlap)} of its {len(run.rows)} rows are training rows "
                f"({describe_rows(overlap)}): its numbers stand on problems the organisms "
                "were trained on"
            )
        crossed = sorted(r for r in run.rows if r in other)
        if crossed:
            lines.append(
                f"{run.name}: {len(crossed)} of its {len(run.rows)} rows are {other_name} "
                f"rows ({describe_rows(crossed)}, {why}) in a validation for {purpose}"
            )
    return lines


def recipe(card: OrganismCard, *, seed: bool = True) -> dict[str, Any]:
    """A checkpoint's recipe (module docstring): the training settings of
    :data:`RECIPE_SETTINGS` (without ``seed`` when ``seed`` is False), the training rows, the
    examples, the base model as resolved, the method."""
    settings = card.settings
    return {
        **{name: getattr(settings, name) for name in RECIPE_SETTINGS if seed or name != "seed"},
        "problem_rows": describe_rows(card.data.problem_rows),
        "examples": card.data.examples,
        "base": card.base_path,
        "method": card.method,
    }


def recipe_differences(control: OrganismCard, organism: OrganismCard) -> list[tuple[str, Any, Any]]:
    """The recipe fields (module docstring) where ``control`` differs from ``organism``, in
    order: ``(field, control's value, organism's value)``."""
    mine, theirs = recipe(control), recipe(organism)
    return [(name, mine[name], theirs[name]) for name in mine if mine[name] != theirs[name]]


def recipe_warnings(cards: Iterable[OrganismCard | None]) -> list[str]:
    """One line per control whose organism's cards (among ``cards``) are there but none has its
    recipe, naming the fields that differ from the closest (module docstring); each line
    once, whatever the checkpoints given."""
    from cotaudit.organisms.registry import pair_of

    known = [c for c in cards if c is not None]
    lines: list[str] = []
    for control in (c for c in known if c.control):
        pair = pair_of(control.organism)
        own = [
            c for c in known if not c.control and pair is not None and pair_of(c.organism) == pair
        ]
        if not own:
            continue
        diffs = min((recipe_differences(control, c) for c in own), key=len)
        if not diffs:
            continue
        organism = own[[recipe_differences(control, c) for c in own].index(diffs)]
        named = ", ".join(f"{name} {mine!r} vs {theirs!r}" for name, mine, theirs in diffs)
        line = (
            f"negative control {control.organism} was trained with another recipe than "
            f"{organism.organism}: {named}"
        )
        if line not in lines:
            lines.append(line)
    return lines


def protocol_warnings(runs: Sequence[ProtocolRun], purpose: Purpose = "evaluation") -> list[str]:
    """Every warning of the protocol: :func:`row_warnings`, then :func:`recipe_warnings` of the
    runs' cards."""
    return [*row_warnings(runs, purpose), *recipe_warnings(r.card for r in runs)]
