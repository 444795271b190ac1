"""The truncate-and-force-answer loop over one sample's trace: the span it cuts
(:class:`SweepSpan`) and the rounds of forced cuts under each of the plan's prompts
(:class:`ForcingLoop`), which together make the :class:`~cotaudit.probing.sweep_plan.Sweep`
the plan's record is read from.

The span is the trace's think block (see :mod:`cotaudit.probing.think`), else the whole
response; fitted, it ends where the longest prompt + prefix + tag + answer still fit the
model's context (:func:`cotaudit.probing.sweep.fit_to_context`). Each answer is forced after
``prompt ++ response[:start + t] ++ tag`` (``tag`` = the forced-answer tag, after the think
closer inside a think block), with one seed for every prompt (common random numbers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from cotaudit.engine.base import ProbeEngine
from cotaudit.probing.exact import (
    ExactPlan,
    ExactPoint,
    exact_temperature,
    reads_exact,
    samples,
    token_classes,
)
from cotaudit.probing.forcing import ForcedAnswers
from cotaudit.probing.recorded_sweep import (
    Emit,
    SweepHeading,
    force_and_record,
    score_and_record,
)
from cotaudit.probing.sweep import Prefixes, fit_to_context
from cotaudit.probing.sweep_plan import Forced, Sweep, SweptPrompt
from cotaudit.probing.think import TraceSplit, cut_tag, split_trace, token_span
from cotaudit.probing.trace import Trace, prompt_opens_think


@dataclass(frozen=True)
class SweepSpan:
    """The tokens [start, end) of a trace's response that are cut, the split they come from,
    the tag forced after each prefix (``cut_tag`` of the forced-answer tag) and whether the span
    was shortened to fit the model's context."""

    split: TraceSplit
    start: int
    end: int
    tag: str
    context_truncated: bool = False

    @classmethod
    def of(
        cls, engine: ProbeEngine, trace: Trace, *, think: bool, think_close: str, tag: str
    ) -> SweepSpan:
        """The span of ``trace``: with ``think`` and no recorded final answer, the think block
        (:func:`~cotaudit.probing.think.split_trace`, the prompt's opening of it read from the
        engine's template; the whole response without one); else the whole response."""
        split = (
            split_trace(
                trace.text,
                opened_by_prompt=prompt_opens_think(engine, trace.prompt),
                source=trace.source or None,
            )
            if think and trace.final is None
            else TraceSplit(
                0, len(trace.text), True, trace.text if trace.final is None else trace.final, "none"
            )
        )
        start, end = (
            token_span(trace.ids, engine.detokenize, split.start, split.end)
            if split.think
            else (0, len(trace.ids))
        )
        return cls(
            split, start, end, cut_tag(tag, inside_think=split.think, think_close=think_close)
        )

    @property
    def length(self) -> int:
        """T: the span's tokens."""
        return self.end - self.start

    def fitted(
        self,
        engine: ProbeEngine,
        prompts: Sequence[SweptPrompt],
        ids: Sequence[int],
        answer_tokens: int,
    ) -> SweepSpan:
        """The span ending where every prompt + ``ids[:end]`` + tag + ``answer_tokens`` fit
        the model's context (:func:`~cotaudit.probing.sweep.fit_to_context`, prompt by prompt;
        never before ``start``)."""
        fitted, context_truncated = list(ids[: self.end]), False
        for prompt in prompts:
            fitted, cut = fit_to_context(engine, prompt.messages, fitted, self.tag, answer_tokens)
            context_truncated |= cut
        return replace(self, end=max(self.start, len(fitted)), context_truncated=context_truncated)


class ForcingLoop:
    """The rounds of forced cuts of one sample's sweep: :meth:`force` forces answers after
    ``prompt ++ ids[:start + t] ++ tag`` for each position t of a round, under every prompt in
    order (``forced.k`` sampled answers when the estimator samples, recorded by
    :func:`~cotaudit.probing.recorded_sweep.force_and_record`; the exact estimator's points for
    a prompt with an ``exact`` reference when it reads exactly, at
    :func:`~cotaudit.probing.exact.exact_temperature` of ``forced.temperature``,
    :func:`~cotaudit.probing.recorded_sweep.score_and_record`), seeded with ``seed`` for every
    prompt; every record goes to ``emit``. It keeps every position forced, in order, and per
    prompt the answers and points at each; :meth:`sweep` is the sweep as run."""

    def __init__(
        self,
        engine: ProbeEngine,
        prompts: Sequence[SweptPrompt],
        ids: Sequence[int],
        span: SweepSpan,
        forced: ForcedAnswers,
        *,
        think_close: str,
        seed: int,
        emit: Emit,
    ) -> None:
        self.engine, self.prompts, self.ids, self.span = engine, list(prompts), list(ids), span
        self.forced, self.think_close, self.seed, self.emit = forced, think_close, seed, emit
        self.read_at = exact_temperature(forced.temperature)
        self.probed: list[int] = []
        self.think_cuts: list[int] = []
        self.answers: dict[str, list[list[str]]] = {p.name: [] for p in self.prompts}
        self.exact: dict[str, list[ExactPoint]] = {
            p.name: [] for p in self.prompts if p.exact is not None
        }
        self.plans: dict[str, ExactPlan] = {}

    async def force(self, positions: list[int], closes_think: bool = False) -> Forced:
        """One round: the answers (and exact points) after each of ``positions`` under every
        prompt; with ``closes_think`` the think closer is fed before the tag."""
        cuts = [self.span.start + t for t in positions]
        tag = self.think_close + self.span.tag if closes_think else self.span.tag
        rows: dict[str, list[list[str]]] = {}
        points: dict[str, list[ExactPoint]] = {}
        for prompt in self.prompts:
            prefixes = Prefixes(prompt.messages, self.ids, cuts, tag)
            heading = SweepHeading(prompt.name, self.span.start, prompt.reference)
            rows[prompt.name] = await self.sampled(prompt, prefixes, heading, len(positions))
            self.answers[prompt.name] += rows[prompt.name]
            if reads_exact(self.forced.estimator) and prompt.exact is not None:
                points[prompt.name] = await score_and_record(
                    self.engine,
                    prefixes,
                    heading,
                    self.exact_plan(prompt),
                    temperature=self.read_at,
                    max_tokens=self.forced.max_tokens,
                    emit=self.emit,
                )
                self.exact[prompt.name] += points[prompt.name]
        self.probed.extend(positions)
        if closes_think:
            self.think_cuts.extend(positions)
        return Forced(rows, points)

    async def sampled(
        self, prompt: SweptPrompt, prefixes: Prefixes, heading: SweepHeading, count: int
    ) -> list[list[str]]:
        """The k sampled answers after each of ``prefixes`` (``count`` empty rows when the
        estimator samples none)."""
        if not samples(self.forced.estimator):
            return [[] for _ in range(count)]
        return await force_and_record(
            self.engine,
            prefixes,
            heading,
            k=self.forced.k,
            max_tokens=self.forced.max_tokens,
            temperature=self.forced.temperature,
            seed=self.seed,
            emit=self.emit,
            judge=prompt.judge,
        )

    def exact_plan(self, prompt: SweptPrompt) -> ExactPlan:
        """The exact estimator's plan for ``prompt``'s reference (made once per prompt, from
        the engine's vocabulary)."""
        assert prompt.exact is not None
        if prompt.name not in self.plans:
            classes = token_classes(self.engine.vocabulary())
            self.plans[prompt.name] = prompt.exact.plan(
                self.engine.tokenize, classes, self.forced.max_tokens
            )
        return self.plans[prompt.name]

    def sweep(self, trace: Trace) -> Sweep:
        """The sweep of ``trace`` as run so far."""
        return Sweep(
            trace,
            self.span.split,
            self.span.start,
            self.span.length,
            self.span.tag,
            self.span.context_truncated,
            self.probed,
            self.answers,
            self.exact,
            self.forced.estimator,
            self.read_at,
            self.think_cuts,
        )
