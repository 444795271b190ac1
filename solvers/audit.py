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
from typing import Any

from inspect_ai.log import transcript
from inspect_ai.util import span

from cotaudit.engine.base import Message, ProbeEngine
from cotaudit.probing.audit import (
    PREFIX_END_TOKENS,
    Judge,
    cut_record,
    exact_header,
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
    """:func:`cotaudit.probing.sweep.force_answers` at the absolute ``cuts``, recorded: the
    sweep's header first, then one event per cut (t = cut - ``offset``; ``judge`` parses each
    answer and gives its verdict; ``reference`` goes into the header)."""
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
    answers = await force_answers(
        engine,
        prompt,
        token_ids,
        cuts,
        tag,
        k=k,
        max_tokens=max_tokens,
        temperature=temperature,
        seed=seed,
    )
    for c, t, row in zip(cuts, positions, answers, strict=True):
        text, whole = _prefix_end(engine, token_ids, c)
        _info(
            cut_record(
                context=context,
                t=t,
                offset=offset,
                prefix_text=text,
                whole_prefix=whole,
                answers=row,
                judge=judge,
            )
        )
    return answers


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
    """:func:`cotaudit.probing.sweep.score_exact` at the absolute ``cuts``, recorded as
    :func:`force_and_record` records sampled answers: the header, then one event per cut."""
    positions = [c - offset for c in cuts]
    _info(
        exact_header(
            context=context,
            tag=tag,
            temperature=temperature,
            max_tokens=max_tokens,
            response_tokens=len(token_ids),
            positions=positions,
            offset=offset,
            **reference,
        )
    )
    points = await score_exact(engine, prompt, token_ids, cuts, tag, plan, temperature=temperature)
    for c, t, point in zip(cuts, positions, points, strict=True):
        text, whole = _prefix_end(engine, token_ids, c)
        _info(
            exact_record(
                context=context,
                t=t,
                offset=offset,
                prefix_text=text,
                whole_prefix=whole,
                point=point,
            )
        )
    return points


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
