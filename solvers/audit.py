"""The audit trail of a probe sweep in the sample's Inspect transcript.

One span (:func:`probe_span`, name ``probe sweep``, type ``probe``) holds a sample's sweep; in
it, per prompt swept, an info event with its header, then the model events of engines whose
requests go through Inspect's ``generate`` (the assistant-prefill path of
:class:`cotaudit.engine.inspect_prefill.InspectPrefillEngine`; the local engines and a server's
completions endpoint make none), then one info event per cut (the exact estimator's reading of
a prompt likewise: its header, then one event per cut, :func:`score_and_record`). The generic
probe's task scorer
adds, per prompt, a span ``probe verdicts`` (type ``probe``) with one info event per cut: its
verification of the answers. The records are :mod:`cotaudit.probing.audit`'s; each event's
``source`` is :func:`cotaudit.probing.audit.label` of its record (``probe own t=30: 2/5
match``), the event's title in ``inspect view``.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.log import transcript
from inspect_ai.util import span

from cotaudit.engine.base import ProbeEngine
from cotaudit.probing.audit import (
    PREFIX_END_TOKENS,
    Judge,
    cut_record,
    exact_record,
    label,
    sweep_header,
    verdict_record,
)
from cotaudit.probing.exact import ExactPlan, ExactPoint
from cotaudit.probing.sweep import Prefixes, force_answers, score_exact

SPAN_NAME = "probe sweep"
SPAN_TYPE = "probe"
VERDICT_SPAN_NAME = "probe verdicts"


def probe_span() -> AbstractAsyncContextManager[None]:
    """The span a sample's probe sweep is recorded in."""
    return span(SPAN_NAME, type=SPAN_TYPE)


def verdict_span() -> AbstractAsyncContextManager[None]:
    """The span a task scorer's verification of one prompt's forced answers is recorded in."""
    return span(VERDICT_SPAN_NAME, type=SPAN_TYPE)


def note(text: str) -> None:
    """A plain-text info event in the sweep (why nothing was probed)."""
    transcript().info(text, source="probe")


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
    judge: Judge | None = None,
) -> list[list[str]]:
    """:func:`cotaudit.probing.sweep.force_answers` after ``prefixes``, recorded: the sweep's
    header, the events the engine makes, then one event per cut (:func:`_cut_places`; ``judge``
    parses each answer and gives its verdict)."""
    _record_header(prefixes, heading, k=k, temperature=temperature, max_tokens=max_tokens)
    rows = await force_answers(
        engine, prefixes, k=k, max_tokens=max_tokens, temperature=temperature, seed=seed
    )
    for at, row in zip(_cut_places(engine, prefixes, heading), rows, strict=True):
        _info(cut_record(answers=row, judge=judge, **at))
    return rows


async def score_and_record(
    engine: ProbeEngine,
    prefixes: Prefixes,
    heading: SweepHeading,
    plan: ExactPlan,
    *,
    temperature: float,
    max_tokens: int,
) -> list[ExactPoint]:
    """:func:`cotaudit.probing.sweep.score_exact` after ``prefixes``, recorded as
    :func:`force_and_record` records sampled answers (its header has no k)."""
    _record_header(prefixes, heading, k=None, temperature=temperature, max_tokens=max_tokens)
    points = await score_exact(engine, prefixes, plan, temperature=temperature)
    for at, point in zip(_cut_places(engine, prefixes, heading), points, strict=True):
        _info(exact_record(point=point, **at))
    return points


def _record_header(
    prefixes: Prefixes,
    heading: SweepHeading,
    *,
    k: int | None,
    temperature: float,
    max_tokens: int,
) -> None:
    """The info event heading one prompt's sweep (:func:`~cotaudit.probing.audit.sweep_header`;
    k None for the exact estimator's)."""
    _info(
        sweep_header(
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
    )


def _cut_places(
    engine: ProbeEngine, prefixes: Prefixes, heading: SweepHeading
) -> list[dict[str, Any]]:
    """Per cut, in order, the fields that place its event: ``context``, ``t`` = cut - offset,
    ``offset``, ``prefix_text`` and ``whole_prefix`` (:func:`_prefix_end`)."""
    places = []
    for c in prefixes.cuts:
        text, whole = _prefix_end(engine, prefixes.token_ids, c)
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


def record_verdicts(
    context: str,
    positions: Sequence[int],
    canonical: Sequence[Sequence[Any]],
    values: Sequence[Sequence[float]],
    reference: Any = None,
) -> None:
    """One info event per cut with a task scorer's verification of its answers (``reference``:
    what a match is, see :func:`cotaudit.probing.audit.verdict_record`)."""
    for t, row, vals in zip(positions, canonical, values, strict=True):
        _info(verdict_record(context=context, t=t, canonical=row, values=vals, reference=reference))


def _prefix_end(engine: ProbeEngine, token_ids: Sequence[int], cut: int) -> tuple[str, bool]:
    """The decoded last :data:`PREFIX_END_TOKENS` tokens before ``cut``, and whether that is
    the whole prefix."""
    first = max(cut - PREFIX_END_TOKENS, 0)
    return engine.detokenize(token_ids[first:cut]), first == 0


def _info(record: dict[str, Any]) -> None:
    transcript().info(record, source=label(record))
