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

from cotaudit.probing.sweep_plan import SweepPlan
from cotaudit.probing.trace import Trace
from cotaudit.studies.trace_tutor.settings import TraceTutorSettings
from cotaudit.studies.trace_tutor.sweep import TutorPlanner

from .engine import probe_engine
from .probe import seeded_generate, sweep_solver


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
    masked probes share it (common random numbers for Delta_context). The plan:
    :class:`~cotaudit.studies.trace_tutor.sweep.TutorPlanner`.

    Args:
      settings: The trace_tutor task's checked parameters (their meaning:
        :func:`cotaudit.tasks.trace_tutor.trace_tutor`).
    """
    planner = TutorPlanner(settings)

    async def plan(state: TaskState, trace: Trace) -> SweepPlan:
        engine = probe_engine(get_model(), settings.tokenizer)
        return planner.plan(engine, trace, state.metadata, state.output.completion)

    return sweep_solver(
        chain=seeded_generate(
            max_tokens=settings.max_explanation_tokens, temperature=0.0, seed=settings.seed
        ),
        plan=plan,
        forced=settings.forced_answers(),
        think=False,
        fit_context=False,
    )
