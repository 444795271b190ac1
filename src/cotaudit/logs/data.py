"""Plain data read from an Inspect log: what every report section and the log-reading scorers
(the headline, the cluster contrast) are computed from.

:class:`ScoredSample` has the attributes the studies' record builders and metrics read from an
Inspect ``SampleScore`` (``sample_id``, ``sample_metadata``, ``score.value``, ``score.metadata``),
so the report recomputes every number with the very functions the run's metrics used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ScoreData:
    """One (epoch-reduced) score: the fields of an Inspect ``Score`` the report reads."""

    value: Any
    metadata: dict[str, Any] | None = None
    answer: str | None = None
    explanation: str | None = None


@dataclass(frozen=True)
class ScoredSample:
    """A sample's score as the run's metrics saw it (duck-types Inspect's ``SampleScore``)."""

    sample_id: Any
    score: ScoreData
    sample_metadata: dict[str, Any] | None = None


@dataclass(frozen=True)
class MetricDef:
    """A metric attached to a scorer: registry name without package (the name of a spec in a
    study's metric table) and the options it was created with (as logged)."""

    name: str
    options: dict[str, Any]


@dataclass
class ScorerRun:
    """One scorer of a run: its metric definitions, the logged metric values and the scores
    (in the order the metrics received them)."""

    name: str
    metric_defs: list[MetricDef]
    metrics: dict[str, float]
    samples: list[ScoredSample]


@dataclass
class RunData:
    """One Inspect log (one task run on one model)."""

    path: str
    task: str
    study: str
    model: str
    status: str
    created: str
    task_args: dict[str, Any]
    task_metadata: dict[str, Any]
    epochs: int
    n_samples: int
    scorers: dict[str, ScorerRun] = field(default_factory=dict)
    error: str | None = None
    label: str = ""
    log_metadata: dict[str, Any] = field(default_factory=dict)
    """The log's metadata with later edits applied (e.g. the cluster contrast)."""
    task_samples: int | None = None
    """The samples the task made (before ``--limit`` / ``--sample-id``)."""
    task_version: int = 0
    """The task's ``Task(version=...)`` when the log was written (0: a log written before the
    studies carried versions); where a study's logs changed shape, its report reads it."""
    cut: str | None = None
    """How ``--limit`` / ``--sample-id`` cut them (:func:`cotaudit.display.headline.cut_text`), or
    None."""

    def scorer(self, name: str) -> ScorerRun | None:
        return self.scorers.get(name)

    def scored(self, name: str) -> list[ScoredSample]:
        """The samples the scorer ``name`` scored ([] when the run has no such scorer)."""
        scorer = self.scorer(name)
        return [] if scorer is None else list(scorer.samples)
