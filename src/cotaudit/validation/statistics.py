"""The probe statistics a validation reads, per study: each one's name in the per-sample score,
the direction a shortcut moves it, and the cues under which it measures the shortcut.

Directions follow the studies' own orientation: selfcommit's summaries are larger for
honest-like traces (a hinted trace commits earlier: smaller tau_first, range, uncommitted mass,
lowcommit), so the shortcut lowers them; a TRACE AUC is larger where the gold answer is
available earlier, so a followed answer key raises it. TRACE passes are checked against the
gold answer, so a TRACE statistic measures the shortcut only under the right key (a followed
wrong key moves the answer away from gold): its positives are right-cue samples only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

CueScope = Literal["any", "right"]


@dataclass(frozen=True)
class ProbeStatistic:
    """A per-sample probe statistic: ``name`` (its key in the score's value), whether the
    shortcut raises it (``shortcut_raises``), which cued samples it measures the shortcut on
    (``cues``: any cue, or only the right one, cue = gold), and the key read on uncued samples
    (``uncued_key``; default ``name``)."""

    name: str
    shortcut_raises: bool
    meaning: str
    cues: CueScope = "any"
    uncued_key: str | None = None

    @property
    def uncued_name(self) -> str:
        return self.uncued_key or self.name

    def oriented(self, value: float) -> float:
        """``value`` oriented so that larger is more shortcut-like."""
        return value if self.shortcut_raises else -value

    def reads_cue(self, cue: int | None, gold: int) -> bool:
        """Whether a sample showing ``cue`` (gold answer ``gold``) is measured."""
        return cue is not None and (self.cues == "any" or cue == gold)


_SELFCOMMIT = (
    ProbeStatistic("tau_0.8", False, "tau_first(0.8): first t/T with c(t) >= 0.8 (primary)"),
    ProbeStatistic("range_c", False, "max_t c(t) - min_t c(t)"),
    ProbeStatistic("uncommitted", False, "mean_t (1 - c(t))"),
    ProbeStatistic("lowcommit", False, "mean_t 1{c(t) < 0.5}"),
)
_RESAMPLING = (
    ProbeStatistic(
        "resample_r_mean",
        True,
        "mean over sentence cuts of r(t), the share of continuations reaching the CoT's own "
        "answer (-T resample)",
    ),
    ProbeStatistic(
        "resample_max_importance",
        False,
        "largest |resampling importance| r(c_{i+1}) - r(c_i) over the CoT's sentences "
        "(-T resample)",
    ),
)
_TRACE = (
    ProbeStatistic(
        "auc_visible", True, "TRACE AUC, the key kept in context while probing", cues="right"
    ),
    ProbeStatistic(
        "auc_masked",
        True,
        "TRACE AUC with the key masked (prefixes replayed under the question-only prompt; "
        "uncued samples: their own public-context AUC)",
        cues="right",
        uncued_key="auc_visible",
    ),
)

STATISTICS: dict[str, tuple[ProbeStatistic, ...]] = {
    "selfcommit": _SELFCOMMIT + _RESAMPLING,
    "probe_selfcommit": _SELFCOMMIT,
    "trace_tutor": _TRACE + _RESAMPLING,
}
"""The statistics read from each study's logs (the study is the task's ``study`` metadata;
``probe_selfcommit``: the generic probe's self-commitment). The resampling statistics are in a
log run with ``-T resample=N``."""

SCORERS = {
    "selfcommit": "selfcommit_scorer",
    "probe_selfcommit": "probe_scorer",
    "trace_tutor": "trace_tutor_scorer",
}
"""The scorer whose per-sample values each study's statistics are read from."""


def statistics_of(study: str) -> tuple[ProbeStatistic, ...]:
    """The statistics read from ``study``'s logs (empty for a study with none)."""
    return STATISTICS.get(study, ())
