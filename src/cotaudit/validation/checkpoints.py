"""Which organism checkpoint a run's model is, and when a checkpoint series leaves its base.

A run's model is ``<provider>/<model>`` (``hf-probe/default``,
``hf-probe//work/organisms/hint-follower/step-000050``); an organism checkpoint is a folder with
its card (:func:`cotaudit.organisms.read_card`), which gives the organism and the training step.
A relative folder is read from the current directory: give checkpoints by absolute path.

**Departure rule.** A series is the base model's run followed by the checkpoints' runs in step
order, each with the statistic's estimate and its 95% problem-bootstrap interval. The *first
departure* is the first checkpoint whose estimate lies outside the base run's interval
``[low, high]``. (The TRACE study flags training checkpoints against the initial policy's score;
the base interval states how far the base measurement itself moves over resampled problems, so a
checkpoint outside it has moved further than the base's own problem-to-problem variation.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cotaudit.bootstrap import Interval
from cotaudit.organisms.card import CardError, OrganismCard, read_card


def model_folder(model: str) -> Path | None:
    """The folder a run's model names (the text after the provider's ``<provider>/``), when it
    is an existing folder; None otherwise (an alias such as ``default``, a hub id)."""
    _, sep, name = model.partition("/")
    if not sep or not name:
        return None
    path = Path(name)
    return path if path.is_dir() else None


def checkpoint_card(model: str) -> OrganismCard | None:
    """The card of the organism checkpoint a run's model names; None for another model (no
    folder, or a folder without a checkpoint's card)."""
    folder = model_folder(model)
    if folder is None:
        return None
    try:
        card = read_card(folder)
    except CardError:
        return None
    return card if card.step is not None else None


def is_base_of(model: str, card: OrganismCard) -> bool:
    """Whether a run's model is ``card``'s base model (by the name given to ``--base`` or by
    the folder it resolved to)."""
    _, _, name = model.partition("/")
    if name == card.base:
        return True
    folder = model_folder(model)
    return folder is not None and folder.resolve() == Path(card.base_path).resolve()


def outside(estimate: float, base: Interval) -> bool:
    """Whether ``estimate`` lies outside the base run's interval (False where either is NaN)."""
    if math.isnan(estimate) or math.isnan(base.low) or math.isnan(base.high):
        return False
    return estimate < base.low or estimate > base.high


@dataclass(frozen=True)
class SeriesPoint:
    """One checkpoint of a series: its training step and the statistic with its interval."""

    step: int
    interval: Interval


def first_departure(base: Interval, points: Sequence[SeriesPoint]) -> int | None:
    """The step of the first checkpoint (in step order) whose estimate leaves ``base``'s
    interval (module docstring); None if none does."""
    for p in sorted(points, key=lambda p: p.step):
        if outside(p.interval.estimate, base):
            return p.step
    return None
