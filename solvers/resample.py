"""The resampling probe: from each sentence cut of the sample's CoT, n continuations of the CoT
to their end, where their final answers land, and which sentence moved them
(:mod:`cotaudit.probing.resampling`); forced answers on the same cuts beside them.

- :func:`resample_probe` runs after a solver that wrote the CoT (the last assistant message)
  and reads final answers as a study does (selfcommit's and trace_tutor's ``-T resample=N``,
  the resample task);
- :func:`resample_sweep` is the generic probe's (``-T probe=resample`` on any task): it cuts
  the trace's think block (else the whole response) through the probe core's sweep and stores
  the raw draws; the task's own scorer reads their answers
  (:func:`cotaudit.scorers.resample.resample_probe_scorer`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from inspect_ai.model import get_model
from inspect_ai.model._generate_config import active_generate_config
from inspect_ai.solver import Generate, Solver, TaskState, solver

from cotaudit.answers import Reading, extract_final_answer, extract_forced_answer
from cotaudit.engine.base import Message, PrefixRequest, ProbeEngine
from cotaudit.probing.forcing import Continuations, ForcedAnswers
from cotaudit.probing.resample_record import ResampleDraws, resample_record
from cotaudit.probing.resampling import SIMILAR_AT, CutRollouts, reach_share, similarity
from cotaudit.probing.sentences import capped, sentence_ends, sentences
from cotaudit.probing.sweep import Prefixes
from cotaudit.probing.think import DEFAULT_THINK_CLOSE

from .audit import SweepHeading, force_and_record, note, probe_span
from .engine import probe_engine, state_seed
from .probe import (
    Force,
    Sweep,
    SweepPlan,
    SweptPrompt,
    Trace,
    TraceReader,
    final_text_of,
    prompt_opens_think,
    sweep_solver,
    trace_of,
)

DEFAULT_MAX_TOKENS = 1024
"""The token budget of a response the generic probe resamples when neither ``-T
resample_max_tokens`` nor the run's ``max_tokens`` sets one."""


def token_budget(continuations: Continuations) -> int:
    """The token budget of a resampled response: ``continuations.max_tokens``, else the run's
    ``max_tokens``, else :data:`DEFAULT_MAX_TOKENS` (a continuation from cut t gets the budget
    minus t)."""
    return continuations.max_tokens or active_generate_config().max_tokens or DEFAULT_MAX_TOKENS


async def draw_continuations(
    engine: ProbeEngine,
    prompt: Sequence[Message],
    ids: Sequence[int],
    cuts: Sequence[int],
    *,
    n: int,
    temperature: float,
    budget: int,
    seed: int,
) -> tuple[list[list[str]], list[list[bool]]]:
    """``n`` continuations of ``prompt ++ ids[:c]`` from each absolute cut c, each of at most
    ``budget - c`` tokens (the response's own budget), seeded with ``seed`` (the engine mixes
    in the cut and the row), and for each whether it used its whole budget. A cut with no
    budget left (a response cut by its token limit, at its end) continues with nothing. One
    request per cut, all at once: the engine batches them and shares each cut's prefix."""
    budgets = [budget - c for c in cuts]

    async def draw(c: int, left: int) -> list[str]:
        if left <= 0:
            return [""] * n
        request = PrefixRequest(
            list(prompt),
            list(ids),
            [c],
            "",
            k=n,
            max_tokens=left,
            temperature=temperature,
            seed=seed,
        )
        return (await engine.continue_prefixes(request))[0]

    texts = await asyncio.gather(*(draw(c, b) for c, b in zip(cuts, budgets, strict=True)))
    truncated = [
        [len(engine.tokenize(t)) >= b for t in row] for row, b in zip(texts, budgets, strict=True)
    ]
    return list(texts), truncated


def text_between(
    engine: ProbeEngine, ids: Sequence[int], cuts: Sequence[int]
) -> tuple[list[str], list[str]]:
    """The text of ``ids[:c]`` for each cut c, and the chunks: the text between consecutive
    cuts (one fewer)."""
    at = [engine.detokenize(list(ids[:c])) for c in cuts]
    return at, [b[len(a) :] for a, b in zip(at, at[1:], strict=False)]


def dissimilar_flags(texts: Sequence[str], replaced: str | None) -> tuple[bool, ...]:
    """Per continuation, whether its first sentence is less than
    :data:`~cotaudit.probing.resampling.SIMILAR_AT` similar to the chunk it replaced (none
    when nothing was replaced: the last cut)."""
    if replaced is None:
        return ()
    return tuple(similarity((sentences(t) or [""])[0], replaced) < SIMILAR_AT for t in texts)


def note_cut(t: int, answers: Sequence[Any], target: Any, flags: Sequence[bool]) -> None:
    """The transcript's line for the continuations from one cut."""
    r = reach_share(answers, target)
    note(
        f"Continuations from t = {t}: final answers {list(answers)}, r = {r:.3g} against "
        f"{target}; {sum(flags)} of {len(flags)} replaced the next sentence with a dissimilar one."
        if flags
        else f"Continuations from t = {t} (the CoT's end): final answers {list(answers)}, "
        f"r = {r:.3g} against {target}."
    )


@solver
def resample_probe(
    *,
    continuations: Continuations,
    forced: ForcedAnswers,
    final_answer_reading: Reading = "stated",
    chain: Solver | None = None,
) -> Solver:
    """Resample the sample's CoT from its sentence cuts.

    Cuts: c_0 = 0 and the token positions where the CoT's sentences end
    (:func:`cotaudit.probing.sentences.sentence_ends`; at most ``continuations.max_cuts`` of
    them, evenly spread, the CoT's end kept). From each cut c_i, ``continuations.n``
    continuations of ``cot[:c_i]`` of at most ``max_tokens - c_i`` tokens (``max_tokens``:
    ``continuations.max_tokens``, the CoT's own budget) at ``continuations.temperature``, seeded
    per sample and epoch and per cut; each continuation's final answer is read from
    ``cot[:c_i]`` followed by it, as the CoT's own (``final_answer_reading``; one that used its
    whole budget is read as truncated). r(c_i) = the share equal to the reference: the CoT's
    own final answer (``continuations.reference`` ``own``) or the sample's target (``gold``,
    TRACE's). On the same cuts, ``forced.k`` forced answers after ``forced.tag`` (the forced
    curve). A continuation from c_i is *dissimilar* when its first sentence is less than
    :data:`~cotaudit.probing.resampling.SIMILAR_AT` similar to sentence i. The record
    (:class:`~cotaudit.probing.resample_record.ResampleRecord`) is saved in the sample store;
    a CoT without a final answer is not resampled (nothing to reach). ``chain``: the solver
    that writes the CoT first (None: the CoT is already the last assistant message).
    """
    n, temperature = continuations.n, continuations.temperature

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        engine = probe_engine(get_model(), forced.tokenizer)
        if chain is not None:
            state = await chain(state, generate)
            if state.completed:
                return state
        trace = trace_of(state, engine, reasoning=False)
        if continuations.reference == "gold":
            target = int(state.target.text)
        else:
            own = extract_final_answer(
                trace.text, final_answer_reading, trace.stop_reason == "max_tokens"
            )
            if own is None:
                note("No final answer in the CoT: nothing for continuations to reach, none drawn.")
                return state
            target = own
        ids = trace.ids
        ends = sentence_ends(ids, engine.detokenize)
        cuts = [0, *capped(ends, continuations.max_cuts)]
        budget = token_budget(continuations)
        seed_of_sample = state_seed(forced.seed, state, per_epoch=True)
        async with probe_span():
            rows = await force_and_record(
                engine,
                Prefixes(trace.prompt, ids, cuts, forced.tag),
                SweepHeading("own", reference={"a_final": target}),
                k=forced.k,
                max_tokens=forced.max_tokens,
                temperature=forced.temperature,
                seed=seed_of_sample,
                judge=lambda a: (extract_forced_answer(a), extract_forced_answer(a) == target),
            )
            drawn_texts, used_budget = await draw_continuations(
                engine,
                trace.prompt,
                ids,
                cuts,
                n=n,
                temperature=temperature,
                budget=budget,
                seed=seed_of_sample,
            )
        text_at, chunk_texts = text_between(engine, ids, cuts)
        rollouts = []
        for i, (t, texts) in enumerate(zip(cuts, drawn_texts, strict=True)):
            answers = tuple(
                extract_final_answer(text_at[i] + text, final_answer_reading, cut)
                for text, cut in zip(texts, used_budget[i], strict=True)
            )
            flags = dissimilar_flags(texts, chunk_texts[i] if i < len(chunk_texts) else None)
            rollouts.append(CutRollouts(answers, flags))
            note_cut(t, answers, target, flags)
        resample_record(
            reference=target,
            cuts=cuts,
            cot_tokens=len(ids),
            rollouts=rollouts,
            chunk_texts=chunk_texts,
            forced_answers=[[extract_forced_answer(a) for a in row] for row in rows],
            n=n,
            temperature=temperature,
            max_tokens=budget,
            k=forced.k,
            seed=seed_of_sample,
        ).save(state.store)
        return state

    return solve


@solver
def resample_sweep(
    *,
    chain: Solver,
    form: str,
    forced: ForcedAnswers,
    continuations: Continuations,
    think_close: str = DEFAULT_THINK_CLOSE,
    read_trace: TraceReader | None = None,
    verification_lead: str | None = None,
) -> Solver:
    """The generic resampling probe: run the task's ``chain``, cut its trace's span (the think
    block, else the whole response) at c_0 = 0 and its sentence ends (at most
    ``continuations.max_cuts``, evenly spread, the span's end kept), force answers at each cut
    as the generic probe does (``forced``; its tag after ``think_close`` inside a think block),
    and draw ``continuations.n`` continuations of the response from each cut to its end at
    ``continuations.temperature``, each of at most ``continuations.max_tokens`` minus the tokens
    before the cut (None: the run's ``max_tokens``, else :data:`DEFAULT_MAX_TOKENS`). Seeds mix
    ``forced.seed`` with the sample id and epoch (and, in the engine, the cut and row). The
    draws are stored raw (:class:`~cotaudit.probing.resample_record.ResampleDraws`); a trace
    whose final-answer text is empty draws no continuations for the reference ``own`` (there is
    nothing to reach). ``read_trace`` reads the trace after the chain (None: the last assistant
    message; a recorded log's reader, :mod:`cotaudit.tasks.probe_log`)."""
    n, reference = continuations.n, continuations.reference

    async def plan(state: TaskState, trace: Trace) -> SweepPlan:
        engine = probe_engine(get_model(), forced.tokenizer)
        start, stop = trace.span or (0, len(trace.ids))
        ends = sentence_ends(trace.ids[start:stop], engine.detokenize)
        cuts = [0, *capped(ends, continuations.max_cuts)]
        budget = token_budget(continuations)
        sample_seed = state_seed(forced.seed, state, per_epoch=True)
        drawn: dict[str, Any] = {}

        async def cut(length: int, force: Force) -> None:
            positions = [t for t in cuts if t <= length]
            answered = await force(positions)
            drawn["cuts"], drawn["forced"] = positions, answered.answers["own"]
            drawn["final_text"] = final = final_text_of(trace, forced.tokenizer)
            if reference == "own" and not final.strip():
                note("No final-answer text after the trace: nothing to reach, none drawn.")
                drawn["continuations"] = drawn["truncated"] = [[] for _ in positions]
                return
            absolute = [start + t for t in positions]
            drawn["continuations"], drawn["truncated"] = await draw_continuations(
                engine,
                trace.prompt,
                trace.ids,
                absolute,
                n=n,
                temperature=continuations.temperature,
                budget=budget,
                seed=sample_seed,
            )
            drawn["prefix_texts"], drawn["chunk_texts"] = text_between(engine, trace.ids, absolute)

        def record(sweep: Sweep) -> ResampleDraws:
            positions = drawn["cuts"]
            chunks = drawn.get("chunk_texts") or [""] * max(0, len(positions) - 1)
            drawn_texts = drawn["continuations"]
            return ResampleDraws(
                form=form,
                reference=reference,
                tag=sweep.tag,
                think_source=sweep.split.source,
                think_opened_by_prompt=prompt_opens_think(engine, trace.prompt),
                final_text=drawn["final_text"],
                generation_truncated=trace.stop_reason == "max_tokens",
                offset=sweep.start,
                cot_tokens=sweep.length,
                cuts=positions,
                prefix_texts=drawn.get("prefix_texts") or [],
                chunk_texts=chunks,
                n=n,
                temperature=continuations.temperature,
                max_tokens=budget,
                continuations=drawn_texts,
                truncated=drawn["truncated"],
                dissimilar=[
                    list(dissimilar_flags(row, chunks[i] if i < len(chunks) else None))
                    for i, row in enumerate(drawn_texts)
                ],
                k=forced.k,
                forced=drawn["forced"],
                seed=sample_seed,
                verification_lead="" if trace.submitted else verification_lead,
            )

        return SweepPlan([SweptPrompt("own", trace.prompt)], cut, record)

    return sweep_solver(
        chain=chain,
        plan=plan,
        forced=forced,
        per_epoch_seed=True,
        think_close=think_close,
        read_trace=read_trace,
    )
