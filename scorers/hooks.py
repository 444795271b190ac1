"""cotaudit's Inspect hooks, registered when a cotaudit task is created, not when the package is
imported.

Inspect imports every installed package's entry point for any ``inspect`` command and, when a
model starts, prints each registered hook with its description. Registered at import, ours
would speak on every task of every user. Instead :func:`register_hooks` runs through
:func:`cotaudit.prerequisite.on_task_created`: the hooks exist only in a process that created a
cotaudit task, and there they act only on cotaudit's own logs (each checks the task metadata it
reads). The cluster contrast comes first: the headline hook reads the log with its edits.
"""

from __future__ import annotations

from inspect_ai.hooks import hooks

from cotaudit.prerequisite import on_task_created

from .cluster_contrast import ClusterContrastHook
from .headline import HeadlineHook
from .resume import ResumeHintHook

HOOKS = (
    (
        ClusterContrastHook,
        "cluster_contrast",
        "Writes cotaudit's cluster contrast into the logs of cotaudit tasks.",
    ),
    (
        HeadlineHook,
        "headline",
        "Says each cotaudit task's headline statistics with their n when it ends.",
    ),
    (
        ResumeHintHook,
        "resume_hint",
        "Prints the command that resumes an interrupted cotaudit run into its own folder.",
    ),
)
"""Each hook with its registry name and description, in the order they run."""

_registered: list[bool] = []


def register_hooks() -> None:
    """Register :data:`HOOKS` with Inspect, once per process."""
    if _registered:
        return
    for hook_type, name, description in HOOKS:
        hooks(name=name, description=description)(hook_type)
    _registered.append(True)


on_task_created(register_hooks)

__all__ = ["HOOKS", "register_hooks"]
