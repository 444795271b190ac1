"""Solver of the self-commitment latency study: the probe core's solver
(:func:`cotaudit.solvers.probe.sweep_solver`) configured to generate a seeded CoT, then force
answers after its prefixes every ``stride`` tokens and compare them with the CoT's own final
answer."""

from __future__ import annotations

from inspect_ai.model import get_model
from inspect_ai.solver import Solver, TaskState, solver

from cotaudit.probing.sweep_plan import SweepPlan
from cotaudit.probing.trace import Trace
from cotaudit.studies.selfcommit.settings import SelfcommitSettings
from cotaudit.studies.selfcommit.sweep import SelfcommitPlanner

from .audit import note
from .engine import probe_engine
from .probe import seeded_generate, sweep_solver


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
    (:mod:`cotaudit.studies.selfcommit.schedule`; the plan:
    :class:`~cotaudit.studies.selfcommit.sweep.SelfcommitPlanner`); ``cuts`` ``sentences``
    cuts at the ends of the CoT's sentences instead, at most ``max_cuts``
    (:mod:`cotaudit.probing.sentences`);
    ``fractions`` cuts at round(f * T) for each fraction f instead of every ``stride`` tokens.

    Args:
      settings: The selfcommit task's checked parameters (their meaning:
        :func:`cotaudit.tasks.selfcommit.selfcommit`).
    """
    s = settings
    planner = SelfcommitPlanner(s, note)

    async def plan(state: TaskState, trace: Trace) -> SweepPlan:
        engine = probe_engine(get_model(), s.tokenizer)
        return planner.plan(engine, trace, state.output.completion)

    return sweep_solver(
        chain=seeded_generate(
            max_tokens=s.max_cot_tokens, temperature=s.cot_temperature, seed=s.seed, per_epoch=True
        ),
        plan=plan,
        forced=s.forced_answers(),
        per_epoch_seed=True,
        think=False,
    )
