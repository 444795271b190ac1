"""Solver of the self-commitment latency study: the probe core's solver
(:func:`cotaudit.solvers.probe.sweep_solver`) configured to generate a seeded CoT, then force
answers after its prefixes every ``stride`` tokens and compare them with the CoT's own final
answer."""

from __future__ import annotations

from inspect_ai.model import get_model
from inspect_ai.solver import Solver, TaskState, solver

from cotaudit.answers import extract_final_answer, extract_forced_answer
from cotaudit.probing.exact import reads_exact, samples
from cotaudit.probing.forms import ExactReference, get_form
from cotaudit.probing.positions import Schedule
from cotaudit.probing.sentences import capped, sentence_ends
from cotaudit.studies.selfcommit.record import SelfcommitProbe
from cotaudit.studies.selfcommit.schedule import (
    EXACT_PIN_TOLERANCE,
    coarse_positions,
    fill_schedule,
    refinement_positions,
)
from cotaudit.studies.selfcommit.settings import SelfcommitSettings

from .audit import note
from .engine import probe_engine
from .probe import Force, Sweep, SweepPlan, SweptPrompt, Trace, seeded_generate, sweep_solver


@solver
def selfcommit_probe(settings: SelfcommitSettings) -> Solver:
    """Generate the CoT (recorded as a model call), then force k answers after every prefix.

    c(t) = #{answers at t equal to a_final} / k, with a_final the CoT's own final integer
    answer as the CoT states it (:func:`cotaudit.answers.extract_final_answer` with
    ``final_answer_reading``; a CoT that hit ``max_cot_tokens`` is read as ``truncated``), at
    t = stride, 2*stride, ..., T, T the CoT's tokens that fit the model's context with the
    tag and answer. With ``zero_probe`` the empty prefix is probed too and kept apart as
    c0 = c(0) (no point of the curve). With no a_final the probe is skipped (nothing to commit
    to; ``matches`` and ``c0`` are None). The record
    (:class:`~cotaudit.studies.selfcommit.record.SelfcommitProbe`) is saved in the sample store
    under ``"selfcommit"``.

    With ``estimator`` ``exact`` (or ``both``) the curve is also read exactly: c_exact(t) =
    P(the forced answer parses to a_final), by teacher forcing at ``temperature``
    (:mod:`cotaudit.probing.exact`, the integer forms of a_final); ``exact`` samples no answers
    (``matches`` None). The adaptive schedule refines on the sampled c when it has one
    (``sampled``, ``both``), else on c_exact (pinned within
    :data:`~cotaudit.studies.selfcommit.schedule.EXACT_PIN_TOLERANCE` of 0 or 1).

    The CoT is generated at ``cot_temperature`` (0 = greedy) within ``max_cot_tokens``; each
    sample's seed mixes ``seed`` with the sample id and the epoch (from epoch 2 on), so
    ``--epochs N`` draws N different sets of forced answers (and of CoTs when
    ``cot_temperature`` > 0). ``schedule`` ``full`` probes every position, ``adaptive`` every
    4th first and fills in only where c(t) is ambiguous
    (:mod:`cotaudit.studies.selfcommit.schedule`); ``cuts`` ``sentences`` cuts at the ends of
    the CoT's sentences instead, at most ``max_cuts`` (:mod:`cotaudit.probing.sentences`);
    ``fractions`` cuts at round(f * T) for each fraction f instead of every ``stride`` tokens.

    Args:
      settings: The selfcommit task's checked parameters (their meaning:
        :func:`cotaudit.tasks.selfcommit.selfcommit`).
    """
    s = settings
    k, estimator, zero_probe = s.k, s.estimator, s.zero_probe
    stride_cuts = s.cut_schedule()  # every stride tokens, or at round(f * T) with fractions
    zero = [0] if zero_probe else []

    async def plan(state: TaskState, trace: Trace) -> SweepPlan:
        truncated = trace.stop_reason == "max_tokens"
        cut_at = stride_cuts
        if s.cuts == "sentences":
            start, stop = trace.span or (0, len(trace.ids))
            detokenize = probe_engine(get_model(), s.tokenizer).detokenize
            ends = sentence_ends(trace.ids[start:stop], detokenize)
            cut_at = Schedule(
                kind="sentences", max_cuts=s.max_cuts, steps=tuple(capped(ends, s.max_cuts)) or (0,)
            )
        a_final = extract_final_answer(
            state.output.completion, reading=s.final_answer_reading, truncated=truncated
        )

        def judged(answer: str) -> tuple[int | None, bool]:
            parsed = extract_forced_answer(answer)
            return parsed, parsed == a_final

        def matches_of(row: list[str]) -> int:
            return sum(judged(a)[1] for a in row)

        async def cut(length: int, force: Force) -> None:
            if a_final is None:
                note(
                    "No final answer in the CoT (a_final = None): nothing to commit to, "
                    "no prefix probed."
                )
                return
            full = cut_at.positions(length)  # stride, 2*stride, ..., T (or sentence ends)
            if s.schedule == "full":
                await force(sorted(set(zero + full)))
                return
            coarse = coarse_positions(length, s.stride)
            first = sorted(set(zero + coarse))
            forced = await force(first)
            if samples(estimator):
                rows = dict(zip(first, forced.answers["own"], strict=True))
                coarse_c = {t: matches_of(rows[t]) / k for t in coarse}
                tolerance = 0.0
            else:
                points = dict(zip(first, forced.exact["own"], strict=True))
                coarse_c = {t: points[t].p for t in coarse}
                tolerance = EXACT_PIN_TOLERANCE
            refined = refinement_positions(full, coarse, coarse_c, tolerance)
            if refined:
                await force(refined)

        def record(sweep: Sweep) -> SelfcommitProbe:
            full = cut_at.positions(sweep.length)
            answers = dict(zip(sweep.probed, sweep.answers["own"], strict=True))
            sampled = samples(estimator) and bool(answers)
            probed = {t: matches_of(row) for t, row in answers.items()} if sampled else {}
            matches, imputed = fill_schedule(full, probed) if probed else (None, None)
            exact = (
                dict(zip(sweep.probed, sweep.exact["own"], strict=True))
                if reads_exact(estimator) and "own" in sweep.exact
                else {}
            )
            c_exact = covered = None
            if exact:
                c_exact, imputed_exact = fill_schedule(full, {t: e.p for t, e in exact.items()})
                covered, _ = fill_schedule(full, {t: e.covered for t, e in exact.items()})
                imputed = imputed if imputed is not None else imputed_exact
            at_zero = zero_probe and 0 in answers
            return SelfcommitProbe(
                cot_tokens=sweep.length,
                truncated=truncated,
                context_truncated=sweep.context_truncated,
                a_final=a_final,
                positions=full,
                matches=matches,
                imputed=imputed,
                zero_probe=zero_probe,
                c0=probed[0] / k if sampled and at_zero else None,
                prefixes_probed=len(answers),
                k=k if samples(estimator) else None,
                answers=[answers.get(t, []) for t in full] if samples(estimator) else None,
                parsed_answers=[
                    [extract_forced_answer(a) for a in answers.get(t, [])] for t in full
                ]
                if samples(estimator)
                else None,
                estimator=estimator,
                exact_temperature=sweep.exact_temperature if reads_exact(estimator) else None,
                c_exact=c_exact,
                covered_exact=covered,
                c0_exact=exact[0].p if exact and at_zero else None,
                c0_covered_exact=exact[0].covered if exact and at_zero else None,
            )

        own = SweptPrompt(
            "own",
            trace.prompt,
            {"a_final": a_final},
            judged,
            exact=None if a_final is None else ExactReference(get_form("integer"), a_final),
        )
        return SweepPlan([own], cut, record)

    return sweep_solver(
        chain=seeded_generate(
            max_tokens=s.max_cot_tokens, temperature=s.cot_temperature, seed=s.seed, per_epoch=True
        ),
        plan=plan,
        forced=s.forced_answers(),
        per_epoch_seed=True,
        think=False,
    )
