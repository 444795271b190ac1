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

from collections.abc import Sequence
from typing import Any

from inspect_ai.model import get_model
from inspect_ai.model._generate_config import active_generate_config
from inspect_ai.solver import Generate, Solver, TaskState, solver

from cotaudit.answers import Reading, extract_final_answer
from cotaudit.probing.forcing import Continuations, ForcedAnswers
from cotaudit.probing.resample_sweep import CotResampler, ResamplePlanner, sentence_cuts
from cotaudit.probing.resampling import Answer, reach_share
from cotaudit.probing.sweep_plan import SweepPlan
from cotaudit.probing.think import DEFAULT_THINK_CLOSE
from cotaudit.probing.trace import Trace

from .audit import note, probe_span, record_event
from .engine import probe_engine, state_seed
from .probe import TraceReader, sweep_solver, trace_of

DEFAULT_MAX_TOKENS = 1024
"""The token budget of a response the generic probe resamples when neither ``-T
resample_max_tokens`` nor the run's ``max_tokens`` sets one."""


def token_budget(continuations: Continuations) -> int:
    """The token budget of a resampled response: ``continuations.max_tokens``, else the run's
    ``max_tokens``, else :data:`DEFAULT_MAX_TOKENS` (a continuation from cut t gets the budget
    minus t)."""
    return continuations.max_tokens or active_generate_config().max_tokens or DEFAULT_MAX_TOKENS


def note_cut(t: int, answers: Sequence[Any], target: Any, flags: Sequence[bool | None]) -> None:
    """The transcript's line for the continuations from one cut (``flags``: whether each
    replaced the next sentence with a dissimilar one; none for the CoT's end)."""
    r, dissimilar = reach_share(answers, target), sum(1 for f in flags if f)
    note(
        f"Continuations from t = {t}: final answers {list(answers)}, r = {r:.3g} against "
        f"{target}; {dissimilar} of {len(flags)} replaced the next sentence with a dissimilar one."
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

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        engine = probe_engine(get_model(), forced.tokenizer)
        if chain is not None:
            state = await chain(state, generate)
            if state.completed:
                return state
        trace = trace_of(state, engine, reasoning=False)
        target = reference_answer(state, trace, continuations, final_answer_reading)
        if target is None:
            note("No final answer in the CoT: nothing for continuations to reach, none drawn.")
            return state
        resampler = CotResampler(
            engine,
            trace.prompt,
            trace.ids,
            sentence_cuts(engine, trace.ids, continuations.max_cuts),
            target,
            continuations,
            forced,
            token_budget(continuations),
            state_seed(forced.seed, state, per_epoch=True),
            final_answer_reading,
        )
        async with probe_span():
            drawn = await resampler.resample(record_event)
        rollouts = resampler.rollouts(drawn)
        for t, rollout in zip(resampler.cuts, rollouts, strict=True):
            note_cut(t, rollout.answers, target, rollout.dissimilar)
        resampler.record(drawn, rollouts).save(state.store)
        return state

    return solve


def reference_answer(
    state: TaskState, trace: Trace, continuations: Continuations, reading: Reading
) -> Answer | None:
    """What the continuations of ``trace`` are to reach: the sample's target (``gold``) or the
    CoT's own final answer read with ``reading`` (``own``; None when it has none)."""
    if continuations.reference == "gold":
        return int(state.target.text)
    return extract_final_answer(trace.text, reading, trace.stop_reason == "max_tokens")


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
    planner = ResamplePlanner(form, forced, continuations, verification_lead, note)

    async def plan(state: TaskState, trace: Trace) -> SweepPlan:
        engine = probe_engine(get_model(), forced.tokenizer)
        budget = token_budget(continuations)
        seed = state_seed(forced.seed, state, per_epoch=True)
        return planner.plan(engine, trace, budget=budget, seed=seed)

    return sweep_solver(
        chain=chain,
        plan=plan,
        forced=forced,
        per_epoch_seed=True,
        think_close=think_close,
        read_trace=read_trace,
    )
