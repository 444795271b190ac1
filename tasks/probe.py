"""Probe any Inspect task: cut the trace its own solver chain writes, force answers, verify them.

The wrapped task's dataset and solver chain produce the trace (the last assistant message); the
probe solver then cuts its reasoning (the think block when there is one) at token positions,
appends a forced-answer tag and samples k answers per prefix; the probe scorer verifies each
with the task's own scorer:

- ``probe=trace``: p(t) = the task scorer's verdict on the forced answers -> TRACE AUC,
  Pass@first, first pass (fractions 10/25/50/75/100% plus a 0% probe, k = 1, greedy).
- ``probe=selfcommit``: c(t) = share of forced answers equal to the model's own final answer
  as the task's scorer extracts it (stride 30 tokens, k = 5, temperature 0.7).
- ``probe=resample``: from c_0 = 0 and each sentence end of the trace, ``-T resample``
  continuations of the trace to its end (default 10, temperature 0.7); r(t) = share whose final
  answer, as the task's scorer reads it, equals the trace's own (or the target:
  ``-T resample_reference=gold``), each sentence's resampling and counterfactual importance, and
  k forced answers on the same cuts beside them (docs/resample.md).
- ``replay_under=<condition>``: also force answers with the same trace tokens under the prompt
  of the sample's sibling of that condition (same ``pair_id``), e.g. hinted traces under the
  honest prompt; those answers are verified against the sibling's target and choices (in the
  order the sibling's prompt shows them).

The run's headline (the log list's score): TRACE, the mean AUC; self-commitment, the AUROC of
tau_first(0.8) between a reference condition and the others when the samples have conditions,
else its mean; each with its bootstrap interval over units and ``n_units`` beside it.

``-T estimator=exact`` (or ``both``) also reads, at each prefix, the probability that a forced
answer's canonical form is the reference (the canonical target for ``trace``, the trace's own
final answer for ``selfcommit``) by teacher forcing (:mod:`cotaudit.probing.exact`); its
summaries are the ``<key>_exact`` value keys and the headline follows it (``auc_exact``,
``tau_0.8_exact``).

    inspect eval tasks/probe.py -T task=cotaudit/gsm8k_mc -T probe=trace --model hf-probe/default
    inspect eval tasks/probe.py -T task=path/to/my_task.py@my_task -T probe=selfcommit
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai import Task, task, task_with
from inspect_ai._eval.task.task import resolve_scorer_metrics
from inspect_ai._util.registry import registry_params
from inspect_ai.dataset import Sample
from inspect_ai.log import HeadlineMetric
from inspect_ai.solver import Solver

from cotaudit.display.headline import HEADLINES_KEY, HeadlineSpec
from cotaudit.params import ParameterError
from cotaudit.prerequisite import checked_task
from cotaudit.probing.display import sample_table
from cotaudit.probing.exact import exact_temperature, reads_exact
from cotaudit.probing.forms import AnswerForm, TaskFacts, detect_form, get_form
from cotaudit.probing.metrics import ProbeMetricOptions
from cotaudit.probing.positions import Schedule
from cotaudit.probing.settings import ProbeSettings, probe_settings
from cotaudit.probing.summaries import EXACT_SUFFIX, Headline, value_keys
from cotaudit.scorers.probe import probe_metrics, probe_scorer
from cotaudit.scorers.resample import resample_probe_scorer, resample_summary
from cotaudit.scorers.viewer import viewer_config
from cotaudit.solvers.probe import ReplayPrompt, SiblingPrompts, TraceReader, probe_sweep
from cotaudit.solvers.resample import resample_sweep
from cotaudit.studies.selfcommit.metrics import primary_summary

PROBE_VERSION = 1
"""The probe task's version (``Task.version``; logs written before versions read 0)."""


def resolve_task(spec: Task | str, task_args: dict[str, Any] | None = None) -> Task:
    """A Task from a Task, a file spec (``path.py`` or ``path.py@name``) or a registry name
    (``cotaudit/selfcommit``, ``inspect_evals/gsm8k``), created with ``task_args``.

    A relative file path is looked up from the current directory, then from the directory the
    command was started in (``$PWD``: Inspect runs a task file from its own folder); a file in
    neither is an error that names the path as given and where it was looked for from the
    command's directory."""
    if isinstance(spec, Task):
        if task_args:
            raise ParameterError("task_args apply to a task name or file, not a Task object")
        return spec
    from inspect_ai._eval.loader import load_tasks

    file, _, name = spec.partition("@")
    if file.endswith(".py") and not Path(file).exists():
        launched = Path(os.environ.get("PWD", ".")) / file
        if Path(file).is_absolute() or not launched.exists():
            raise ParameterError(
                f"-T task={spec!r}: no file {file} (resolved from where the command ran: "
                f"{Path(file) if Path(file).is_absolute() else launched})"
            )
        spec = str(launched) + (f"@{name}" if name else "")
    try:
        tasks = load_tasks([spec], dict(task_args or {}))
    except Exception as e:  # noqa: BLE001 - name the spec the user gave
        raise ParameterError(f"-T task={spec!r}: cannot load the task: {e}") from e
    if len(tasks) != 1:
        raise ParameterError(
            f"-T task={spec!r}: names {len(tasks)} tasks; name one (path.py@task_name)"
        )
    return tasks[0]


def _samples(t: Task) -> list[Sample]:
    try:
        return list(t.dataset)
    except TypeError:  # a dynamic sample source: no dataset to index
        return []


def task_facts(t: Task, samples: Sequence[Sample]) -> TaskFacts:
    """What answer-form detection reads of a task (:func:`cotaudit.probing.forms.detect_form`):
    whether its samples have choices, whether a scorer matches numbers
    (``match(numeric=True)``), and the samples' targets."""
    return TaskFacts(
        has_choices=any(s.choices for s in samples),
        numeric_scorer=any(registry_params(sc).get("numeric") is True for sc in t.scorer or []),
        targets=tuple(s.target for s in samples),
    )


def dataset_conditions(samples: Sequence[Sample], condition_key: str) -> list[str]:
    """The distinct ``condition_key`` metadata values of the samples, in dataset order."""
    return list(
        dict.fromkeys(
            str(s.metadata[condition_key])
            for s in samples
            if s.metadata and condition_key in s.metadata
        )
    )


def probe_headline(
    probe: str,
    conditions: Sequence[str],
    thetas: Sequence[float],
    *,
    reference_condition: str | None,
    replay_under: str | None,
    pair_key: str,
    condition_key: str,
    estimator: str = "sampled",
) -> Headline:
    """The run's headline: TRACE, the mean AUC; self-commitment, the AUROC of tau_first(0.8)
    (the middle theta when 0.8 is not among ``thetas``) between the reference condition and the
    others when the task's samples have two or more conditions, else its mean. The reference is
    ``reference_condition``, else ``replay_under``, else the dataset's first condition. The
    summary follows the estimator: the exact curve's (``auc_exact``, ``tau_0.8_exact``) for
    ``exact``, else the sampled curve's (a run of both adds the exact one beside it:
    :func:`exact_headline`). A self-commitment headline counts the samples it leaves out for a
    response without a final answer (:attr:`Headline.dropped_key`)."""
    suffix = EXACT_SUFFIX if estimator == "exact" else ""
    if probe == "trace":
        if reference_condition is not None:
            raise ParameterError("-T reference_condition: applies to probe=selfcommit only")
        return Headline(f"auc{suffix}", None, pair_key)
    summary = primary_summary(thetas) + suffix
    if len(conditions) < 2:
        if reference_condition is not None:
            raise ParameterError(
                f"-T reference_condition={reference_condition!r}: the task's samples have "
                f"{len(conditions)} {condition_key!r} value(s) {conditions}; an AUROC needs two"
            )
        return Headline(summary, None, pair_key, drops_no_answer=True)
    reference, given = (
        (reference_condition, "-T reference_condition")
        if reference_condition is not None
        else (replay_under, "-T replay_under")
        if replay_under is not None
        else (conditions[0], "")
    )
    if reference not in conditions:
        raise ParameterError(
            f"{given}={reference!r}: not a {condition_key!r} value of the task's samples; "
            f"choose from {conditions}"
        )
    return Headline(summary, reference, pair_key, drops_no_answer=True)


def exact_headline(headline: Headline, estimator: str) -> Headline | None:
    """The exact estimator's headline beside the sampled ``headline`` in a run of both: the
    same statistic of the exact curve's summary, its n under ``n_units_exact``; None for
    another estimator."""
    if estimator != "both":
        return None
    return Headline(
        f"{headline.summary}{EXACT_SUFFIX}",
        headline.reference,
        headline.pair_key,
        f"n_units{EXACT_SUFFIX}",
        headline.drops_no_answer,
    )


@ProbeSettings.parameters_of(
    first=[inspect.Parameter("task", inspect.Parameter.POSITIONAL_OR_KEYWORD)],
    last=[inspect.Parameter("replay_prompt", inspect.Parameter.KEYWORD_ONLY, default=None)],
)
def probe_task(
    task: Task | str,
    probe: str = "trace",
    *,
    replay_prompt: ReplayPrompt | None = None,
    **params: Any,
) -> Task:
    """``task`` with the truncate-and-force-answer probe after its solver chain.

    Args:
      task: A Task, ``path.py[@name]`` or a registry name.
      probe: ``trace`` or ``selfcommit``; it and the other keyword arguments are the probe's
        parameters, :class:`cotaudit.probing.settings.ProbeSettings` (their meaning and
        checks; each bad value raises a :class:`~cotaudit.params.ParameterError` naming it).
      replay_prompt: (state, condition) -> prompt to replay under, a ``Replay`` or a bare prompt
        (default: the sibling sample's prompt as the task's solver chain builds it, with the
        sibling's target and choices).
    """
    return probe_of(task, probe_settings(probe, **params), replay_prompt)


def probe_of(
    task: Task | str,
    settings: ProbeSettings,
    replay_prompt: ReplayPrompt | None = None,
    read_trace: TraceReader | None = None,
    verification_lead: str | None = None,
) -> Task:
    """``task`` (see :func:`probe_task`) probed with ``settings``; ``read_trace`` reads each
    sample's trace after the task's chain (None: the last assistant message,
    :func:`cotaudit.solvers.probe.trace_of`); ``verification_lead``: the text forced answers
    follow in their verification copies (None: the answer form's lead)."""
    s = settings
    wrapped = resolve_task(task, s.task_args)
    if not wrapped.scorer:
        raise ParameterError(f"task {wrapped.name!r} has no scorer to verify forced answers with")
    samples = _samples(wrapped)
    form = detect_form(task_facts(wrapped, samples)) if s.answer == "auto" else get_form(s.answer)
    schedule = s.schedule()
    forced = s.forced_answers(form)
    if s.probe == "resample":
        return resample_of(wrapped, s, form, read_trace, verification_lead)
    if s.replay_under is not None and replay_prompt is None:
        replay_prompt = SiblingPrompts(
            samples, wrapped.solver, pair_key=s.pair_key, condition_key=s.condition_key
        )
    headline = probe_headline(
        s.probe,
        dataset_conditions(samples, s.condition_key),
        s.thetas,
        reference_condition=s.reference_condition,
        replay_under=s.replay_under,
        pair_key=s.pair_key,
        condition_key=s.condition_key,
        estimator=s.estimator,
    )
    beside = exact_headline(headline, s.estimator)
    sweep = probe_sweep(
        chain=wrapped.solver,
        probe=s.probe,
        form=form.name,
        forced=forced,
        schedule=schedule,
        think_close=s.think_close,
        replay_under=s.replay_under,
        condition_key=s.condition_key,
        replay_prompt=replay_prompt,
        read_trace=read_trace,
        verification_lead=verification_lead,
    )
    record = _probe_record(s, wrapped.name, form.name, forced.tag, schedule, headline, beside)
    return _probed(wrapped, s, sweep, record, headline, beside)


def _probe_record(
    settings: ProbeSettings,
    wrapped_task: str,
    answer_form: str,
    forced_answer_tag: str,
    schedule: Schedule,
    headline: Headline,
    beside: Headline | None,
) -> dict[str, Any]:
    """What the log records of a forced-answer probe (task metadata ``probe``): the probe, the
    task it wraps, the answer form and tag, the schedule, the forced answers' k, temperature
    and seed, the replay, the headline (and the exact one ``beside`` it), the estimator and
    the metric set."""
    s = settings
    return {
        "probe": s.probe,
        "wrapped_task": wrapped_task,
        "answer_form": answer_form,
        "forced_answer_tag": forced_answer_tag,
        "think_close": s.think_close,
        "schedule": schedule.model_dump(),
        "k": s.answers_k,
        "temperature": s.answer_temperature,
        "seed": s.seed,
        "replay_under": s.replay_under,
        "pair_key": s.pair_key,
        "condition_key": s.condition_key,
        "headline": headline.record(),
        "exact_headline": beside.record() if beside is not None else None,
        "estimator": s.estimator,
        "metrics": s.metrics,
        "exact_temperature": (
            exact_temperature(s.answer_temperature) if reads_exact(s.estimator) else None
        ),
    }


def _probed(
    wrapped: Task,
    settings: ProbeSettings,
    sweep: Solver,
    record: dict[str, Any],
    headline: Headline,
    beside: Headline | None,
) -> Task:
    """``wrapped`` with ``sweep`` as its solver, scored first by the probe scorer (which alone
    holds the run metrics; the task's scorers keep theirs), ``record`` in its metadata."""
    s = settings
    assert wrapped.scorer
    verifier = probe_scorer(wrapped.scorer[0], thetas=s.thetas, score_key=s.score_key)
    options = ProbeMetricOptions(
        s.probe,
        s.condition_key,
        headline.record(),
        beside.record() if beside is not None else None,
    )
    resolve_scorer_metrics([verifier], probe_metrics(options, s.metrics))
    headlines = [headline, *([beside] if beside is not None else [])]
    return task_with(
        wrapped,
        solver=sweep,
        scorer=[verifier, *wrapped.scorer],
        metrics=None,
        headline_metric=HeadlineMetric(scorer="probe_scorer", metric=headline.metric),
        name=f"{wrapped.name}_{s.probe}",
        version=PROBE_VERSION,
        viewer=viewer_config(
            sample_table(
                value_keys(
                    s.probe, s.thetas, replayed=s.replay_under is not None, estimator=s.estimator
                )
            )
        ),
        metadata=(wrapped.metadata or {})
        | {
            "study": f"probe_{s.probe}",
            "probe": record,
            HEADLINES_KEY: [h.spec().record() for h in headlines],
        },
    )


RESAMPLE_HEADLINE = HeadlineSpec("r_mean", "n_samples", "sample", "samples", bounds=(0.0, 1.0))
"""The resampling probe's headline: the mean over samples of each sample's mean r(c_i)."""


def resample_of(
    wrapped: Task,
    settings: ProbeSettings,
    form: AnswerForm,
    read_trace: TraceReader | None = None,
    verification_lead: str | None = None,
) -> Task:
    """``wrapped`` with the resampling probe (``-T probe=resample``) after its solver chain,
    scored by :func:`cotaudit.scorers.resample.resample_probe_scorer` with the task's own
    scorer; the task's scorers keep their metrics. ``read_trace`` and ``verification_lead``
    as in :func:`probe_of`."""
    s = settings
    assert wrapped.scorer
    forced = s.forced_answers(form)
    continuations = s.continuations()
    sweep = resample_sweep(
        chain=wrapped.solver,
        form=form.name,
        forced=forced,
        continuations=continuations,
        think_close=s.think_close,
        read_trace=read_trace,
        verification_lead=verification_lead,
    )
    verifier = resample_probe_scorer(wrapped.scorer[0], score_key=s.score_key)
    resolve_scorer_metrics([verifier], [resample_summary(condition_key=s.condition_key)])
    return task_with(
        wrapped,
        solver=sweep,
        scorer=[verifier, *wrapped.scorer],
        metrics=None,
        headline_metric=HeadlineMetric(
            scorer="resample_probe_scorer", metric=RESAMPLE_HEADLINE.metric
        ),
        name=f"{wrapped.name}_resample",
        version=PROBE_VERSION,
        metadata=(wrapped.metadata or {})
        | {
            "study": "probe_resample",
            "probe": {
                "probe": "resample",
                "wrapped_task": wrapped.name,
                "answer_form": form.name,
                "forced_answer_tag": forced.tag,
                "think_close": s.think_close,
                "k": forced.k,
                "temperature": forced.temperature,
                "seed": forced.seed,
                "condition_key": s.condition_key,
                "resample": continuations.model_dump(),
            },
            HEADLINES_KEY: [RESAMPLE_HEADLINE.record()],
        },
    )


@task
@checked_task
@ProbeSettings.parameters_of(
    first=[inspect.Parameter("task", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=str)]
)
def probe(task: str, **params: Any) -> Task:
    """Probe the task named by ``task`` (see :func:`probe_task` for every argument)."""
    return probe_task(task, **params)
