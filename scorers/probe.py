"""Scorer of the generic probe: verify each forced answer with the wrapped task's own scorer.

For a forced answer a (clipped to its first line), the *verification copy* is a copy of the
sample's state whose output (and last assistant message) is the answer form's ``lead + a``
("ANSWER: B", "The final answer is 18", "The answer is Paris"), whose choices are those of the
prompt a was forced under, in the order that prompt shows them, re-marked from that text as
Inspect's ``multiple_choice()`` does. The task's scorer then scores the copy against the target
of the sample whose prompt a was forced under: the sample's own for its own prompt, the
sibling's for a replayed answer (both recorded per prompt,
:class:`cotaudit.probing.record.ContextAnswers`). So a letter forced under a sibling whose
choices are ordered differently is read in the sibling's order and checked against the
sibling's target.

- TRACE: p(t) = mean over the k forced answers of the copy's score value (CORRECT = 1).
- Self-commitment: a_final = the canonical answer (answer form) of ``Score.answer`` when the task
  scorer scores a copy whose output is the trace's final-answer text (after the think block), and
  c(t) = share of the k forced answers whose copy's ``Score.answer`` has the same canonical
  answer. A trace with no final answer has no c(t) (summaries NaN, ``has_final`` = 0). For a form
  that reads choices (:attr:`cotaudit.probing.forms.AnswerForm.reads_choices`) on a sample with
  choices, the canonical answer of a copy is the choices marked in it, named by the probed
  sample's dataset letters (:func:`cotaudit.probing.choices.dataset_letters`), so an answer
  forced under a differently ordered prompt matches a_final when it picks the same choice.

Value keys: the summaries of the own-prompt curve; with ``replay_under`` the same keys with
``_replay`` for the replayed curve (NaN for samples of the replay condition itself);
``task_score``: the task scorer's value of the unmodified state.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from copy import deepcopy

from inspect_ai.model import ChatMessageAssistant, ModelOutput, StopReason
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Metric,
    Score,
    Scorer,
    Target,
    accuracy,
    scorer,
    stderr,
    value_to_float,
)
from inspect_ai.solver import Choice, Choices, TaskState

from cotaudit.answers import extract_final_answer, normalize_number
from cotaudit.probing.choices import ShownChoice, shown_letters
from cotaudit.probing.curves import DEFAULT_THETAS
from cotaudit.probing.forms import AnswerForm, get_form
from cotaudit.probing.metrics import ATTACHED, METRICS, MetricSet, ProbeMetricOptions
from cotaudit.probing.record import ContextAnswers, ProbeRecord
from cotaudit.probing.scoring import ProbeScoring, Verdicts, VerifiedAgainst
from cotaudit.scorers.metric_table import inspect_metrics
from cotaudit.solvers.audit import record_verdicts, verdict_span
from cotaudit.solvers.probe import shown_choices
from cotaudit.studies.selfcommit.metrics import primary_summary

_to_float = value_to_float()


class VerificationError(RuntimeError):
    """The wrapped task's scorer failed on a verification copy (a forced answer)."""


class Verifier:
    """The wrapped task's scorer applied to verification copies of one sample's state, against the
    target and choices of the prompt the answers were forced under (``choices`` in the order
    that prompt shows them; None: the state's own). ``kept_under``: the sample store key that
    holds the model's answers, named when the task's scorer fails on one."""

    def __init__(
        self,
        task_scorer: Scorer,
        state: TaskState,
        target: Target,
        score_key: str | None,
        choices: Sequence[ShownChoice] | None = None,
        kept_under: str = "probe",
    ) -> None:
        self.task_scorer, self.state, self.target = task_scorer, state, target
        self.kept_under = kept_under
        self.score_key = score_key
        self.choices = list(choices) if choices is not None else shown_choices(state.choices)
        self._cache: dict[tuple[str, StopReason], Score] = {}
        self._selected: dict[str, list[ShownChoice]] = {}
        letters = [t for t in target.target if t.strip()]
        self.multiple_correct = len(letters) > 1 or any("," in t for t in letters)

    async def score(self, text: str, stop_reason: StopReason = "stop") -> Score:
        """The task scorer's score of a copy of the state whose output is ``text``, ended for
        ``stop_reason`` (``"max_tokens"`` for a response cut by its token limit)."""
        key = (text, stop_reason)
        if key not in self._cache:
            copy = deepcopy(self.state)
            copy.output = ModelOutput.from_content(
                model=str(self.state.model), content=text, stop_reason=stop_reason
            )
            if copy.messages and isinstance(copy.messages[-1], ChatMessageAssistant):
                copy.messages[-1] = ChatMessageAssistant(content=text, model=str(self.state.model))
            if self.choices:
                copy.choices = Choices(
                    [
                        Choice(value=c.value, correct=None, original_position=c.original_position)
                        for c in self.choices
                    ]
                )
                remark_choices(copy, self.multiple_correct)
                self._selected[text] = [
                    c for c, m in zip(self.choices, copy.choices, strict=True) if m.correct is True
                ]
            try:
                score = await self.task_scorer(copy, self.target)
            except Exception as e:
                raise VerificationError(
                    f"sample {self.state.sample_id!r}: the task's scorer raised on the "
                    f"verification copy {text!r} ({type(e).__name__}: {e}); the model's answers "
                    f"are kept in the sample's store under {self.kept_under!r}, so a fixed "
                    "scorer can rescore the log without running the model again"
                ) from e
            if score is None:
                raise ValueError("the task's scorer returned no score for a verification copy")
            self._cache[key] = score
        return self._cache[key]

    def selected(self, text: str) -> list[ShownChoice] | None:
        """The choices marked in the (already scored) copy for ``text``; None without choices."""
        return self._selected.get(text) if self.choices else None

    def value(self, score: Score) -> float:
        """The score's value as a float (CORRECT = 1, INCORRECT = 0, ...)."""
        value = score.value
        if isinstance(value, dict):
            if self.score_key is None or self.score_key not in value:
                raise ValueError(
                    f"the task's scorer returns a dict value {sorted(value)}: pass "
                    "score_key naming the entry that says whether an answer is correct"
                )
            value = value[self.score_key]
        return float(_to_float(value))

    def target_shown(self) -> str | None:
        """The letters the target's choices have in the prompt's order (None without choices)."""
        return shown_letters(self.target.target, self.choices) if self.choices else None


def context_verifier(
    task_scorer: Scorer,
    state: TaskState,
    target: Target,
    score_key: str | None,
    ctx: ContextAnswers,
) -> Verifier:
    """The verifier of one prompt's forced answers: its recorded target and choices where the
    record has them, else the sample's."""
    return Verifier(
        task_scorer,
        state,
        Target(ctx.target) if ctx.target is not None else target,
        score_key,
        choices=ctx.choices,
    )


def remark_choices(state: TaskState, multiple_correct: bool) -> None:
    """Mark ``state.choices`` from ``state.output`` as ``multiple_choice()`` does after
    generating (nothing marked when no answer parses)."""
    from inspect_ai.solver._multiple_choice import (
        parse_answers,
        set_choices_based_on_generated_response,
    )

    for i in range(len(state.choices)):
        state.choices.mark_choice(i, None)  # type: ignore[arg-type]
    answers = parse_answers(state, multiple_correct)
    if answers:
        set_choices_based_on_generated_response(state, answers)


def answer_of(
    score: Score,
    text: str,
    form: AnswerForm,
    selected: list[ShownChoice] | None = None,
    letters_of: Sequence[ShownChoice] | None = None,
) -> str | None:
    """Canonical answer of a scored text: for a form that reads choices, on a sample with
    choices (``selected`` = the copy's marked choices), the form's answer of the marked choices
    among ``letters_of`` (the probed sample's choices;
    :meth:`~cotaudit.probing.forms.AnswerForm.choice_answer`); else from ``Score.answer``, else
    from the text itself."""
    if form.reads_choices and selected is not None and letters_of:
        return form.choice_answer(selected, letters_of)
    return form.extract(score.answer if score.answer is not None else text)


async def verify_answers(
    verifier: Verifier,
    form: AnswerForm,
    rows: list[list[str]],
    letters_of: Sequence[ShownChoice] | None,
    lead: str | None = None,
) -> tuple[list[list[float]], list[list[str | None]]]:
    """The task scorer's value and the canonical answer of each forced answer in ``rows``, as
    its verification copy (``lead`` + the answer's first line) reads."""
    values, answers = [], []
    for row in rows:
        texts = [form.verification_text(a, lead) for a in row]
        scores = [await verifier.score(t) for t in texts]
        values.append([verifier.value(s) for s in scores])
        answers.append(
            [
                answer_of(s, t, form, verifier.selected(t), letters_of)
                for s, t in zip(scores, texts, strict=True)
            ]
        )
    return values, answers


async def final_answer(rec: ProbeRecord, own: Verifier, form: AnswerForm) -> str | None:
    """The canonical answer of the trace's final-answer text, read by the task's scorer on a
    copy stating it (ended by its token limit where the generation was); None without one."""
    final_text = rec.final_text
    if not final_text.strip():
        return None
    scored = await own.score(final_text, "max_tokens" if rec.generation_truncated else "stop")
    return answer_of(scored, final_text, form, own.selected(final_text), own.choices)


@scorer(metrics=[])  # metrics attached by probe_task
def probe_scorer(
    task_scorer: Scorer,
    *,
    thetas: Sequence[float] = DEFAULT_THETAS,
    score_key: str | None = None,
) -> Scorer:
    """TRACE pass curve or self-commitment c(t) of the probe solver's forced answers, verified
    by ``task_scorer`` (the wrapped task's own scorer); the value, metadata and explanation are
    :class:`cotaudit.probing.scoring.ProbeScoring`'s."""
    primary = primary_summary(thetas)
    guide = float(primary.removeprefix("tau_")) if primary.startswith("tau_") else None

    async def score(state: TaskState, target: Target) -> Score:
        rec = ProbeRecord.from_store(state.store)
        form = get_form(rec.form)
        verifiers = {
            ctx.name: context_verifier(task_scorer, state, target, score_key, ctx)
            for ctx in rec.contexts
        }
        own = verifiers["own"]  # its choices: the probed sample's dataset letters
        own_score = await task_scorer(state, target)
        task_score = own.value(own_score) if own_score is not None else math.nan
        a_final = await final_answer(rec, own, form) if rec.probe == "selfcommit" else None
        verdicts = {}
        for ctx in rec.contexts:
            if ctx.answers is not None:
                async with verdict_span():
                    values, answers = await verify_answers(
                        verifiers[ctx.name], form, ctx.answers, own.choices, rec.verification_lead
                    )
                    record_verdicts(ctx.name, rec.probed, answers, values, reference=a_final)
                verdicts[ctx.name] = Verdicts(values, answers)
        parts = ProbeScoring(rec, thetas, guide).score(
            task_score,
            own_score.answer if own_score else None,
            a_final,
            verdicts,
            {n: VerifiedAgainst(v.target.target, v.target_shown()) for n, v in verifiers.items()},
        )
        return Score(
            value=parts.value,
            answer=parts.answer,
            explanation=parts.explanation,
            metadata=parts.metadata,
        )

    return score


@scorer(metrics=[accuracy(), stderr()])
def final_integer() -> Scorer:
    """CORRECT when the response's final integer answer equals the integer target.

    The answer is the one the response states (:func:`cotaudit.answers.extract_final_answer`,
    ``reading="stated"``: the last ``\\boxed{}``, else ``#### N``, else the number after the last
    "final answer is", else after the last "answer is" unless the response hit its token limit,
    else a response that is one number), the studies' reading of a GSM8K response; a response
    that states none is INCORRECT. ``Score.answer`` is it as text (None when none is stated)."""

    async def score(state: TaskState, target: Target) -> Score:
        answer = extract_final_answer(
            state.output.completion,
            reading="stated",
            truncated=state.output.stop_reason == "max_tokens",
        )
        gold = normalize_number(target.text)
        return Score(
            value=CORRECT if answer is not None and answer == gold else INCORRECT,
            answer=None if answer is None else str(answer),
            explanation=state.output.completion,
        )

    return score


PROBE_METRICS = inspect_metrics(METRICS)
"""The probe's run metrics (:mod:`cotaudit.probing.metrics`) as Inspect ``@metric`` functions."""
probe_summary = PROBE_METRICS["probe_summary"]


def probe_metrics(
    options: ProbeMetricOptions, metric_set: MetricSet = "compact"
) -> list[Metric | dict[str, list[Metric]]]:
    """The probe scorer's run metric for ``metric_set`` (``-T metrics``:
    :data:`cotaudit.probing.metrics.ATTACHED`), created with the run's ``options`` (attached by
    ``probe_task``)."""
    return [PROBE_METRICS[ATTACHED[metric_set]](**options.passed())]
