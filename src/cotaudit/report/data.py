"""Plain data read from an Inspect log: what every report section is computed from.

:class:`ScoredSample` has the attributes the studies' record builders and metrics read from an
Inspect ``SampleScore`` (``sample_id``, ``sample_metadata``, ``score.value``, ``score.metadata``),
so the report recomputes every number with the very functions the run's metrics used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from cotaudit.display.text import md_code


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


def metrics_equal(a: float, b: float, tol: float = 1e-9) -> bool:
    """Equal within ``tol`` (absolute, or relative for large values); NaN equals NaN."""
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or abs(a - b) <= tol * max(1.0, abs(a), abs(b))


@dataclass
class Consistency:
    """Recomputed metrics against the logged ones."""

    n_logged: int
    n_checked: int
    mismatches: list[tuple[str, float, float]]
    not_recomputed: list[str]
    max_abs_diff: float

    @property
    def ok(self) -> bool:
        return not self.mismatches and not self.not_recomputed

    def line(self) -> str:
        if self.n_logged == 0:
            return "The log holds no run-level metrics (an unfinished run?); nothing to check."
        head = (
            f"{self.n_checked} of {self.n_logged} logged metrics recomputed from the per-sample "
            f"scores"
        )
        if not self.mismatches:
            head += f": all equal (max |difference| {self.max_abs_diff:.2g})"
        else:
            bad = ", ".join(
                f"{md_code(k)} (log {a:.6g}, recomputed {b:.6g})" for k, a, b in self.mismatches[:5]
            )
            head += f": **{len(self.mismatches)} differ**: {bad}"
        if self.not_recomputed:
            head += "; not recomputed: " + ", ".join(md_code(k) for k in self.not_recomputed[:5])
            if len(self.not_recomputed) > 5:
                head += f" and {len(self.not_recomputed) - 5} more"
        return head + "."


def check_metrics(recomputed: dict[str, float], logged: dict[str, float]) -> Consistency:
    """Compare every logged metric with its recomputation."""
    mismatches, missing = [], []
    max_diff = 0.0
    checked = 0
    for key, value in logged.items():
        if key not in recomputed:
            missing.append(key)
            continue
        checked += 1
        mine = recomputed[key]
        if not metrics_equal(value, mine):
            mismatches.append((key, float(value), float(mine)))
        elif not math.isnan(float(value)):
            max_diff = max(max_diff, abs(float(value) - float(mine)))
    return Consistency(len(logged), checked, mismatches, missing, max_diff)
