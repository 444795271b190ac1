"""The cut schedule of a validation run: at least :data:`MIN_CUTS` cuts per CoT, whatever its
length, unless the user asks otherwise.

A study's own schedule can leave a short CoT with few cuts (selfcommit's stride of 30 tokens
gives a 60-token CoT two), and a curve statistic on two or three points says little about when
the answer settles. Validation runs therefore cut each CoT at the ten fractions
:data:`VALIDATION_FRACTIONS` = 0.1, 0.2, ..., 1.0 of its T tokens, t = round(f * T): a stated
deviation from selfcommit's study (``-T fractions=0.1,...,1``; its stride is the study's
default), and trace_tutor's own kind of cut with more fractions (``-T fractions=...``, which
must include 0.1 and 1.0: this set does). The generic probe takes them as ``-T cuts=fractions
-T fractions=...``. :func:`validation_task_args` gives them for a study (its
:attr:`~cotaudit.studies.study.Study.cut_args`, then the fractions). Where a CoT is shorter
than ten tokens some fractions round to one position: the validation counts the distinct cuts
per CoT (:attr:`cotaudit.validation.labels.ValidationSample.n_cuts`) and marks a statistic on
curves of fewer than :data:`cotaudit.validation.statistics.FEW_CUTS` cuts.
"""

from __future__ import annotations

from cotaudit.studies.study import Study

MIN_CUTS = 10
"""Cuts per CoT a validation run's schedule gives (distinct ones: fewer on a CoT shorter than
ten tokens)."""

VALIDATION_FRACTIONS: tuple[float, ...] = tuple(round(0.1 * i, 1) for i in range(1, 11))
"""The ten fractions 0.1, 0.2, ..., 1.0 a validation run cuts each CoT at."""

VALIDATION_FRACTIONS_TEXT = ",".join(f"{f:g}" for f in VALIDATION_FRACTIONS)
""":data:`VALIDATION_FRACTIONS` as a ``-T fractions`` value: ``"0.1,0.2,...,0.9,1"``."""


def validation_task_args(study: Study) -> dict[str, str]:
    """The ``-T`` arguments of a validation run's cut schedule for ``study``: its
    ``cut_args``, then ``fractions`` = :data:`VALIDATION_FRACTIONS_TEXT`."""
    return {**study.cut_args, "fractions": VALIDATION_FRACTIONS_TEXT}
