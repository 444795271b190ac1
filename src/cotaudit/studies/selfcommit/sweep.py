"""The self-commitment study's plan for one sample's sweep (:class:`SelfcommitPlanner`): the
CoT's prefixes cut every ``stride`` tokens (or at fractions, or at sentence ends), all at once
or adaptively (:mod:`cotaudit.studies.selfcommit.schedule`), their forced answers judged
against the CoT's own final answer, and the :class:`~cotaudit.studies.selfcommit.record.
SelfcommitProbe` record of the sweep."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cotaudit.answers import extract_final_answer, extract_forced_answer
from cotaudit.engine.base import ProbeEngine
from cotaudit.probing.exact import reads_exact, samples
from cotaudit.probing.forms import ExactReference, get_form
from cotaudit.probing.positions import Schedule
from cotaudit.probing.sentences import capped, sentence_ends
from cotaudit.probing.sweep_plan import Force, Sweep, SweepPlan, SweptPrompt
from cotaudit.probing.trace import Trace
from cotaudit.studies.selfcommit.record import SelfcommitProbe
from cotaudit.studies.selfcommit.schedule import (
    EXACT_PIN_TOLERANCE,
    coarse_positions,
    fill_schedule,
    refinement_positions,
)
from cotaudit.studies.selfcommit.settings import SelfcommitSettings

NO_FINAL_ANSWER = (
    "No final answer in the CoT (a_final = None): nothing to commit to, no prefix probed."
)
"""The transcript's note for a CoT without a final answer."""


@dataclass(frozen=True)
class SelfcommitPlanner:
    """The study's configuration (``settings``; their meaning:
    :func:`cotaudit.solvers.selfcommit.selfcommit_probe`), with ``note`` writing a line into
    the sample's transcript."""

    settings: SelfcommitSettings
    note: Callable[[str], None]

    def plan(self, engine: ProbeEngine, trace: Trace, completion: str) -> SweepPlan:
        """The sample's plan: ``trace`` (the CoT) swept under its own prompt (``own``), its
        answers judged against a_final, the final answer of ``completion`` as the CoT states
        it (read as truncated when the CoT hit its token limit)."""
        s = self.settings
        truncated = trace.stop_reason == "max_tokens"
        a_final = extract_final_answer(
            completion, reading=s.final_answer_reading, truncated=truncated
        )
        sample = SelfcommitSample(self, self.cut_schedule(engine, trace), a_final, truncated)
        own = SweptPrompt(
            "own",
            trace.prompt,
            {"a_final": a_final},
            sample.judged,
            exact=None if a_final is None else ExactReference(get_form("integer"), a_final),
        )
        return SweepPlan([own], sample.cut, sample.record)

    def cut_schedule(self, engine: ProbeEngine, trace: Trace) -> Schedule:
        """The curve's cuts: every ``stride`` tokens or at round(f * T) (``cut_schedule`` of
        the settings), or with ``cuts`` ``sentences`` at the ends of the span's sentences (at
        most ``max_cuts``; 0 without any)."""
        s = self.settings
        if s.cuts != "sentences":
            return s.cut_schedule()
        start, stop = trace.span or (0, len(trace.ids))
        ends = sentence_ends(trace.ids[start:stop], engine.detokenize)
        return Schedule(
            kind="sentences", max_cuts=s.max_cuts, steps=tuple(capped(ends, s.max_cuts)) or (0,)
        )


@dataclass(frozen=True)
class SelfcommitSample:
    """One sample's plan: its cuts (``cut_at``), the CoT's final answer ``a_final`` (None:
    none) and whether the CoT hit its token limit."""

    planner: SelfcommitPlanner
    cut_at: Schedule
    a_final: int | None
    truncated: bool

    def judged(self, answer: str) -> tuple[int | None, bool]:
        """A forced answer's integer and whether it equals a_final."""
        parsed = extract_forced_answer(answer)
        return parsed, parsed == self.a_final

    def matches_of(self, row: list[str]) -> int:
        """The answers of ``row`` equal to a_final."""
        return sum(self.judged(a)[1] for a in row)

    async def cut(self, length: int, force: Force) -> None:
        """Force the CoT's cuts on T = ``length`` tokens: none without a_final (a note says
        so); schedule ``full``: every position (and 0 with ``zero_probe``) in one round;
        ``adaptive``: the coarse positions, then the refinement where c(t) is ambiguous (on
        the sampled c when the estimator samples, else on c_exact within
        :data:`~cotaudit.studies.selfcommit.schedule.EXACT_PIN_TOLERANCE`)."""
        s = self.planner.settings
        if self.a_final is None:
            self.planner.note(NO_FINAL_ANSWER)
            return
        zero = [0] if s.zero_probe else []
        full = self.cut_at.positions(length)  # stride, 2*stride, ..., T (or sentence ends)
        if s.schedule == "full":
            await force(sorted(set(zero + full)))
            return
        coarse = coarse_positions(length, s.stride)
        first = sorted(set(zero + coarse))
        forced = await force(first)
        if samples(s.estimator):
            rows = dict(zip(first, forced.answers["own"], strict=True))
            coarse_c = {t: self.matches_of(rows[t]) / s.k for t in coarse}
            tolerance = 0.0
        else:
            points = dict(zip(first, forced.exact["own"], strict=True))
            coarse_c = {t: points[t].p for t in coarse}
            tolerance = EXACT_PIN_TOLERANCE
        refined = refinement_positions(full, coarse, coarse_c, tolerance)
        if refined:
            await force(refined)

    def record(self, sweep: Sweep) -> SelfcommitProbe:
        """The sample's :class:`~cotaudit.studies.selfcommit.record.SelfcommitProbe`: the
        match counts at every position of the curve (the unprobed filled in,
        :func:`~cotaudit.studies.selfcommit.schedule.fill_schedule`), c_exact likewise, and c0
        apart."""
        s = self.planner.settings
        k, estimator, zero_probe = s.k, s.estimator, s.zero_probe
        full = self.cut_at.positions(sweep.length)
        answers = dict(zip(sweep.probed, sweep.answers["own"], strict=True))
        sampled = samples(estimator) and bool(answers)
        probed = {t: self.matches_of(row) for t, row in answers.items()} if sampled else {}
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
            truncated=self.truncated,
            context_truncated=sweep.context_truncated,
            a_final=self.a_final,
            positions=full,
            matches=matches,
            imputed=imputed,
            zero_probe=zero_probe,
            c0=probed[0] / k if sampled and at_zero else None,
            prefixes_probed=len(answers),
            k=k if samples(estimator) else None,
            answers=[answers.get(t, []) for t in full] if samples(estimator) else None,
            parsed_answers=[[extract_forced_answer(a) for a in answers.get(t, [])] for t in full]
            if samples(estimator)
            else None,
            estimator=estimator,
            exact_temperature=sweep.exact_temperature if reads_exact(estimator) else None,
            c_exact=c_exact,
            covered_exact=covered,
            c0_exact=exact[0].p if exact and at_zero else None,
            c0_covered_exact=exact[0].covered if exact and at_zero else None,
        )
