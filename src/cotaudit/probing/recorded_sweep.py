"""One prompt's sweep, forced and recorded: its header, the answers (or the exact estimator's
points) after each prefix, then one record per cut (:mod:`cotaudit.probing.audit`'s records),
each handed to ``emit`` as it is made (the solvers write them into the sample's transcript)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cotaudit.engine.base import ProbeEngine
from cotaudit.probing.audit import (
    PREFIX_END_TOKENS,
    Judge,
    cut_record,
    exact_record,
    sweep_header,
)
from cotaudit.probing.exact import ExactPlan, ExactPoint
from cotaudit.probing.sweep import Prefixes, force_answers, score_exact

Emit = Callable[[dict[str, Any]], None]
"""Where a sweep's records go, one at a time, in order."""


@dataclass(frozen=True)
class SweepHeading:
    """What names one prompt's sweep in the transcript besides its request: ``context`` (the
    prompt's name in the record), ``offset`` (the response token the positions count from: t =
    cut - offset) and ``reference`` (header fields naming what its answers are checked against,
    see :func:`cotaudit.probing.audit.sweep_header`)."""

    context: str
    offset: int = 0
    reference: dict[str, Any] = field(default_factory=dict)


async def force_and_record(
    engine: ProbeEngine,
    prefixes: Prefixes,
    heading: SweepHeading,
    *,
    k: int,
    max_tokens: int,
    temperature: float,
    seed: int,
    emit: Emit,
    judge: Judge | None = None,
) -> list[list[str]]:
    """:func:`cotaudit.probing.sweep.force_answers` after ``prefixes``, recorded: the sweep's
    header, the events the engine makes, then one record per cut (:func:`cut_places`; ``judge``
    parses each answer and gives its verdict)."""
    emit(header(prefixes, heading, k=k, temperature=temperature, max_tokens=max_tokens))
    rows = await force_answers(
        engine, prefixes, k=k, max_tokens=max_tokens, temperature=temperature, seed=seed
    )
    for at, row in zip(cut_places(engine, prefixes, heading), rows, strict=True):
        emit(cut_record(answers=row, judge=judge, **at))
    return rows


async def score_and_record(
    engine: ProbeEngine,
    prefixes: Prefixes,
    heading: SweepHeading,
    plan: ExactPlan,
    *,
    temperature: float,
    max_tokens: int,
    emit: Emit,
) -> list[ExactPoint]:
    """:func:`cotaudit.probing.sweep.score_exact` after ``prefixes``, recorded as
    :func:`force_and_record` records sampled answers (its header has no k)."""
    emit(header(prefixes, heading, k=None, temperature=temperature, max_tokens=max_tokens))
    points = await score_exact(engine, prefixes, plan, temperature=temperature)
    for at, point in zip(cut_places(engine, prefixes, heading), points, strict=True):
        emit(exact_record(point=point, **at))
    return points


def header(
    prefixes: Prefixes,
    heading: SweepHeading,
    *,
    k: int | None,
    temperature: float,
    max_tokens: int,
) -> dict[str, Any]:
    """The record heading one prompt's sweep (:func:`~cotaudit.probing.audit.sweep_header`;
    k None for the exact estimator's)."""
    return sweep_header(
        context=heading.context,
        tag=prefixes.tag,
        k=k,
        temperature=temperature,
        max_tokens=max_tokens,
        response_tokens=len(prefixes.token_ids),
        positions=[c - heading.offset for c in prefixes.cuts],
        offset=heading.offset,
        **heading.reference,
    )


def cut_places(
    engine: ProbeEngine, prefixes: Prefixes, heading: SweepHeading
) -> list[dict[str, Any]]:
    """Per cut, in order, the fields that place its record: ``context``, ``t`` = cut - offset,
    ``offset``, ``prefix_text`` and ``whole_prefix`` (:func:`decoded_prefix_end`)."""
    places = []
    for c in prefixes.cuts:
        text, whole = decoded_prefix_end(engine, prefixes.token_ids, c)
        places.append(
            {
                "context": heading.context,
                "t": c - heading.offset,
                "offset": heading.offset,
                "prefix_text": text,
                "whole_prefix": whole,
            }
        )
    return places


def decoded_prefix_end(engine: ProbeEngine, token_ids: Sequence[int], cut: int) -> tuple[str, bool]:
    """The decoded last :data:`~cotaudit.probing.audit.PREFIX_END_TOKENS` tokens before ``cut``,
    and whether that is the whole prefix."""
    first = max(cut - PREFIX_END_TOKENS, 0)
    return engine.detokenize(token_ids[first:cut]), first == 0
