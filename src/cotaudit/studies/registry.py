"""The study objects by the study name a log records (the task's ``study`` metadata): the one
place a name read from a log becomes its :class:`~cotaudit.studies.study.Study`."""

from __future__ import annotations

from cotaudit.studies.selfcommit.study import PROBE_SELFCOMMIT, SELFCOMMIT
from cotaudit.studies.study import Study
from cotaudit.studies.trace_tutor.study import TRACE_TUTOR

STUDIES: dict[str, Study] = {s.name: s for s in (SELFCOMMIT, PROBE_SELFCOMMIT, TRACE_TUTOR)}
"""Every study a validation reads, by the name its logs record."""


def study_named(name: str) -> Study | None:
    """The study whose logs record ``name`` (None: no study a validation reads)."""
    return STUDIES.get(name)
