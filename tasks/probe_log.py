"""Probe a recorded Inspect log: its samples' traces as written, cut and forced, nothing
regenerated.

The dataset is the log's samples (``-T samples=`` picks some); the trace is what the log
recorded (a single response: its last assistant message, think blocks and ``ContentReasoning``
as the generic probe reads them; a multi-turn or agent transcript: its steps rendered as one
continuation of the prompt, :mod:`cotaudit.probing.trajectory`); the forced answers come from
the probing model (``--model``, which may differ from the model that wrote the log: a
*transfer* probe) and are verified by the log's own scorer, re-created from the log's record of
it (``-T scorer=`` names another). Everything else is the generic probe's
(:mod:`cotaudit.tasks.probe`): ``probe=trace|selfcommit|resample``, its schedules, estimators
and metrics, and ``-T cuts=steps`` cuts after each step of a trajectory (``probe=resample``
continues the recorded text from its sentence ends with the probing model).

    inspect eval cotaudit/probe_log -T log=logs/my_run.eval -T probe=trace --model hf-probe/default
    inspect eval cotaudit/probe_log -T log=agent.eval -T cuts=steps -T probe=selfcommit
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task, task_with
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalLog, EvalSample, read_eval_log

from cotaudit.params import ParameterError, error_line
from cotaudit.prerequisite import checked_task
from cotaudit.probing.forms import pattern_lead
from cotaudit.probing.log_settings import ProbeLogSettings, probe_log_settings
from cotaudit.probing.trajectory import plain_metadata, select_samples
from cotaudit.scorers.probe_log import recorded_scorer
from cotaudit.solvers.probe_log import (
    RecordedSiblings,
    recorded_chain,
    recorded_trace,
    without_assistant_message,
)
from cotaudit.tasks.probe import probe_of

PROBE_LOG_VERSION = 1
"""The recorded-log probe task's version (``Task.version``)."""

RECORDED_MODEL_KEY = "recorded_model"
"""Sample metadata key: the model that wrote the recorded sample's output."""


def read_log(path: str) -> EvalLog:
    """The log at ``path`` with its samples; a ParameterError naming it when it is no log or
    holds no samples."""
    try:
        log = read_eval_log(path)
    except Exception as e:  # noqa: BLE001 - name the file the user gave
        raise ParameterError(
            f"-T log={path}: cannot read it as an Inspect log ({error_line(e)})"
        ) from None
    if not log.samples:
        raise ParameterError(f"-T log={path}: the log holds no samples")
    return log


def answer_pattern_lead(scorer: dict[str, Any]) -> str | None:
    """The text forced answers follow for a scorer that reads answers with a pattern (Inspect's
    ``pattern()``): its pattern's prefix (:func:`cotaudit.probing.forms.pattern_lead`); None
    for another scorer, or a pattern whose prefix is not plain text."""
    args = scorer.get("args") or {}
    if str(scorer.get("name", "")).split("/")[-1] != "pattern" or "pattern" not in args:
        return None
    return pattern_lead(str(args["pattern"]), bool(args.get("ignore_case", True)))


def sample_key(sample: EvalSample, epochs: int) -> str:
    """A recorded sample's id in the probe's dataset: its id, with ``@epoch`` when the log ran
    several epochs."""
    return str(sample.id) if epochs == 1 else f"{sample.id}@{sample.epoch}"


def recorded_dataset(log: EvalLog, keys: list[str], by_key: dict[str, EvalSample]) -> MemoryDataset:
    """The probe's dataset: one Sample per chosen recorded sample (its input, target, choices
    and metadata as recorded, and the log's model, which wrote it, under ``recorded_model``)."""
    samples = []
    for key in keys:
        s = by_key[key]
        samples.append(
            Sample(
                id=key,
                input=s.input,
                target=s.target,
                choices=s.choices,
                metadata=plain_metadata(s.metadata or {}) | {RECORDED_MODEL_KEY: log.eval.model},
            )
        )
    return MemoryDataset(samples, name=f"{log.eval.task}_recorded")


@ProbeLogSettings.parameters_of()
def probe_log_task(log: str, **params: Any) -> Task:
    """The probe over the recorded samples of ``log`` (see the module docstring).

    Args:
      log: The ``.eval`` log; it and the other keyword arguments are
        :class:`cotaudit.probing.log_settings.ProbeLogSettings` (the generic probe's parameters
        and ``samples``, ``scorer``, ``scorer_args``, ``cuts``; each bad value raises a
        :class:`~cotaudit.params.ParameterError` naming it).
    """
    return probe_log_of(probe_log_settings(log, **params))


def probe_log_of(s: ProbeLogSettings) -> Task:
    """The recorded-log probe with ``s``."""
    log = read_log(s.log)
    epochs = len({x.epoch for x in log.samples or []})
    by_key = {sample_key(x, epochs): x for x in log.samples or []}
    try:
        keys = select_samples(list(by_key), s.samples, s.log)
    except ValueError as e:
        raise ParameterError(str(e)) from None
    silent = without_assistant_message({key: by_key[key] for key in keys})
    if silent:
        shown = ", ".join(repr(key) for key in silent[:3]) + (", ..." if len(silent) > 3 else "")
        raise ParameterError(
            f"-T log={s.log}: {len(silent)} of the {len(keys)} samples to probe have no "
            f"assistant message, so no trace to cut ({shown}); -T samples= picks others"
        )
    scorer, scorer_record = recorded_scorer(log, s.log, s.scorer, s.scorer_args)
    lead = answer_pattern_lead(scorer_record)
    recorded = Task(
        dataset=recorded_dataset(log, keys, by_key),
        solver=recorded_chain(by_key),
        scorer=scorer,
        name=log.eval.task.split("/")[-1],
        metadata={
            "probe_log": {
                "log": s.log,
                "log_task": log.eval.task,
                "log_task_version": log.eval.task_version,
                "recorded_model": log.eval.model,
                "scorer": scorer_record,
                "verification_lead": lead,
                "cuts": s.cuts,
                "samples": keys,
            }
        },
    )
    replay = (
        RecordedSiblings(by_key, pair_key=s.pair_key, condition_key=s.condition_key)
        if s.replay_under is not None
        else None
    )
    probed = probe_of(recorded, s, replay, read_trace=recorded_trace, verification_lead=lead)
    return task_with(probed, version=PROBE_LOG_VERSION)


@task
@checked_task
@ProbeLogSettings.parameters_of()
def probe_log(log: str, **params: Any) -> Task:
    """Probe the samples of the recorded log ``log`` (see :func:`probe_log_task`)."""
    return probe_log_task(log, **params)


__all__ = ["probe_log", "probe_log_task"]
