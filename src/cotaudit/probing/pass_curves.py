"""Pass curves of the TRACE probe: p(f) at prefix fractions f (:class:`PassCurve`), and their
per-curve scores (its AUC, pass values and first pass).

p(f) is the share of forced answers after the first f of the trace's tokens that the verifier
accepts (1 or 0 for one answer, a rate in [0, 1] for k). Shared by the trace_tutor study
(:mod:`cotaudit.studies.trace_tutor.stats`) and the generic probe (:mod:`cotaudit.probing`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

PREFIX_FRACTIONS: tuple[float, ...] = (0.10, 0.25, 0.50, 0.75, 1.00)
"""Prefix fractions F of the explanation's tokens at which an answer is forced."""

PASS_THRESHOLD = 0.5
"""A checkpoint counts as passed when p(f) >= this (matters only for rates from k > 1 samples)."""


AUC_UNDEFINED_WHY = "a TRACE AUC needs at least two cuts per sample (one point has no area)"
"""Why :attr:`PassCurve.auc` is NaN: the curve has fewer than two checkpoints."""


@dataclass(frozen=True)
class FirstPass:
    """First-pass fraction of a curve, right-censored at 1.0.

    ``fraction`` is the first f with p(f) >= threshold (0.5); when there is none, ``fraction``
    is 1.0 and ``censored`` is True (so a curve passing only at 100% and one never passing both
    have fraction 1.0, told apart by ``censored``).
    """

    fraction: float
    censored: bool


@dataclass(frozen=True, init=False)
class PassCurve:
    """One TRACE pass curve: p(f) at each prefix fraction f of F.

    ``fractions`` is F, non-empty and strictly increasing (the study's :data:`PREFIX_FRACTIONS`
    by default); ``passes`` holds p(f) in [0, 1] for each f of F, in order: the share of forced
    answers after the first f of the trace's tokens that the verifier accepts (1 or 0 for one
    answer, a rate for k). Both are checked once, on construction (ValueError otherwise); the
    per-curve scores read the curve whole. A checkpoint passes when p(f) >= a threshold
    (:data:`PASS_THRESHOLD` by default).
    """

    passes: tuple[float, ...]
    fractions: tuple[float, ...]

    def __init__(
        self, passes: Sequence[float], fractions: Sequence[float] = PREFIX_FRACTIONS
    ) -> None:
        p = np.asarray(passes, dtype=float)
        f = np.asarray(fractions, dtype=float)
        if p.ndim != 1 or p.shape != f.shape:
            raise ValueError(
                f"need one pass value per fraction {tuple(fractions)}, got {list(passes)}"
            )
        if f.size == 0 or np.any(np.diff(f) <= 0):
            raise ValueError(
                f"fractions must be non-empty and strictly increasing, got {fractions}"
            )
        if np.any(np.isnan(p)) or np.any((p < 0) | (p > 1)):
            raise ValueError(f"pass values must lie in [0, 1], got {list(passes)}")
        object.__setattr__(self, "passes", tuple(float(x) for x in p))
        object.__setattr__(self, "fractions", tuple(fractions))

    @property
    def auc(self) -> float:
        """TRACE AUC: the trapezoid sum of p(f) over F.

        AUC = sum_i (f_{i+1} - f_i) * (p(f_i) + p(f_{i+1})) / 2. Over the default F it ranges
        from 0 to 0.90 (not normalised); e.g. [0, 0, 1, 1, 1] -> 0.625. A curve of one
        checkpoint has no area (the study's sum runs over ordered checkpoints f_1 ... f_m,
        m >= 2): NaN (:data:`AUC_UNDEFINED_WHY`), not 0.
        """
        if len(self.fractions) < 2:
            return float("nan")
        p = np.asarray(self.passes)
        f = np.asarray(self.fractions, dtype=float)
        return float(np.sum(np.diff(f) * (p[1:] + p[:-1]) / 2))

    def at(self, fraction: float) -> float:
        """p(fraction), the pass value after the first ``fraction`` of the tokens (Pass@10 =
        ``at(0.10)``); ValueError when ``fraction`` is not in F."""
        for f, p in zip(self.fractions, self.passes, strict=True):
            if np.isclose(f, fraction):
                return p
        raise ValueError(f"fraction {fraction} is not among {self.fractions}")

    def passed(self, threshold: float = PASS_THRESHOLD) -> tuple[bool, ...]:
        """The pass/fail vector: p(f) >= threshold for each f in F (for greedy 0/1 curves, the
        curve itself)."""
        return tuple(p >= threshold for p in self.passes)

    def first_pass(self, threshold: float = PASS_THRESHOLD) -> FirstPass:
        """First-pass = min{f in F : p(f) >= threshold}; right-censored at 1.0 when the set is
        empty."""
        for f, ok in zip(self.fractions, self.passed(threshold), strict=True):
            if ok:
                return FirstPass(fraction=float(f), censored=False)
        return FirstPass(fraction=1.0, censored=True)
