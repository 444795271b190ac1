"""The TRACE tutor study's plan for one sample's sweep (:class:`TutorPlanner`): the tutor
explanation cut at t = 0 and round(f * T) for each prefix fraction f (with ``cuts`` ``sentences``
each cut moved forward to the end of its sentence), swept with the generation context
(``visible``) and, for keyed conditions, under the question-only prompt with the same tokens
(``masked``), each answer judged against the gold answer; the
:class:`~cotaudit.studies.trace_tutor.record.TutorProbe` record of the sweep."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cotaudit.answers import extract_boxed_answer, extract_forced_answer
from cotaudit.engine.base import ProbeEngine
from cotaudit.probing.exact import samples
from cotaudit.probing.forms import ExactReference, get_form
from cotaudit.probing.positions import Schedule
from cotaudit.probing.sentences import completed_sentences, sentence_ends
from cotaudit.probing.sweep_plan import Cut, Force, Sweep, SweepPlan, SweptPrompt, at_schedule
from cotaudit.probing.trace import Trace
from cotaudit.studies.trace_tutor.prompts import tutor_messages
from cotaudit.studies.trace_tutor.record import ContextProbe, TutorProbe
from cotaudit.studies.trace_tutor.settings import TraceTutorSettings


@dataclass(frozen=True)
class TutorPlanner:
    """The study's configuration (``settings``; their meaning:
    :func:`cotaudit.solvers.trace_tutor.trace_tutor_probe`)."""

    settings: TraceTutorSettings

    @property
    def schedule(self) -> Schedule:
        """t = 0 and round(f * T) for each of the settings' fractions."""
        fractions = tuple(float(f) for f in self.settings.fractions)
        return Schedule(kind="fractions", fractions=fractions, zero_probe=True)

    def plan(
        self, engine: ProbeEngine, trace: Trace, metadata: Mapping[str, Any], completion: str
    ) -> SweepPlan:
        """The sample's plan: ``trace`` (the explanation, generated under the sample's
        ``metadata`` ``condition``, ``gold`` and ``question``; ``completion`` its text) swept
        ``visible`` and, unless the condition is ``question_only``, ``masked``."""
        condition, gold = str(metadata["condition"]), int(metadata["gold"])
        sample = TutorSample(self, gold, extract_boxed_answer(completion))
        reference = ExactReference(get_form("integer"), gold)
        prompts = [SweptPrompt("visible", trace.prompt, {"gold": gold}, sample.judged, reference)]
        if condition != "question_only":
            masked = tutor_messages(
                str(metadata["question"]), "question_only", gold, self.settings.system_prompt
            )
            prompts.append(SweptPrompt("masked", masked, {"gold": gold}, sample.judged, reference))
        cut: Cut = at_schedule(self.schedule)
        if self.settings.cuts == "sentences":
            cut = AtSentences(self.schedule, engine, trace)
        return SweepPlan(prompts, cut, sample.record)


@dataclass(frozen=True)
class AtSentences:
    """A ``cut`` forcing, in one round, the schedule's positions on a span of T tokens, each
    moved forward to the end of the sentence of ``trace[:T]`` it falls in
    (:func:`~cotaudit.probing.sentences.completed_sentences`)."""

    schedule: Schedule
    engine: ProbeEngine
    trace: Trace

    async def __call__(self, length: int, force: Force) -> None:
        ends = sentence_ends(self.trace.ids[:length], self.engine.detokenize)
        await force(completed_sentences(self.schedule.probed(length), ends))


@dataclass(frozen=True)
class TutorSample:
    """One sample's plan: the gold answer its forced answers are judged against and the
    explanation's own final answer (None: no ``\\boxed{}``)."""

    planner: TutorPlanner
    gold: int
    final_answer: int | None

    def judged(self, answer: str) -> tuple[int | None, bool]:
        """A forced answer's integer and whether it equals the gold answer."""
        parsed = extract_forced_answer(answer)
        return parsed, parsed == self.gold

    def probe(self, rows: list[list[str]]) -> ContextProbe:
        """One prompt's answers, their integers and gold matches per position."""
        parsed = [[extract_forced_answer(a) for a in row] for row in rows]
        matches = [sum(p == self.gold for p in row) for row in parsed]
        return ContextProbe(answers=rows, parsed=parsed, matches=matches)

    def record(self, sweep: Sweep) -> TutorProbe:
        """The sample's :class:`~cotaudit.studies.trace_tutor.record.TutorProbe`."""
        settings = self.planner.settings
        return TutorProbe(
            token_ids=sweep.trace.ids,
            length_tokens=sweep.length,
            truncated=sweep.trace.stop_reason == "max_tokens",
            final_answer=self.final_answer,
            fractions=list(self.planner.schedule.fractions),
            positions=sweep.probed,  # 0, then round(f * T) (half to even)
            k=settings.probe_samples,
            probes=(
                {name: self.probe(rows) for name, rows in sweep.answers.items()}
                if samples(sweep.estimator)
                else None
            ),
            estimator=sweep.estimator,
            cuts=settings.cuts,
            exact_temperature=sweep.exact_temperature if sweep.exact else None,
            p_exact={n: [p.p for p in pts] for n, pts in sweep.exact.items()} or None,
            covered_exact={n: [p.covered for p in pts] for n, pts in sweep.exact.items()} or None,
        )
