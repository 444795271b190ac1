"""The command that resumes an interrupted cotaudit run, printed with the folder it belongs in.

Inspect's own hint after Ctrl-C is ``inspect eval-retry <log>``, which writes the resumed log
to ``--log-dir`` (by default ``logs/``), not beside the interrupted one. When a cotaudit task's
log does not finish (status ``cancelled`` or ``error``: Ctrl-C, a crash, too many failed
samples), :class:`ResumeHintHook` prints one line to stderr: ``<task> (<model>): interrupted,
3 of 8 samples logged; resume with: inspect eval-retry <log> --log-dir <its folder>``.

Inspect 0.3.285 ends a cancelled task without its task-end hook and ends the run with no logs
(``RunEnd.logs`` is empty after Ctrl-C), so the hook remembers each cotaudit task it saw
start (its ``task_id``, which names its log file and survives retries) and, when the run ends
without that task's end, finds its log among the run's log folder (``--log-dir`` of the
``inspect`` command being run, else ``INSPECT_LOG_DIR``, else ``logs``) with
``inspect_ai.log.list_eval_logs``.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import click
from inspect_ai.hooks import Hooks, RunEnd, TaskEnd, TaskStart
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log

from cotaudit.display.headline import specs_of

UNFINISHED = ("cancelled", "error")
"""Statuses of a log that ``inspect eval-retry`` resumes."""


def resume_command(location: str) -> str:
    """``inspect eval-retry <log> --log-dir <the log's folder>`` (each path shell-quoted; a
    ``file://`` location as its path; a remote one, ``s3://...``, keeps its folder as
    written)."""
    location = location.removeprefix("file://")
    folder = location.rsplit("/", 1)[0] if "://" in location else str(Path(location).parent)
    return f"inspect eval-retry {shlex.quote(location)} --log-dir {shlex.quote(folder)}"


def resume_line(log: EvalLog) -> str | None:
    """The line for an unfinished cotaudit log (task metadata listing headlines) with a
    location; None for any other log."""
    if log.status not in UNFINISHED or not log.location or not specs_of(log.eval.metadata):
        return None
    done = log.results.completed_samples if log.results else len(log.samples or [])
    total = log.results.total_samples if log.results else int(log.eval.dataset.samples or 0)
    state = "interrupted" if log.status == "cancelled" else "stopped by an error"
    return (
        f"{log.eval.task} ({log.eval.model}): {state}, {done} of {total} samples logged; "
        f"resume with: {resume_command(log.location)}"
    )


def run_log_dir() -> str:
    """The folder the running ``inspect`` command writes its logs to: its ``--log-dir``
    (Inspect's option, which also reads ``INSPECT_LOG_DIR``), else ``INSPECT_LOG_DIR``, else
    ``logs``."""
    ctx = click.get_current_context(silent=True)
    given = ctx.params.get("log_dir") if ctx is not None else None
    return str(given or os.environ.get("INSPECT_LOG_DIR") or "logs")


def unfinished_log(task_id: str, log_dir: str) -> EvalLog | None:
    """The header of the newest log of ``task_id`` under ``log_dir`` when it did not finish."""
    try:
        infos = [i for i in list_eval_logs(log_dir, recursive=False) if i.task_id == task_id]
    except Exception:  # noqa: BLE001 - no such folder: no hint
        return None
    if not infos:
        return None
    header = read_eval_log(max(infos, key=lambda i: i.mtime or 0).name, header_only=True)
    return header if header.status in UNFINISHED else None


class ResumeHintHook(Hooks):
    """Prints :func:`resume_line` for a cotaudit task that ends unfinished (see the module
    docstring)."""

    def __init__(self) -> None:
        self.started: set[str] = set()
        """``task_id`` of each cotaudit task that started and has not ended."""

    async def on_task_start(self, data: TaskStart) -> None:
        if specs_of(data.spec.metadata):
            self.started.add(data.spec.task_id)

    async def on_task_end(self, data: TaskEnd) -> None:
        self.started.discard(data.log.eval.task_id)
        if line := resume_line(data.log):
            print(line, file=sys.stderr, flush=True)

    async def on_run_end(self, data: RunEnd) -> None:
        started, self.started = self.started, set()
        if not started:
            return
        log_dir = run_log_dir()
        for task_id in sorted(started):
            log = unfinished_log(task_id, log_dir)
            if log is not None and (line := resume_line(log)):
                print(line, file=sys.stderr, flush=True)


__all__ = [
    "UNFINISHED",
    "ResumeHintHook",
    "resume_command",
    "resume_line",
    "run_log_dir",
    "unfinished_log",
]
