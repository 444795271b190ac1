"""Probe any Inspect task: cut the trace its own solver chain writes, force answers, verify them.

The wrapped task's dataset and solver chain produce the trace (the last assistant message); the
probe solver then cuts its reasoning (the think block when there is one) at token positions,
appends a forced-answer tag and samples k answers per prefix; the probe scorer verifies each
with the task's own scorer:

- ``probe=trace``: p(t) = the task scorer's verdict on the forced answers -> TRACE AUC,
  Pass@first, first pass (fractions 10/25/50/75/100% plus a 0% probe, k = 1, greedy).
- ``probe=selfcommit``: c(t) = share of forced answers equal to the model's own final answer
  as the task's scorer extracts it (stride 30 tokens, k = 5, temperature 0.7).
- ``replay_under=<condition>``: also force answers with the same trace tokens under the prompt
  of the sample's sibling of that condition (same ``pair_id``), e.g. hinted traces under the
  honest prompt; those answers are verified against the sibling's target and choices (in the
  order the sibling's prompt shows them).

The run's headline (the log list's score): TRACE, the mean AUC; self-commitment, the AUROC of
tau_first(0.8) between a reference condition and the others when the samples have conditions,
else its mean; each with its bootstrap interval over units and ``n_units`` beside it.

    inspect eval tasks/probe.py -T task=cotaudit/gsm8k_mc -T probe=trace --model hf-probe/default
    inspect eval tasks/probe.py -T task=path/to/my_task.py@my_task -T probe=selfcommit
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from inspect_ai import Task, task, task_with
from inspect_ai._eval.task.task import resolve_scorer_metrics
from inspect_ai._util.registry import registry_params
from inspect_ai.dataset import Sample
from inspect_ai.log import HeadlineMetric

from cotaudit.answers import normalize_number
from cotaudit.display.headline import HEADLINES_KEY
from cotaudit.params import ParameterError, parse_thetas
from cotaudit.prerequisite import checked_task
from cotaudit.probing.curves import DEFAULT_THETAS
from cotaudit.probing.forms import FORM_NAMES, get_form
from cotaudit.probing.positions import DEFAULT_STRIDE, Schedule, parse_fractions
from cotaudit.probing.record import PROBE_KINDS
from cotaudit.probing.summaries import Headline
from cotaudit.probing.think import DEFAULT_THINK_CLOSE
from cotaudit.scorers.probe import probe_scorer, probe_summary
from cotaudit.solvers.probe import ReplayPrompt, SiblingPrompts, probe_sweep
from cotaudit.studies.selfcommit.metrics import primary_summary

PROBE_DEFAULTS: dict[str, dict[str, Any]] = {
    "trace": {"schedule": "fractions", "zero_probe": True, "k": 1, "temperature": 0.0},
    "selfcommit": {"schedule": "stride", "zero_probe": False, "k": 5, "temperature": 0.7},
}
"""Per probe: the studies' defaults (TRACE: fractions, 0% probe, one greedy answer;
self-commitment: every 30 tokens, five answers at temperature 0.7)."""


def resolve_task(spec: Task | str, task_args: dict[str, Any] | None = None) -> Task:
    """A Task from a Task, a file spec (``path.py`` or ``path.py@name``) or a registry name
    (``cotaudit/selfcommit``, ``inspect_evals/gsm8k``), created with ``task_args``.

    A relative file path is looked up from the current directory, then from the directory the
    command was started in (``$PWD``: Inspect runs a task file from its own folder)."""
    if isinstance(spec, Task):
        if task_args:
            raise ParameterError("task_args apply to a task name or file, not a Task object")
        return spec
    from inspect_ai._eval.loader import load_tasks

    file, _, name = spec.partition("@")
    if file.endswith(".py") and not Path(file).is_absolute() and not Path(file).exists():
        launched = Path(os.environ.get("PWD", ".")) / file
        if launched.exists():
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


def detect_form(t: Task, samples: Sequence[Sample]) -> str:
    """The answer form of a task: ``letter`` when its samples have choices; ``integer`` when
    its scorer matches numbers (``match(numeric=True)``) or every target is an integer;
    else ``string``."""
    if any(s.choices for s in samples):
        return "letter"
    for sc in t.scorer or []:
        if registry_params(sc).get("numeric") is True:
            return "integer"
    targets = [s.target for s in samples]
    if targets and all(isinstance(x, str) and normalize_number(x) is not None for x in targets):
        return "integer"
    return "string"


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
) -> Headline:
    """The run's headline: TRACE, the mean AUC; self-commitment, the AUROC of tau_first(0.8)
    (the middle theta when 0.8 is not among ``thetas``) between the reference condition and the
    others when the task's samples have two or more conditions, else its mean. The reference is
    ``reference_condition``, else ``replay_under``, else the dataset's first condition."""
    if probe == "trace":
        if reference_condition is not None:
            raise ParameterError("-T reference_condition: applies to probe=selfcommit only")
        return Headline("auc", None, pair_key)
    summary = primary_summary(thetas)
    if len(conditions) < 2:
        if reference_condition is not None:
            raise ParameterError(
                f"-T reference_condition={reference_condition!r}: the task's samples have "
                f"{len(conditions)} {condition_key!r} value(s) {conditions}; an AUROC needs two"
            )
        return Headline(summary, None, pair_key)
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
    return Headline(summary, reference, pair_key)


def _parse_task_args(value: dict[str, Any] | str | None) -> dict[str, Any]:
    if value is None or isinstance(value, dict):
        return dict(value or {})
    parsed = yaml.safe_load(value)
    if not isinstance(parsed, dict):
        raise ParameterError(
            f"-T task_args: expected a mapping such as '{{problems: 5}}', got {value!r}"
        )
    return parsed


def probe_task(
    task: Task | str,
    probe: str = "trace",
    *,
    replay_under: str | None = None,
    answer: str = "auto",
    forced_answer_tag: str | None = None,
    fractions: str | Sequence[float] | None = None,
    stride: int | None = None,
    zero_probe: bool | None = None,
    k: int | None = None,
    temperature: float | None = None,
    answer_max_tokens: int | None = None,
    thetas: str | Sequence[float] = DEFAULT_THETAS,
    seed: int = 0,
    tokenizer: str | None = None,
    think_close: str = DEFAULT_THINK_CLOSE,
    pair_key: str = "pair_id",
    condition_key: str = "condition",
    score_key: str | None = None,
    reference_condition: str | None = None,
    replay_prompt: ReplayPrompt | None = None,
    task_args: dict[str, Any] | str | None = None,
) -> Task:
    """``task`` with the truncate-and-force-answer probe after its solver chain.

    Args:
      task: A Task, ``path.py[@name]`` or a registry name.
      probe: ``trace`` (verify forced answers with the task's scorer) or ``selfcommit``
        (compare them with the model's own final answer).
      replay_under: Also probe each trace under the prompt of its sibling sample of this
        condition (same ``pair_key`` metadata).
      answer: Answer form: ``integer``, ``letter``, ``string`` or ``auto`` (detect).
      forced_answer_tag: Text after each prefix (default: the form's tag).
      fractions: Cut at these fractions of the trace (default for ``trace``).
      stride: Cut every ``stride`` tokens (default 30 for ``selfcommit``).
      zero_probe: Also probe the empty prefix (default: on for trace, off for selfcommit).
      k: Forced answers per prefix (default 1 for trace, 5 for selfcommit).
      temperature: Forced-answer temperature (default 0 for trace, 0.7 for selfcommit).
      answer_max_tokens: Token budget of a forced answer (default: the form's).
      thetas: Thresholds of tau_first (selfcommit).
      seed: Base seed of the forced answers.
      tokenizer: Tokenizer for positions on providers without their own engine.
      think_close: Text closing a think block before the tag.
      pair_key: Sample metadata key pairing a problem's conditions (replay).
      condition_key: Sample metadata key naming a sample's condition.
      score_key: Entry of a dict-valued task score that says whether an answer is correct.
      reference_condition: selfcommit with conditions: the condition the headline AUROC tells
        the others from (larger tau_first = more like it; default: ``replay_under``, else the
        dataset's first condition).
      replay_prompt: (state, condition) -> prompt to replay under, a ``Replay`` or a bare prompt
        (default: the sibling sample's prompt as the task's solver chain builds it, with the
        sibling's target and choices).
      task_args: Arguments of the task named by ``task`` (a mapping or YAML text).
    """
    if probe not in PROBE_KINDS:
        raise ParameterError(f"-T probe: must be one of {PROBE_KINDS}, got {probe!r}")
    if answer != "auto" and answer not in FORM_NAMES:
        raise ParameterError(f"-T answer: must be auto or one of {FORM_NAMES}, got {answer!r}")
    if fractions is not None and stride is not None:
        raise ParameterError("-T fractions and -T stride exclude each other; give one")
    theta_values = parse_thetas("thetas", thetas)
    wrapped = resolve_task(task, _parse_task_args(task_args))
    if not wrapped.scorer:
        raise ParameterError(f"task {wrapped.name!r} has no scorer to verify forced answers with")
    samples = _samples(wrapped)
    form = get_form(detect_form(wrapped, samples) if answer == "auto" else answer)
    defaults = PROBE_DEFAULTS[probe]
    kind = (
        "stride"
        if stride is not None
        else "fractions"
        if fractions is not None
        else defaults["schedule"]
    )
    try:
        schedule = Schedule(
            kind=kind,
            stride=stride if stride is not None else DEFAULT_STRIDE,
            **({"fractions": parse_fractions(fractions)} if fractions is not None else {}),
            zero_probe=defaults["zero_probe"] if zero_probe is None else zero_probe,
        )
    except ValueError as e:
        raise ParameterError(f"-T fractions/stride: {e}") from e
    k = defaults["k"] if k is None else k
    temperature = defaults["temperature"] if temperature is None else temperature
    if k <= 0:
        raise ParameterError(f"-T k: must be positive, got {k}")
    if k > 1 and temperature == 0:
        raise ParameterError(f"-T k={k}: greedy answers are identical; set -T temperature > 0")
    tag = form.tag if forced_answer_tag is None else forced_answer_tag
    if not tag.strip():
        raise ParameterError("-T forced_answer_tag: must be non-empty text")
    if replay_under is not None and replay_prompt is None:
        replay_prompt = SiblingPrompts(
            samples, wrapped.solver, pair_key=pair_key, condition_key=condition_key
        )
    headline = probe_headline(
        probe,
        dataset_conditions(samples, condition_key),
        theta_values,
        reference_condition=reference_condition,
        replay_under=replay_under,
        pair_key=pair_key,
        condition_key=condition_key,
    )
    sweep = probe_sweep(
        chain=wrapped.solver,
        probe=probe,
        form=form.name,
        forced_answer_tag=tag,
        schedule=schedule,
        k=k,
        temperature=temperature,
        answer_max_tokens=answer_max_tokens or form.answer_max_tokens,
        seed=seed,
        tokenizer=tokenizer,
        think_close=think_close,
        replay_under=replay_under,
        condition_key=condition_key,
        replay_prompt=replay_prompt,
    )
    settings = {
        "probe": probe,
        "wrapped_task": wrapped.name,
        "answer_form": form.name,
        "forced_answer_tag": tag,
        "think_close": think_close,
        "schedule": schedule.model_dump(),
        "k": k,
        "temperature": temperature,
        "seed": seed,
        "replay_under": replay_under,
        "pair_key": pair_key,
        "condition_key": condition_key,
        "headline": headline.record(),
    }
    verifier = probe_scorer(wrapped.scorer[0], thetas=theta_values, score_key=score_key)
    # the run metrics belong to the probe scorer alone (the task's scorers keep theirs)
    resolve_scorer_metrics(
        [verifier],
        [probe_summary(probe=probe, condition_key=condition_key, headline=headline.record())],
    )
    return task_with(
        wrapped,
        solver=sweep,
        scorer=[verifier, *wrapped.scorer],
        metrics=None,
        headline_metric=HeadlineMetric(scorer="probe_scorer", metric=headline.metric),
        name=f"{wrapped.name}_{probe}",
        metadata=(wrapped.metadata or {})
        | {
            "study": f"probe_{probe}",
            "probe": settings,
            HEADLINES_KEY: [headline.spec().record()],
        },
    )


@task
@checked_task
def probe(
    task: str,
    probe: str = "trace",
    replay_under: str | None = None,
    answer: str = "auto",
    forced_answer_tag: str | None = None,
    fractions: str | None = None,
    stride: int | None = None,
    zero_probe: bool | None = None,
    k: int | None = None,
    temperature: float | None = None,
    answer_max_tokens: int | None = None,
    thetas: str = ",".join(f"{t:g}" for t in DEFAULT_THETAS),
    seed: int = 0,
    tokenizer: str | None = None,
    think_close: str = DEFAULT_THINK_CLOSE,
    pair_key: str = "pair_id",
    condition_key: str = "condition",
    score_key: str | None = None,
    reference_condition: str | None = None,
    task_args: str | None = None,
) -> Task:
    """Probe the task named by ``task`` (see :func:`probe_task` for every argument)."""
    # Inspect splits a -T text at its commas; a tag or closer is text, so join it back
    forced_answer_tag, think_close = (
        ",".join(v) if isinstance(v, list) else v for v in (forced_answer_tag, think_close)
    )
    return probe_task(
        task,
        probe,
        replay_under=replay_under,
        answer=answer,
        forced_answer_tag=forced_answer_tag,
        fractions=fractions,
        stride=stride,
        zero_probe=zero_probe,
        k=k,
        temperature=temperature,
        answer_max_tokens=answer_max_tokens,
        thetas=thetas,
        seed=seed,
        tokenizer=tokenizer,
        think_close=think_close,
        pair_key=pair_key,
        condition_key=condition_key,
        score_key=score_key,
        reference_condition=reference_condition,
        task_args=task_args,
    )
