"""The truncate-and-force-answer sweep every probe shares.

For a chat prompt, the response's token ids and cut positions t: the model sees
``prompt ++ ids[:offset + t] ++ tag`` and samples k short answers per cut
(:meth:`cotaudit.engine.base.ProbeEngine.continue_prefixes`, one request for all cuts, so the
backends reuse their caches). Prefixes are cumulative; the same seed gives the same answers
whatever else is probed. The exact estimator (:func:`score_exact`) reads the same cuts' answer
probabilities by teacher forcing (:mod:`cotaudit.probing.exact`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cotaudit.engine.base import LocalEngine, Message, PrefixRequest, ProbeEngine
from cotaudit.probing.exact import ExactPlan, ExactPoint


@dataclass(frozen=True)
class Prefixes:
    """The prefixes one prompt's sweep forces answers after: ``prompt ++ token_ids[:c] ++ tag``
    for each absolute cut c of ``cuts``, in order."""

    prompt: Sequence[Message]
    token_ids: Sequence[int]
    cuts: Sequence[int]
    tag: str


def context_room(
    engine: ProbeEngine, prompt: Sequence[Message], tag: str, answer_tokens: int
) -> int | None:
    """Response tokens that fit before the tag and answer in the model's context, or None when
    the engine does not know its context length and prompt rendering (servers: left to them).

    room = context_length - len(render(prompt)) - len(tokenize(tag)) - answer_tokens."""
    if not isinstance(engine, LocalEngine) or not engine.context_length:
        return None
    prompt_tokens = len(engine.render(prompt))
    return max(engine.context_length - prompt_tokens - len(engine.tokenize(tag)) - answer_tokens, 0)


def fit_to_context(
    engine: ProbeEngine,
    prompt: Sequence[Message],
    token_ids: Sequence[int],
    tag: str,
    answer_tokens: int,
) -> tuple[list[int], bool]:
    """The response's first min(len(token_ids), room) tokens (:func:`context_room`), so prompt
    + response + tag + answer fit the model's context, and whether that cut any; unchanged
    where the room is unknown (left to the server)."""
    room = context_room(engine, prompt, tag, answer_tokens)
    if room is None or len(token_ids) <= room:
        return list(token_ids), False
    return list(token_ids[:room]), True


async def force_answers(
    engine: ProbeEngine,
    prefixes: Prefixes,
    *,
    k: int,
    max_tokens: int,
    temperature: float,
    seed: int,
) -> list[list[str]]:
    """k raw answers after each of ``prefixes``, in order.

    One request for all cuts, as given (a repeated cut is probed again; the engines seed each
    cut with (seed, c), so it gets the same answers)."""
    if not prefixes.cuts:
        return []
    rows = await engine.continue_prefixes(
        PrefixRequest(
            messages=prefixes.prompt,
            cot_token_ids=list(prefixes.token_ids),
            positions=list(prefixes.cuts),
            tag=prefixes.tag,
            k=k,
            max_tokens=max_tokens,
            temperature=temperature,
            seed=seed,
        )
    )
    return [list(row) for row in rows]


async def score_exact(
    engine: ProbeEngine, prefixes: Prefixes, plan: ExactPlan, *, temperature: float
) -> list[ExactPoint]:
    """The exact estimator after each of ``prefixes``, in order: one
    :meth:`~cotaudit.engine.base.ProbeEngine.score_answers` request for all cuts, read at
    ``temperature`` (> 0)."""
    if not prefixes.cuts:
        return []
    request = plan.request(
        prefixes.prompt, list(prefixes.token_ids), list(prefixes.cuts), prefixes.tag, temperature
    )
    return [plan.point(scores) for scores in await engine.score_answers(request)]
