"""cotaudit: audits of what a language model's written reasoning or report really carries.

Pure logic (answers, curves, statistics, fixtures) lives here with no Inspect imports; the
probe engine is in ``cotaudit.engine``, Inspect providers in ``cotaudit.providers``, solvers
and scorers in ``cotaudit.solvers`` and ``cotaudit.scorers``.
"""

from typing import Any

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """``cotaudit.probe(task, probe="trace" | "selfcommit", ...)`` (``tasks/probe.py``) and
    ``cotaudit.probe_log(log, ...)`` (``tasks/probe_log.py``), imported on first use, so
    ``import cotaudit`` stays free of Inspect."""
    if name == "probe":
        from cotaudit.tasks.probe import probe_task

        return probe_task
    if name == "probe_log":
        from cotaudit.tasks.probe_log import probe_log_task

        return probe_log_task
    raise AttributeError(f"module 'cotaudit' has no attribute {name!r}")
