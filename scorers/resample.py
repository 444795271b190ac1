"""Scorers of the resampling probe: the sample's values
(:func:`cotaudit.probing.resample_record.resample_values`), its record in the score's metadata,
and an explanation listing the CoT's sentences, the most important first, each with a bar.

:func:`resample_scorer` reads the record a study's solver built; :func:`resample_probe_scorer`
(the generic probe's, ``-T probe=resample``) first reads every drawn answer with the wrapped
task's own scorer, as the generic probe verifies forced answers
(:mod:`cotaudit.scorers.probe`): a continuation's final answer is the canonical answer of a
copy whose output is the final-answer text of the response up to the cut followed by the
continuation (after its think block), ended by its token limit when it used its whole budget;
a forced answer's, of a copy stating it after the form's lead. The reference is the canonical
answer of the trace's own final-answer text (``own``) or of a copy stating the sample's target
(``gold``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from inspect_ai.scorer import Metric, Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from cotaudit.display.text import bar, fmt_number, md_text, sparkline
from cotaudit.probing.forms import AnswerForm, get_form
from cotaudit.probing.resample_record import (
    DRAWS_KEY,
    METRICS,
    STORE_KEY,
    STUDY_PREFIX,
    ResampleDraws,
    ResampleRecord,
    resample_values,
)
from cotaudit.probing.resampling import CutRollouts
from cotaudit.scorers.metric_table import inspect_metrics
from cotaudit.scorers.probe import Verifier, answer_of, verify_answers
from cotaudit.solvers.audit import record_verdicts, verdict_span
from cotaudit.solvers.resample import note_cut

resample_summary: Callable[..., Metric] = inspect_metrics(METRICS)["resample_summary"]

SHOWN_SENTENCES = 12
"""Sentences listed in a sample's explanation (the most important first)."""


def explanation_of(record: ResampleRecord) -> str:
    """Markdown: the two curves as sparklines, then the sentences by |RI| (largest first), each
    with a bar of |RI|, RI with its 95% interval over continuations, and the sentence (escaped)."""
    lines = [
        f"r(t), continuations reaching {record.reference} (n = {record.n} per cut): "
        f"`{sparkline(record.resampled)}`",
        f"forced (k = {record.k}): `{sparkline(record.forced)}`",
        "",
    ]
    order = sorted(
        range(len(record.chunks)),
        key=lambda i: -abs(record.chunks[i].resampling or 0.0),
    )
    for i in order[:SHOWN_SENTENCES]:
        chunk = record.chunks[i]
        low, high = chunk.resampling_ci
        lines.append(
            f"- `{bar(abs(chunk.resampling or 0.0))}` sentence {i + 1}: RI "
            f"{fmt_number(chunk.resampling)} [{fmt_number(low)}, {fmt_number(high)}], CI "
            f"{fmt_number(chunk.counterfactual)}: {md_text(chunk.text)}"
        )
    return "\n".join(lines)


def beside_study_score(
    state: TaskState, value: dict[str, Any], metadata: dict[str, Any], explanation: str
) -> str:
    """A study score with ``-T resample``: the resampling values join ``value`` as
    ``resample_<key>`` and the record ``metadata`` as ``resample`` (both in place); returns the
    explanation with the sentences by importance after it (unchanged when nothing was
    resampled)."""
    if state.store.get(STORE_KEY) is None:
        return explanation
    record = ResampleRecord.from_store(state.store)
    value |= {STUDY_PREFIX + k: v for k, v in resample_values(record).items()}
    metadata["resample"] = record.model_dump(mode="json")
    return explanation + "\n\n**Resampling from sentence cuts**\n\n" + explanation_of(record)


@scorer(metrics=[resample_summary()])
def resample_scorer() -> Scorer:
    """The resampling probe's record read back: value = the sample's values (empty when the CoT
    had no final answer), metadata ``resample`` = the record."""

    async def score(state: TaskState, target: Target) -> Score:
        if state.store.get(STORE_KEY) is None:
            return Score(value={}, explanation="No final answer in the CoT: not resampled.")
        record = ResampleRecord.from_store(state.store)
        return Score(
            value=resample_values(record),
            answer=str(record.reference),
            explanation=explanation_of(record),
            metadata={"resample": record.model_dump(mode="json")},
        )

    return score


Canonical = Callable[[str, bool], Awaitable[str | None]]
"""The canonical answer of a text as the task's scorer reads a copy stating it (the flag: the
text used its whole token budget)."""


def canonical_reader(verifier: Verifier, form: AnswerForm) -> Canonical:
    """The canonical answer of a text, read by ``verifier`` (the task's scorer) on a copy whose
    output is the text, in the probed sample's dataset letters."""

    async def canonical(text: str, truncated: bool) -> str | None:
        scored = await verifier.score(text, "max_tokens" if truncated else "stop")
        return answer_of(scored, text, form, verifier.selected(text), verifier.choices)

    return canonical


async def reference_of(
    draws: ResampleDraws, canonical: Canonical, form: AnswerForm, target: Target
) -> str | None:
    """The answer the continuations are to reach: of a copy stating the sample's target
    (``gold``), or of the trace's own final-answer text (``own``; None without one)."""
    if draws.reference == "gold":
        return await canonical(form.verification_text(target.text), False)
    final = draws.final_text
    return await canonical(final, draws.generation_truncated) if final.strip() else None


async def read_rollouts(
    draws: ResampleDraws, canonical: Canonical, reference: str
) -> list[CutRollouts]:
    """Each cut's continuations read as canonical answers, with their dissimilarity flags; each
    cut noted in the transcript against ``reference``."""
    rollouts = []
    async with verdict_span():
        for t, finals, flags in zip(
            draws.cuts, draws.continuation_finals(), draws.dissimilar, strict=True
        ):
            answers = [await canonical(text, truncated) for text, truncated in finals]
            rollouts.append(CutRollouts(tuple(answers), tuple(flags)))
            note_cut(t, answers, reference, flags)
    return rollouts


@scorer(metrics=[])  # the run metric is attached by the probe task (its condition key)
def resample_probe_scorer(task_scorer: Scorer, *, score_key: str | None = None) -> Scorer:
    """The generic probe's resampling, its answers read by ``task_scorer`` (the module
    docstring): value = the sample's values (empty without a reference answer), answer = the
    reference, metadata ``resample`` = the record built from the canonical answers."""

    async def score(state: TaskState, target: Target) -> Score:
        draws = ResampleDraws.from_store(state.store)
        form = get_form(draws.form)
        verifier = Verifier(task_scorer, state, target, score_key, kept_under=DRAWS_KEY)
        canonical = canonical_reader(verifier, form)
        reference = await reference_of(draws, canonical, form, target)
        if reference is None:
            return Score(
                value={},
                explanation=f"No {draws.reference} final answer: nothing to reach, not resampled.",
                metadata={"resample_draws": draws.model_dump(mode="json")},
            )
        async with verdict_span():
            values, forced = await verify_answers(
                verifier, form, draws.forced, verifier.choices, draws.verification_lead
            )
            record_verdicts("own", draws.cuts, forced, values, reference=reference)
        record = draws.record(reference, await read_rollouts(draws, canonical, reference), forced)
        return Score(
            value=resample_values(record),
            answer=reference,
            explanation=explanation_of(record),
            metadata={"resample": record.model_dump(mode="json")},
        )

    return score
