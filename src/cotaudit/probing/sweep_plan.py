"""A probe's plan for one sample's sweep: the prompts its trace is swept under
(:class:`SweptPrompt`), how its cuts are forced (``cut``: one or more rounds of
:class:`Force`), and the record made of the sweep as run (:class:`Sweep`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any, Protocol

from cotaudit.engine.base import Message
from cotaudit.probing.audit import Judge
from cotaudit.probing.exact import Estimator, ExactPoint
from cotaudit.probing.forms import ExactReference
from cotaudit.probing.positions import Schedule
from cotaudit.probing.store_record import StoreRecord
from cotaudit.probing.think import TraceSplit
from cotaudit.probing.trace import Trace


@dataclass(frozen=True)
class SweptPrompt:
    """One prompt a trace is swept under: its ``name`` (its key in the record and the
    transcript), its messages, and what the transcript says of its answers: ``reference``
    (header fields naming what they are checked against) and ``judge`` (each answer's parsed
    value and verdict, for a solver that reads them; None: verified later by a scorer);
    ``exact``: what the exact estimator checks its answers against (None: not read exactly)."""

    name: str
    messages: list[Message]
    reference: dict[str, Any] = field(default_factory=dict)
    judge: Judge | None = None
    exact: ExactReference | None = None


@dataclass(frozen=True)
class Forced:
    """One round of cuts as forced: per prompt name, the k sampled answers at each position
    (``answers``; empty rows when the estimator samples none) and the exact estimator's points
    (``exact``; only for prompts read exactly)."""

    answers: dict[str, list[list[str]]]
    exact: dict[str, list[ExactPoint]]


class Force(Protocol):
    """Positions t -> the :class:`Forced` answers after prefix t at each (one
    :func:`~cotaudit.probing.recorded_sweep.force_and_record` /
    :func:`~cotaudit.probing.recorded_sweep.score_and_record` call per prompt: one header per
    prompt, estimator and round). ``closes_think``: the positions lie inside a think block the
    sweep's tag does not close (a recorded trajectory's step), so the closer is fed before the
    tag."""

    def __call__(self, positions: list[int], closes_think: bool = False) -> Awaitable[Forced]: ...


Cut = Callable[[int, Force], Awaitable[None]]
"""(length T of the span, force) -> forces the positions probed, in one or more rounds."""


@dataclass(frozen=True)
class Sweep:
    """One sample's sweep as run: the trace, its split, the span cut (``length`` tokens from
    token ``start`` of the response), the cut tag, whether the span was shortened to fit the
    context, every position forced (``probed``, in order over the rounds) and, per prompt name,
    the k answers at each (``answers[name][i]`` at ``probed[i]``; empty rows when the estimator
    samples none) and, for the prompts read exactly, the exact points (``exact[name][i]``); the
    ``estimator`` and the temperature the exact points were read at (``exact_temperature``);
    ``think_cuts``: the positions forced with the think closer before the tag (a trajectory's
    cuts inside a step's think block)."""

    trace: Trace
    split: TraceSplit
    start: int
    length: int
    tag: str
    context_truncated: bool
    probed: list[int]
    answers: dict[str, list[list[str]]]
    exact: dict[str, list[ExactPoint]]
    estimator: Estimator
    exact_temperature: float
    think_cuts: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class SweepPlan:
    """A probe's configuration for one sample: the prompts the trace is swept under, ``cut``
    (length T of the span, force) -> forces the positions probed, in one or more rounds, and
    ``record`` (the sweep) -> the record saved in the sample's store."""

    prompts: list[SweptPrompt]
    cut: Cut
    record: Callable[[Sweep], StoreRecord]


def at_schedule(schedule: Schedule) -> Cut:
    """A ``cut`` forcing, in one round, every position ``schedule`` probes on a span of T
    tokens."""

    async def cut(length: int, force: Force) -> None:
        await force(schedule.probed(length))

    return cut


def closing_think_blocks(schedule: Schedule, inside: Callable[[int], bool]) -> Cut:
    """A ``cut`` forcing every position ``schedule`` probes, in order, in runs of consecutive
    positions alike: those where ``inside(t)`` (the prefix ends inside a think block) with the
    think closer before the tag, the others without."""

    async def cut(length: int, force: Force) -> None:
        for closes, run in groupby(schedule.probed(length), key=inside):
            await force(list(run), closes_think=closes)

    return cut
