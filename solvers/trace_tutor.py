"""Solver of the context-masked TRACE tutor study: the probe core's solver
(:func:`cotaudit.solvers.probe.sweep_solver`) configured to generate a tutor explanation, then
probe its prefixes.

The explanation is generated through Inspect (so the call is in the log). Its tokens are then
cut at t = 0 and t = round(f * T) for each prefix fraction f (with ``cuts="sentences"``, each
cut moved forward to the end of the sentence it falls in), and an answer is forced after each
cumulative prefix, once with the generation context (key **visible**) and, for keyed
conditions, once more under the question-only prompt with the *same* token ids (key
**masked**). p(f) is the share of the forced answers equal to the gold answer; with the exact
estimator (``estimator`` ``exact`` or ``both``) also its probability, read by teacher forcing
at :func:`~cotaudit.probing.exact.exact_temperature` of the forced-answer temperature (T = 1
for the study's greedy probes), that a forced answer parses to the gold answer.
"""

from __future__ import annotations

from inspect_ai.model import get_model
from inspect_ai.solver import Solver, TaskState, solver

from cotaudit.answers import extract_boxed_answer, extract_forced_answer
from cotaudit.probing.exact import samples
from cotaudit.probing.forms import ExactReference, get_form
from cotaudit.probing.positions import Schedule
from cotaudit.probing.sentences import completed_sentences, sentence_ends
from cotaudit.studies.trace_tutor.prompts import tutor_messages
from cotaudit.studies.trace_tutor.record import ContextProbe, TutorProbe
from cotaudit.studies.trace_tutor.settings import TraceTutorSettings

from .engine import probe_engine
from .probe import (
    Force,
    Sweep,
    SweepPlan,
    SweptPrompt,
    Trace,
    at_schedule,
    seeded_generate,
    sweep_solver,
)


@solver
def trace_tutor_probe(settings: TraceTutorSettings) -> Solver:
    """Generate the tutor explanation (greedy), then probe its prefixes, key visible and masked.

    Needs sample metadata ``condition``, ``gold`` and ``question``. The record
    (:class:`~cotaudit.studies.trace_tutor.record.TutorProbe`) is saved in the sample store
    under ``"trace_tutor"``: the explanation's token ids, the cut positions, and
    per probe context (``visible``, ``masked``) the raw answers, parsed answers and gold-match
    counts per position (position 0 first; None when the estimator samples none) and, read
    exactly, ``p_exact`` and ``covered_exact`` per position. The explanation's final answer is
    the integer in its last ``\\boxed{}`` (:func:`cotaudit.answers.extract_boxed_answer`: the
    form the prompt asks for, no fallback to other numbers; None when there is none).

    The explanation is generated within ``max_explanation_tokens``; the cuts are t = 0 and
    round(f * T) for each of ``fractions`` (``cuts`` ``sentences``: each such cut moved forward
    to the first sentence end at or after it, so no prefix stops inside a sentence; the curve
    stays indexed by the fractions); p(f) = matches / k with k = ``probe_samples``. The masked
    context is the question-only prompt with ``system_prompt``, the one the sample's input was
    built with. A sample's probe seed mixes ``seed`` with the sample id, and the visible and
    masked probes share it (common random numbers for Delta_context).

    Args:
      settings: The trace_tutor task's checked parameters (their meaning:
        :func:`cotaudit.tasks.trace_tutor.trace_tutor`).
    """
    probe_samples, cuts = settings.probe_samples, settings.cuts
    fractions = tuple(float(f) for f in settings.fractions)
    schedule = Schedule(kind="fractions", fractions=fractions, zero_probe=True)

    async def plan(state: TaskState, trace: Trace) -> SweepPlan:
        meta = state.metadata
        condition, gold = str(meta["condition"]), int(meta["gold"])

        def judged(answer: str) -> tuple[int | None, bool]:
            parsed = extract_forced_answer(answer)
            return parsed, parsed == gold

        reference = ExactReference(get_form("integer"), gold)
        prompts = [SweptPrompt("visible", trace.prompt, {"gold": gold}, judged, reference)]
        if condition != "question_only":
            masked = tutor_messages(
                str(meta["question"]), "question_only", gold, settings.system_prompt
            )
            prompts.append(SweptPrompt("masked", masked, {"gold": gold}, judged, reference))

        def probe(rows: list[list[str]]) -> ContextProbe:
            parsed = [[extract_forced_answer(a) for a in row] for row in rows]
            matches = [sum(p == gold for p in row) for row in parsed]
            return ContextProbe(answers=rows, parsed=parsed, matches=matches)

        def record(sweep: Sweep) -> TutorProbe:
            return TutorProbe(
                token_ids=sweep.trace.ids,
                length_tokens=sweep.length,
                truncated=sweep.trace.stop_reason == "max_tokens",
                final_answer=extract_boxed_answer(state.output.completion),
                fractions=list(fractions),
                positions=sweep.probed,  # 0, then round(f * T) (half to even)
                k=probe_samples,
                probes=(
                    {name: probe(rows) for name, rows in sweep.answers.items()}
                    if samples(sweep.estimator)
                    else None
                ),
                estimator=sweep.estimator,
                cuts=cuts,
                exact_temperature=sweep.exact_temperature if sweep.exact else None,
                p_exact={n: [p.p for p in pts] for n, pts in sweep.exact.items()} or None,
                covered_exact={n: [p.covered for p in pts] for n, pts in sweep.exact.items()}
                or None,
            )

        async def at_sentences(length: int, force: Force) -> None:
            engine = probe_engine(get_model(), settings.tokenizer)
            ends = sentence_ends(trace.ids[:length], engine.detokenize)
            await force(completed_sentences(schedule.probed(length), ends))

        cut = at_sentences if cuts == "sentences" else at_schedule(schedule)
        return SweepPlan(prompts, cut, record)

    return sweep_solver(
        chain=seeded_generate(
            max_tokens=settings.max_explanation_tokens, temperature=0.0, seed=settings.seed
        ),
        plan=plan,
        forced=settings.forced_answers(),
        think=False,
        fit_context=False,
    )
