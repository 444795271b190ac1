"""The scorer that verifies a recorded log's forced answers: the log's own, re-created.

A log records each scorer of its task by registry name and arguments (``eval.scorers``:
``match`` with ``{numeric: true}``, ``includes``, ``choice``, ``model_graded_qa``...). The first
one is re-created from that record with Inspect's registry; a scorer defined in the task's own
file is registered by importing that file when it is still on disk (``eval.task_file``, as
written, else beside the log). A cotaudit probe log's own verifier (``probe_scorer``) is
skipped for the task scorer it wraps. ``-T scorer=NAME`` (with ``-T scorer_args=``) names one
instead.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog
from inspect_ai.scorer import Scorer
from inspect_ai.util import registry_create

from cotaudit.params import ParameterError
from cotaudit.probing.record import ProbeRecord

PROBE_SCORER = ProbeRecord.scorer
"""The probe's own verifier, which a probe log records first (it wraps the task's scorer, which
the log records after it): left out when a probe log is probed again."""


def import_task_file(path: Path) -> None:
    """Import a task file once (its ``@scorer`` functions register under their names)."""
    name = f"cotaudit_recorded_task_{abs(hash(str(path.resolve())))}"
    if name in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)


def task_file_of(log: EvalLog, log_path: str) -> Path | None:
    """The log's task file when it is still on disk: as recorded, else beside the log."""
    recorded = log.eval.task_file
    if not recorded:
        return None
    for candidate in (Path(recorded), Path(log_path).parent / Path(recorded).name):
        if candidate.is_file():
            return candidate
    return None


def create_scorer(name: str, args: dict[str, Any], where: str) -> Scorer:
    """The registered scorer ``name`` created with ``args``; a ParameterError naming ``where``
    (the parameter or log that named it) when it cannot be."""
    try:
        return registry_create("scorer", name, **args)
    except Exception as e:  # noqa: BLE001 - name what the user gave
        raise ParameterError(
            f"{where}: cannot create the scorer {name!r} ({type(e).__name__}: {e}); name a "
            "registered one with -T scorer=NAME (match, includes, choice, ...)"
        ) from None


def recorded_scorer(
    log: EvalLog, log_path: str, scorer: str | None, scorer_args: dict[str, Any]
) -> tuple[Scorer, dict[str, Any]]:
    """The scorer verifying the log's forced answers and what it is: ``scorer`` (with
        ``scorer_args``) when named, else the log's first recorded scorer (the probe's verifier
    left out) re-created from its name
        and arguments (its task file imported first when on disk). Raises a ParameterError naming
        the log when it records no scorer and none is named."""
    if scorer is not None:
        created = create_scorer(scorer, scorer_args, f"-T scorer={scorer}")
        return created, {"name": scorer, "args": scorer_args, "source": "-T scorer"}
    specs = [x for x in log.eval.scorers or [] if x.name.split("/")[-1] != PROBE_SCORER]
    if not specs:
        raise ParameterError(
            f"-T log={log_path}: the log records no scorer; name one with -T scorer=NAME "
            "(match, includes, choice, ...)"
        )
    spec = specs[0]
    task_file = task_file_of(log, log_path)
    if task_file is not None:
        import_task_file(task_file)
    created = create_scorer(spec.name, dict(spec.options or {}), f"-T log={log_path}")
    source = "log" + (f" (task file {task_file})" if task_file is not None else "")
    return created, {"name": spec.name, "args": dict(spec.options or {}), "source": source}
