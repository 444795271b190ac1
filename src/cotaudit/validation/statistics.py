"""The probe statistics a validation reads from a run's log: its study's
(:attr:`cotaudit.studies.study.Study.statistics`, each a
:class:`~cotaudit.studies.probe_statistic.ProbeStatistic`: its name in the per-sample score, the
direction a shortcut moves it, the cues under which it measures the shortcut), read from the
per-sample values of the study's scorer. The study is the one the log names (the task's
``study`` metadata, :func:`cotaudit.studies.registry.study_named`); a log of a study no
validation reads has none. Directions and readings are each study's own
(``studies/<study>/study.py``); the resampling statistics are in a log run with
``-T resample=N``.

:data:`FEW_CUTS`: a statistic on curves of fewer cuts
(:meth:`~cotaudit.studies.probe_statistic.ProbeStatistic.cuts_of`) is marked as such.
"""

from __future__ import annotations

from cotaudit.studies.probe_statistic import ProbeStatistic
from cotaudit.studies.registry import study_named

FEW_CUTS = 5
"""A statistic computed on curves of fewer cuts than this is marked as such in the table."""


def statistics_of(study: str) -> tuple[ProbeStatistic, ...]:
    """The statistics read from the logs of the study named ``study`` (empty for a study with
    none)."""
    found = study_named(study)
    return () if found is None else found.statistics


def scorer_of(study: str) -> str:
    """The scorer whose per-sample values the statistics of the study named ``study`` are read
    from (empty for a study with none)."""
    found = study_named(study)
    return "" if found is None else found.scorer
