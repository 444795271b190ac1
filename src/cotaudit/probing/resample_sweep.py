"""The resampling probe's core: from each sentence cut of a CoT, n continuations to its end
(:func:`draw_continuations`), where their final answers land and which continuations replaced
the next sentence with a dissimilar one (:mod:`cotaudit.probing.resampling`); forced answers on
the same cuts beside them.

- :class:`CotResampler` resamples a study's CoT and reads the continuations' final answers as
  the study reads its own (selfcommit's and trace_tutor's ``-T resample=N``, the resample task);
- :class:`ResamplePlanner` is the generic probe's plan (``-T probe=resample`` on any task): the
  trace's span cut through the probe core's sweep, the draws stored raw for the task's scorer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from cotaudit.answers import Reading, extract_final_answer, extract_forced_answer
from cotaudit.engine.base import Message, PrefixRequest, ProbeEngine
from cotaudit.probing.forcing import Continuations, ForcedAnswers
from cotaudit.probing.recorded_sweep import Emit, SweepHeading, force_and_record
from cotaudit.probing.resample_record import ResampleDraws, ResampleRecord, resample_record
from cotaudit.probing.resampling import SIMILAR_AT, Answer, CutRollouts, similarity
from cotaudit.probing.sentences import capped, sentence_ends, sentences
from cotaudit.probing.sweep import Prefixes
from cotaudit.probing.sweep_plan import Force, Sweep, SweepPlan, SweptPrompt
from cotaudit.probing.trace import Trace, final_text, prompt_opens_think


async def draw_continuations(
    engine: ProbeEngine,
    prompt: Sequence[Message],
    ids: Sequence[int],
    cuts: Sequence[int],
    *,
    n: int,
    temperature: float,
    budget: int,
    seed: int,
) -> tuple[list[list[str]], list[list[bool]]]:
    """``n`` continuations of ``prompt ++ ids[:c]`` from each absolute cut c, each of at most
    ``budget - c`` tokens (the response's own budget), seeded with ``seed`` (the engine mixes
    in the cut and the row), and for each whether it used its whole budget. A cut with no
    budget left (a response cut by its token limit, at its end) continues with nothing. One
    request per cut, all at once: the engine batches them and shares each cut's prefix."""
    budgets = [budget - c for c in cuts]

    async def draw(c: int, left: int) -> list[str]:
        if left <= 0:
            return [""] * n
        request = PrefixRequest(
            list(prompt),
            list(ids),
            [c],
            "",
            k=n,
            max_tokens=left,
            temperature=temperature,
            seed=seed,
        )
        return (await engine.continue_prefixes(request))[0]

    texts = await asyncio.gather(*(draw(c, b) for c, b in zip(cuts, budgets, strict=True)))
    truncated = [
        [len(engine.tokenize(t)) >= b for t in row] for row, b in zip(texts, budgets, strict=True)
    ]
    return list(texts), truncated


def text_between(
    engine: ProbeEngine, ids: Sequence[int], cuts: Sequence[int]
) -> tuple[list[str], list[str]]:
    """The text of ``ids[:c]`` for each cut c, and the chunks: the text between consecutive
    cuts (one fewer)."""
    at = [engine.detokenize(list(ids[:c])) for c in cuts]
    return at, [b[len(a) :] for a, b in zip(at, at[1:], strict=False)]


def dissimilar_flags(texts: Sequence[str], replaced: str | None) -> tuple[bool, ...]:
    """Per continuation, whether its first sentence is less than
    :data:`~cotaudit.probing.resampling.SIMILAR_AT` similar to the chunk it replaced (none
    when nothing was replaced: the last cut)."""
    if replaced is None:
        return ()
    return tuple(similarity((sentences(t) or [""])[0], replaced) < SIMILAR_AT for t in texts)


def sentence_cuts(engine: ProbeEngine, ids: Sequence[int], max_cuts: int) -> list[int]:
    """c_0 = 0 and the token positions where the sentences of ``ids`` end, at most
    ``max_cuts`` of them (evenly spread, the end kept: :func:`~cotaudit.probing.sentences.
    capped`)."""
    return [0, *capped(sentence_ends(ids, engine.detokenize), max_cuts)]


@dataclass(frozen=True)
class Resampled:
    """A CoT as resampled: the forced answers at each cut (raw), the continuations from each
    with, for each, whether it used its whole budget, and the CoT's text up to each cut
    (``text_at``) and between consecutive cuts (``chunk_texts``)."""

    forced: list[list[str]]
    continuations: list[list[str]]
    used_budget: list[list[bool]]
    text_at: list[str]
    chunk_texts: list[str]


@dataclass(frozen=True)
class CotResampler:
    """The resampling of one CoT (``prompt``, token ``ids``) from ``cuts`` (absolute; c_0 = 0,
    then its sentence ends: :func:`sentence_cuts`) against ``target``, the answer its
    continuations are to reach: ``forced.k`` forced answers at each cut judged against it and
    ``continuations.n`` continuations of at most ``budget`` minus the cut's tokens, seeded with
    ``seed``; each continuation's final answer read with ``reading`` from the CoT's text up to
    its cut followed by it (one that used its whole budget as truncated)."""

    engine: ProbeEngine
    prompt: list[Message]
    ids: list[int]
    cuts: list[int]
    target: Answer
    continuations: Continuations
    forced: ForcedAnswers
    budget: int
    seed: int
    reading: Reading

    async def resample(self, emit: Emit) -> Resampled:
        """The forced answers at every cut (recorded to ``emit``), then the continuations."""
        rows = await force_and_record(
            self.engine,
            Prefixes(self.prompt, self.ids, self.cuts, self.forced.tag),
            SweepHeading("own", reference={"a_final": self.target}),
            k=self.forced.k,
            max_tokens=self.forced.max_tokens,
            temperature=self.forced.temperature,
            seed=self.seed,
            emit=emit,
            judge=lambda a: (extract_forced_answer(a), extract_forced_answer(a) == self.target),
        )
        texts, used_budget = await draw_continuations(
            self.engine,
            self.prompt,
            self.ids,
            self.cuts,
            n=self.continuations.n,
            temperature=self.continuations.temperature,
            budget=self.budget,
            seed=self.seed,
        )
        return Resampled(rows, texts, used_budget, *text_between(self.engine, self.ids, self.cuts))

    def rollouts(self, drawn: Resampled) -> list[CutRollouts]:
        """Per cut, the continuations' final answers and dissimilarity flags."""
        rollouts = []
        chunks = drawn.chunk_texts
        for i, texts in enumerate(drawn.continuations):
            answers = tuple(
                extract_final_answer(drawn.text_at[i] + text, self.reading, cut)
                for text, cut in zip(texts, drawn.used_budget[i], strict=True)
            )
            flags = dissimilar_flags(texts, chunks[i] if i < len(chunks) else None)
            rollouts.append(CutRollouts(answers, flags))
        return rollouts

    def record(self, drawn: Resampled, rollouts: Sequence[CutRollouts]) -> ResampleRecord:
        """The sample's :class:`~cotaudit.probing.resample_record.ResampleRecord`."""
        return resample_record(
            reference=self.target,
            cuts=self.cuts,
            cot_tokens=len(self.ids),
            rollouts=rollouts,
            chunk_texts=drawn.chunk_texts,
            forced_answers=[[extract_forced_answer(a) for a in row] for row in drawn.forced],
            n=self.continuations.n,
            temperature=self.continuations.temperature,
            max_tokens=self.budget,
            k=self.forced.k,
            seed=self.seed,
        )


NOTHING_TO_REACH = "No final-answer text after the trace: nothing to reach, none drawn."
"""The transcript's note for a trace the generic probe draws no continuations from."""


@dataclass
class Draws:
    """What the generic probe's resampling drew on one sample so far."""

    cuts: list[int] = field(default_factory=list)
    forced: list[list[str]] = field(default_factory=list)
    final_text: str = ""
    continuations: list[list[str]] = field(default_factory=list)
    truncated: list[list[bool]] = field(default_factory=list)
    prefix_texts: list[str] = field(default_factory=list)
    chunk_texts: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ResamplePlanner:
    """The generic resampling probe's configuration (see
    :func:`cotaudit.solvers.resample.resample_sweep`): the answer ``form``'s name, the
    ``forced`` answers, the ``continuations``, the verification lead recorded, and ``note``
    writing a line into the sample's transcript."""

    form: str
    forced: ForcedAnswers
    continuations: Continuations
    verification_lead: str | None
    note: Callable[[str], None]

    def plan(self, engine: ProbeEngine, trace: Trace, *, budget: int, seed: int) -> SweepPlan:
        """The sample's plan: ``trace``'s span (its ``span``, else the whole response) cut at
        c_0 = 0 and its sentence ends under its own prompt, continuations of at most
        ``budget`` minus the tokens before the cut, seeded with ``seed``."""
        start, stop = trace.span or (0, len(trace.ids))
        cuts = sentence_cuts(engine, trace.ids[start:stop], self.continuations.max_cuts)
        sample = ResampleSample(self, engine, trace, cuts, budget, seed)
        return SweepPlan([SweptPrompt("own", trace.prompt)], sample.cut, sample.record)


@dataclass(frozen=True)
class ResampleSample:
    """One sample's resampling: the trace, its cuts in the span, the budget and seed, and what
    was drawn (``draws``, filled in by :meth:`cut`)."""

    planner: ResamplePlanner
    engine: ProbeEngine
    trace: Trace
    cuts: list[int]
    budget: int
    seed: int
    draws: Draws = field(default_factory=Draws)

    async def cut(self, length: int, force: Force) -> None:
        """Force answers at the cuts within T = ``length``, then draw the continuations from
        each (none for the reference ``own`` when the trace has no final-answer text)."""
        drawn, continuations = self.draws, self.planner.continuations
        positions = [t for t in self.cuts if t <= length]
        answered = await force(positions)
        drawn.cuts, drawn.forced = positions, answered.answers["own"]
        drawn.final_text = final = final_text(self.trace, self.engine)
        if continuations.reference == "own" and not final.strip():
            self.planner.note(NOTHING_TO_REACH)
            drawn.continuations = [[] for _ in positions]
            drawn.truncated = [[] for _ in positions]
            return
        start = self.trace.span[0] if self.trace.span else 0
        absolute = [start + t for t in positions]
        drawn.continuations, drawn.truncated = await draw_continuations(
            self.engine,
            self.trace.prompt,
            self.trace.ids,
            absolute,
            n=continuations.n,
            temperature=continuations.temperature,
            budget=self.budget,
            seed=self.seed,
        )
        drawn.prefix_texts, drawn.chunk_texts = text_between(self.engine, self.trace.ids, absolute)

    def record(self, sweep: Sweep) -> ResampleDraws:
        """The sample's :class:`~cotaudit.probing.resample_record.ResampleDraws`."""
        planner, drawn, trace = self.planner, self.draws, self.trace
        chunks = drawn.chunk_texts or [""] * max(0, len(drawn.cuts) - 1)
        return ResampleDraws(
            form=planner.form,
            reference=planner.continuations.reference,
            tag=sweep.tag,
            think_source=sweep.split.source,
            think_opened_by_prompt=prompt_opens_think(self.engine, trace.prompt),
            final_text=drawn.final_text,
            generation_truncated=trace.stop_reason == "max_tokens",
            offset=sweep.start,
            cot_tokens=sweep.length,
            cuts=drawn.cuts,
            prefix_texts=drawn.prefix_texts,
            chunk_texts=chunks,
            n=planner.continuations.n,
            temperature=planner.continuations.temperature,
            max_tokens=self.budget,
            continuations=drawn.continuations,
            truncated=drawn.truncated,
            dissimilar=[
                list(dissimilar_flags(row, chunks[i] if i < len(chunks) else None))
                for i, row in enumerate(drawn.continuations)
            ],
            k=planner.forced.k,
            forced=drawn.forced,
            seed=self.seed,
            verification_lead="" if trace.submitted else planner.verification_lead,
        )
