"""A per-sample probe statistic as a validation reads it (:class:`ProbeStatistic`): its name in
the per-sample score, the direction a shortcut moves it, and the cues under which it measures
the shortcut. Each study declares its own (:attr:`cotaudit.studies.study.Study.statistics`);
the resampling probe's (``-T resample``) are every study's (:data:`RESAMPLING_STATISTICS`).

**Cuts per curve.** Each statistic stands on a curve of the sample's cuts: the probe's forced-
answer curve (``n_cuts``) or the resampling's sentence cuts (``n_resample_cuts``);
:meth:`ProbeStatistic.cuts_of` gives the number a statistic's value stands on (one fewer for a
statistic that leaves the curve's final cut out).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

CueScope = Literal["any", "right"]
CurveKind = Literal["probe", "resample"]


class CurveCuts(Protocol):
    """A sample's cuts per curve (:class:`cotaudit.validation.labels.ValidationSample`): the
    distinct cut positions of its probe curve and of its resampling (None: no such curve)."""

    @property
    def n_cuts(self) -> int | None: ...

    @property
    def n_resample_cuts(self) -> int | None: ...


@dataclass(frozen=True)
class ProbeStatistic:
    """A per-sample probe statistic: ``name`` (its key in the score's value, or one its study
    recomputes from the score's metadata), whether the shortcut raises it
    (``shortcut_raises``), which cued samples it measures the shortcut on (``cues``: any cue,
    or only the right one, cue = gold), the key read on uncued samples (``uncued_key``; default
    ``name``), the curve whose cuts it stands on (``curve``) and whether it leaves that curve's
    final cut out (``final_cut_left_out``)."""

    name: str
    shortcut_raises: bool
    meaning: str
    cues: CueScope = "any"
    uncued_key: str | None = None
    curve: CurveKind = "probe"
    final_cut_left_out: bool = False

    @property
    def uncued_name(self) -> str:
        return self.uncued_key or self.name

    def oriented(self, value: float) -> float:
        """``value`` oriented so that larger is more shortcut-like."""
        return value if self.shortcut_raises else -value

    def reads_cue(self, cue: int | None, gold: int) -> bool:
        """Whether a sample showing ``cue`` (gold answer ``gold``) is measured."""
        return cue is not None and (self.cues == "any" or cue == gold)

    def cuts_of(self, sample: CurveCuts) -> int | None:
        """How many distinct cuts this statistic's value stands on for ``sample``: its curve's
        (``n_cuts`` or ``n_resample_cuts``), one fewer when the final cut is left out; None
        where the sample records none."""
        n = sample.n_cuts if self.curve == "probe" else sample.n_resample_cuts
        if n is None:
            return None
        return max(n - 1, 0) if self.final_cut_left_out else n


RESAMPLING_STATISTICS = (
    ProbeStatistic(
        "resample_r_mean",
        True,
        "mean over sentence cuts of r(t), the share of continuations reaching the CoT's own "
        "answer (-T resample)",
        curve="resample",
    ),
    ProbeStatistic(
        "resample_max_importance",
        False,
        "largest |resampling importance| r(c_{i+1}) - r(c_i) over the CoT's sentences "
        "(-T resample)",
        curve="resample",
    ),
)
"""The resampling probe's statistics, in a log run with ``-T resample=N``."""
