"""The resampling probe: from each sentence cut of the sample's CoT, n continuations of the CoT
to their end, where their final answers land, and which sentence moved them
(:mod:`cotaudit.probing.resampling`); forced answers on the same cuts beside them.

It runs after a solver that wrote the CoT (the last assistant message): for selfcommit, after
its sweep (``-T resample=N``).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from typing import Literal

from inspect_ai.model import get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from cotaudit.answers import Reading, extract_final_answer, extract_forced_answer
from cotaudit.engine.base import PrefixRequest
from cotaudit.probing.resample_record import Chunk, ResampleRecord
from cotaudit.probing.resampling import (
    SIMILAR_AT,
    CutRollouts,
    chunk_importance,
    importance_intervals,
    reach_curve,
    reach_share,
    similarity,
)
from cotaudit.probing.sentences import capped, sentence_ends, sentences

from .audit import force_and_record, note, probe_span
from .engine import probe_engine, state_seed
from .probe import trace_of

BOOTSTRAP_REPLICATES = 1000
"""Replicates of the intervals over continuations."""


def _or_none(value: float) -> float | None:
    return None if math.isnan(value) else value


@solver
def resample_probe(
    *,
    n: int,
    temperature: float = 0.7,
    max_tokens: int = 1024,
    max_cuts: int = 20,
    forced_answer_tag: str,
    k: int = 5,
    forced_temperature: float = 0.7,
    answer_max_tokens: int = 8,
    seed: int = 0,
    final_answer_reading: Reading = "stated",
    tokenizer: str | None = None,
    chain: Solver | None = None,
    reference: Literal["own", "gold"] = "own",
) -> Solver:
    """Resample the sample's CoT from its sentence cuts.

    Cuts: c_0 = 0 and the token positions where the CoT's sentences end
    (:func:`cotaudit.probing.sentences.sentence_ends`; at most ``max_cuts`` of them, evenly
    spread, the CoT's end kept). From each cut c_i, ``n`` continuations of ``cot[:c_i]`` of at
    most ``max_tokens - c_i`` tokens (the CoT's own budget) at ``temperature``, seeded per
    sample and epoch and per cut; each continuation's final answer is read from ``cot[:c_i]``
    followed by it, as the CoT's own (``final_answer_reading``; one that used its whole budget
    is read as truncated). r(c_i) = the share equal to the reference: the CoT's own final
    answer (``reference="own"``) or the sample's target (``"gold"``, TRACE's). On the same
    cuts, ``k`` forced answers after ``forced_answer_tag`` (the forced curve). A continuation
    from c_i is *dissimilar* when its first sentence is less than
    :data:`~cotaudit.probing.resampling.SIMILAR_AT` similar to sentence i. The record
    (:class:`~cotaudit.probing.resample_record.ResampleRecord`) is saved in the sample store;
    a CoT without a final answer is not resampled (nothing to reach). ``chain``: the solver
    that writes the CoT first (None: the CoT is already the last assistant message).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        engine = probe_engine(get_model(), tokenizer)
        if chain is not None:
            state = await chain(state, generate)
            if state.completed:
                return state
        trace = trace_of(state, engine, reasoning=False)
        truncated = trace.stop_reason == "max_tokens"
        if reference == "gold":
            target = int(state.target.text)
        else:
            own = extract_final_answer(trace.text, final_answer_reading, truncated)
            if own is None:
                note("No final answer in the CoT: nothing for continuations to reach, none drawn.")
                return state
            target = own
        ids = trace.ids
        ends = sentence_ends(ids, engine.detokenize)
        cuts = [0, *capped(ends, max_cuts)]
        seed_of_sample = state_seed(seed, state, per_epoch=True)
        async with probe_span():
            rows = await force_and_record(
                engine,
                trace.prompt,
                ids,
                cuts,
                forced_answer_tag,
                context="own",
                k=k,
                max_tokens=answer_max_tokens,
                temperature=forced_temperature,
                seed=seed_of_sample,
                judge=lambda a: (extract_forced_answer(a), extract_forced_answer(a) == target),
                a_final=target,
            )
            # one request per cut (each its own budget), all at once: they batch together
            requests = [
                PrefixRequest(
                    trace.prompt,
                    ids,
                    [t],
                    "",
                    k=n,
                    max_tokens=max(1, max_tokens - t),
                    temperature=temperature,
                    seed=seed_of_sample,
                )
                for t in cuts
            ]
            replies = await asyncio.gather(*(engine.continue_prefixes(r) for r in requests))
            continuations = [reply[0] for reply in replies]
        text_at = [engine.detokenize(ids[:t]) for t in cuts]
        chunk_texts = [text[len(a) :] for a, text in zip(text_at, text_at[1:], strict=False)]
        rollouts = []
        for i, (t, texts) in enumerate(zip(cuts, continuations, strict=True)):
            budget = max(1, max_tokens - t)
            answers = tuple(
                extract_final_answer(
                    text_at[i] + text,
                    final_answer_reading,
                    truncated=len(engine.tokenize(text)) >= budget,
                )
                for text in texts
            )
            replaced = chunk_texts[i] if i < len(chunk_texts) else None
            flags = (
                tuple(
                    similarity((sentences(text) or [""])[0], replaced) < SIMILAR_AT
                    for text in texts
                )
                if replaced is not None
                else ()
            )
            rollouts.append(CutRollouts(answers, flags))
            note(
                f"Continuations from t = {t}: final answers {list(answers)}, "
                f"r = {reach_share(answers, target):.3g} against {target}; "
                f"{sum(flags)} of {len(flags)} replaced the next sentence with a dissimilar one."
                if flags
                else f"Continuations from t = {t} (the CoT's end): final answers "
                f"{list(answers)}, r = {reach_share(answers, target):.3g} against {target}."
            )
        importance = chunk_importance(rollouts, target)

        def per_chunk(key: str) -> Callable[[Sequence[CutRollouts]], list[float]]:
            """The statistic of one importance field, for every chunk."""
            return lambda drawn: [getattr(c, key) for c in chunk_importance(drawn, target)]

        ri_ci = importance_intervals(
            rollouts, per_chunk("resampling"), n_boot=BOOTSTRAP_REPLICATES, seed=seed_of_sample
        )
        cf_ci = importance_intervals(
            rollouts, per_chunk("counterfactual"), n_boot=BOOTSTRAP_REPLICATES, seed=seed_of_sample
        )
        chunks = [
            Chunk(
                text=text,
                resampling=_or_none(imp.resampling),
                resampling_ci=(_or_none(ri[0]), _or_none(ri[1])),
                resampling_kl=_or_none(imp.resampling_kl),
                counterfactual=_or_none(imp.counterfactual),
                counterfactual_ci=(_or_none(cf[0]), _or_none(cf[1])),
                counterfactual_accuracy=_or_none(imp.counterfactual_accuracy),
                dissimilar=sum(bool(d) for d in rollouts[i].dissimilar),
            )
            for i, (text, imp, ri, cf) in enumerate(
                zip(chunk_texts, importance, ri_ci, cf_ci, strict=True)
            )
        ]
        forced_answers = [[extract_forced_answer(a) for a in row] for row in rows]
        ResampleRecord(
            reference=target,
            cot_tokens=len(ids),
            cuts=cuts,
            n=n,
            temperature=temperature,
            max_tokens=max_tokens,
            answers=[[a if isinstance(a, int) else None for a in r.answers] for r in rollouts],
            resampled=reach_curve(rollouts, target),
            k=k,
            forced_answers=forced_answers,
            forced=[reach_share(row, target) for row in forced_answers],
            chunks=chunks,
        ).save(state.store)
        return state

    return solve
