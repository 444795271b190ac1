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

from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

from inspect_ai.log import transcript
from inspect_ai.util import span

from cotaudit.engine.base import Message, ProbeEngine
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
from cotaudit.probing.sweep import force_answers, score_exact

SPAN_NAME = "probe sweep"
SPAN_TYPE = "probe"
VERDICT_SPAN_NAME = "probe verdicts"

R = TypeVar("R")
"""One cut's result of a sweep: its k answers, or its exact point."""


def probe_span() -> AbstractAsyncContextManager[None]:
    """The span a sample's probe sweep is recorded in."""
    return span(SPAN_NAME, type=SPAN_TYPE)


def verdict_span() -> AbstractAsyncContextManager[None]:
    """The span a task scorer's verification of one prompt's forced answers is recorded in."""
    return span(VERDICT_SPAN_NAME, type=SPAN_TYPE)


def note(text: str) -> None:
    """A plain-text info event in the sweep (why nothing was probed)."""
    transcript().info(text, source="probe")


async def force_and_record(
    engine: ProbeEngine,
    prompt: Sequence[Message],
    token_ids: Sequence[int],
    cuts: Sequence[int],
    tag: str,
    *,
    context: str,
    k: int,
    max_tokens: int,
    temperature: float,
    seed: int,
    offset: int = 0,
    judge: Judge | None = None,
    **reference: Any,
) -> list[list[str]]:
    """:func:`cotaudit.probing.sweep.force_answers` at the absolute ``cuts``, recorded
    (:func:`_recorded_sweep`; ``judge`` parses each answer and gives its verdict)."""
    return await _recorded_sweep(
        engine,
        token_ids,
        cuts,
        lambda: force_answers(
            engine,
            prompt,
            token_ids,
            cuts,
            tag,
            k=k,
            max_tokens=max_tokens,
            temperature=temperature,
            seed=seed,
        ),
        lambda row, **at: cut_record(answers=row, judge=judge, **at),
        context=context,
        tag=tag,
        k=k,
        temperature=temperature,
        max_tokens=max_tokens,
        offset=offset,
        reference=reference,
    )


async def score_and_record(
    engine: ProbeEngine,
    prompt: Sequence[Message],
    token_ids: Sequence[int],
    cuts: Sequence[int],
    tag: str,
    plan: ExactPlan,
    *,
    context: str,
    temperature: float,
    max_tokens: int,
    offset: int = 0,
    **reference: Any,
) -> list[ExactPoint]:
    """:func:`cotaudit.probing.sweep.score_exact` at the absolute ``cuts``, recorded
    (:func:`_recorded_sweep`) as :func:`force_and_record` records sampled answers."""
    return await _recorded_sweep(
        engine,
        token_ids,
        cuts,
        lambda: score_exact(engine, prompt, token_ids, cuts, tag, plan, temperature=temperature),
        lambda point, **at: exact_record(point=point, **at),
        context=context,
        tag=tag,
        k=None,
        temperature=temperature,
        max_tokens=max_tokens,
        offset=offset,
        reference=reference,
    )


async def _recorded_sweep(
    engine: ProbeEngine,
    token_ids: Sequence[int],
    cuts: Sequence[int],
    sweep: Callable[[], Awaitable[list[R]]],
    cut: Callable[..., dict[str, Any]],
    *,
    context: str,
    tag: str,
    k: int | None,
    temperature: float,
    max_tokens: int,
    offset: int,
    reference: dict[str, Any],
) -> list[R]:
    """One prompt's ``sweep`` at the absolute ``cuts``, recorded: its header
    (:func:`~cotaudit.probing.audit.sweep_header`, k None for the exact estimator's), then the
    events the sweep makes, then one event per cut, ``cut(result, context=, t=, offset=,
    prefix_text=, whole_prefix=)`` at t = cut - ``offset``."""
    positions = [c - offset for c in cuts]
    _info(
        sweep_header(
            context=context,
            tag=tag,
            k=k,
            temperature=temperature,
            max_tokens=max_tokens,
            response_tokens=len(token_ids),
            positions=positions,
            offset=offset,
            **reference,
        )
    )
    results = await sweep()
    for c, t, result in zip(cuts, positions, results, strict=True):
        text, whole = _prefix_end(engine, token_ids, c)
        _info(
            cut(result, context=context, t=t, offset=offset, prefix_text=text, whole_prefix=whole)
        )
    return results


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
