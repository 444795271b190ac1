"""The generic probe's plan for one sample (:class:`ProbePlanner`): its trace's span cut at a
:class:`~cotaudit.probing.positions.Schedule`'s positions under the trace's own prompt and,
replayed, under another condition's prompt with the same tokens (:class:`Replay`), and the raw
answers stored as a :class:`~cotaudit.probing.record.ProbeRecord` with the target and choices
each prompt's answers are verified against."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from cotaudit.engine.base import Message, ProbeEngine
from cotaudit.probing.choices import ShownChoice
from cotaudit.probing.exact import reads_exact, samples
from cotaudit.probing.forcing import ForcedAnswers
from cotaudit.probing.forms import ExactReference, get_form
from cotaudit.probing.positions import Schedule
from cotaudit.probing.record import ContextAnswers, ProbeKind, ProbeRecord
from cotaudit.probing.sentences import capped, sentence_ends
from cotaudit.probing.sweep_plan import (
    Cut,
    Sweep,
    SweepPlan,
    SweptPrompt,
    at_schedule,
    closing_think_blocks,
)
from cotaudit.probing.think import THINK_OPEN, inside_think
from cotaudit.probing.trace import Trace, step_ends
from cotaudit.probing.trajectory import StepMark


@dataclass(frozen=True)
class Replay:
    """What a trace is replayed under: the chat prompt, and the sample whose target and choices
    (in the order the prompt shows them) the forced answers are verified against; None: the
    probed sample's own."""

    messages: list[Message]
    sample_id: str | None = None
    target: list[str] | None = None
    choices: list[ShownChoice] | None = None


class Under(NamedTuple):
    """One prompt a trace is probed under: its ``name`` in the record (``own``: the prompt the
    trace was written under, first; ``replay``), the condition it belongs to and the prompt."""

    name: Literal["own", "replay"]
    condition: str | None
    replay: Replay


@dataclass(frozen=True)
class ProbePlanner:
    """The generic probe's configuration (see :func:`cotaudit.solvers.probe.probe_sweep`):
    ``probe`` (``trace`` or ``selfcommit``), the answer ``form``'s name, the ``forced`` answers,
    the ``schedule``, the condition replayed under and the verification lead recorded.

    With the estimator ``exact`` or ``both`` each prompt is also read exactly against its own
    reference (the form's ``target_reference`` of its target and choices for ``trace``, its
    ``final_reference`` of the trace's final answer for ``selfcommit``), and the points are
    stored beside the answers (``p_exact``, ``covered_exact``, ``letters_exact``)."""

    probe: ProbeKind
    form: str
    forced: ForcedAnswers
    schedule: Schedule
    replay_under: str | None = None
    verification_lead: str | None = None

    def __post_init__(self) -> None:
        get_form(self.form)  # an unknown form is one clear error when the probe is built

    def plan(
        self, engine: ProbeEngine, trace: Trace, unders: Sequence[Under], final_text: str
    ) -> SweepPlan:
        """The sample's plan: ``trace`` (its ``span`` set) swept under each of ``unders`` at
        the sample's schedule (:meth:`sample_schedule`; runs of cuts inside a recorded step's
        think block close it first), ``final_text`` the trace's final-answer text (read for
        ``selfcommit``'s exact reference)."""
        references: dict[str, ExactReference | None] = {
            u.name: self.reference(u.replay, unders[0].replay, final_text) for u in unders
        }
        ends = step_ends(trace, engine, 0) if trace.steps else []
        prompts = [
            SweptPrompt(
                u.name,
                u.replay.messages,
                {"condition": u.condition, "sample_id": u.replay.sample_id}
                | ({"step_ends": ends} if ends else {}),
                exact=references[u.name],
            )
            for u in unders
        ]
        schedule = self.sample_schedule(engine, trace, ends)
        cut: Cut = at_schedule(schedule)
        if any(THINK_OPEN in step.text for step in trace.steps):  # reasoning inside the steps
            cut = closing_think_blocks(
                schedule, lambda t: inside_think(engine.detokenize(trace.ids[:t]))
            )
        sample = ProbeSample(self, trace, list(unders), references, schedule, ends)
        return SweepPlan(prompts, cut, sample.record)

    def reference(self, under: Replay, own: Replay, final_text: str) -> ExactReference | None:
        """What the exact estimator reads ``under``'s answers against (None when it does not
        read exactly): the form's reference of its target (``trace``; the probed sample's own
        when it names none) or of the trace's final answer (``selfcommit``), in its choices."""
        if not reads_exact(self.forced.estimator):
            return None
        form = get_form(self.form)
        choices = under.choices if under.choices is not None else own.choices
        if self.probe == "trace":
            target = under.target if under.target is not None else own.target or []
            return form.target_reference(target, choices)
        return form.final_reference(final_text, own.choices, choices)

    def sample_schedule(self, engine: ProbeEngine, trace: Trace, ends: list[int]) -> Schedule:
        """The schedule filled in for the sample: ``steps`` at the trace's step ends (its end
        for a trace without steps), ``sentences`` at its span's sentence ends (at most
        ``max_cuts``; 0 without any); the others as they are."""
        if self.schedule.kind == "steps":
            return self.schedule.model_copy(
                update={"steps": tuple(ends) if ends else (len(trace.ids),)}
            )
        if self.schedule.kind == "sentences":
            start, stop = trace.span or (0, len(trace.ids))
            cuts = sentence_ends(trace.ids[start:stop], engine.detokenize)
            return self.schedule.model_copy(
                update={"steps": tuple(capped(cuts, self.schedule.max_cuts)) or (0,)}
            )
        return self.schedule


@dataclass(frozen=True)
class ProbeSample:
    """One sample's probe as planned: the trace, the prompts it is probed under, their exact
    references, the sample's schedule and its step ends; :meth:`record` makes its record."""

    planner: ProbePlanner
    trace: Trace
    unders: list[Under]
    references: dict[str, ExactReference | None]
    schedule: Schedule
    ends: list[int]

    def record(self, sweep: Sweep) -> ProbeRecord:
        """The sample's :class:`~cotaudit.probing.record.ProbeRecord` of ``sweep``."""
        planner, forced, estimator = (
            self.planner,
            self.planner.forced,
            self.planner.forced.estimator,
        )
        return ProbeRecord(
            probe=planner.probe,
            form=planner.form,
            tag=forced.tag,
            cut_tag=sweep.tag,
            think_source=sweep.split.source,
            think_closed=sweep.split.closed,
            response=sweep.trace.text,
            final_text=sweep.split.final_text,
            trace_tokens=sweep.length,
            offset=sweep.start,
            generation_truncated=sweep.trace.stop_reason == "max_tokens",
            context_truncated=sweep.context_truncated,
            schedule=self.schedule,
            positions=self.schedule.positions(sweep.length),
            curve_fractions=self.schedule.curve_fractions(sweep.length),
            probed=sweep.probed,
            k=forced.k,
            temperature=forced.temperature,
            contexts=[self.context(sweep, u) for u in self.unders],
            replay_under=planner.replay_under,
            estimator=estimator,
            exact_temperature=sweep.exact_temperature if reads_exact(estimator) else None,
            steps=[
                StepMark(kind=step.kind, name=step.name, end=end)
                for step, end in zip(self.trace.steps, self.ends, strict=True)
            ]
            or None,
            think_cuts=sweep.think_cuts or None,
            verification_lead="" if self.trace.submitted else planner.verification_lead,
        )

    def context(self, sweep: Sweep, under: Under) -> ContextAnswers:
        """The answers forced under one prompt, with what they are verified against."""
        return ContextAnswers(
            name=under.name,
            condition=under.condition,
            answers=sweep.answers[under.name] if samples(self.planner.forced.estimator) else None,
            sample_id=under.replay.sample_id,
            target=under.replay.target,
            choices=under.replay.choices,
            **self.exact_fields(sweep, under.name),
        )

    def exact_fields(self, sweep: Sweep, name: str) -> dict[str, Any]:
        """The exact estimator's fields of prompt ``name`` (none when it was not read
        exactly)."""
        ref = self.references[name]
        if ref is None:
            return {}
        points = sweep.exact[name]
        return {
            "reference_exact": None if ref.value is None else str(ref.value),
            "p_exact": None if ref.value is None else [p.p for p in points],
            "covered_exact": [p.covered for p in points],
            "letters_exact": ([dict(p.letters or {}) for p in points] if ref.letters else None),
        }
