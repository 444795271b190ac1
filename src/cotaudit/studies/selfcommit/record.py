"""The selfcommit per-sample record, from the sample store to the statistics.

One shape travels: :class:`SelfcommitMeasurement` declares what the probe measured of a sample,
once. :class:`SelfcommitProbe` (that measurement with the raw forced answers) is written by
``selfcommit_probe`` into the sample store under :data:`STORE_KEY` (as plain JSON) and read back
by ``selfcommit_scorer``; :class:`SelfcommitScoreMetadata` (the measurement with its curve and
correctness) is the scorer's ``Score.metadata``, which the statistics
(:class:`cotaudit.studies.selfcommit.stats.SelfcommitRecord`) and the report read. Every
measured field has a default, so the score metadata of a version-0 log validates.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel

from cotaudit.probing.curves import Curve
from cotaudit.probing.exact import Estimator
from cotaudit.probing.store_record import StoreRecord

STORE_KEY = "selfcommit"
"""Key of :class:`SelfcommitProbe` in the sample store."""
EXACT_GAP_KEYS = ("exact_gap", "exact_gap_abs")
"""Score keys (value and metadata) of a run of both estimators: the mean of c_exact - c and of
its absolute value over the probed positions (:func:`exact_gaps`); no curve summary."""


class SelfcommitMeasurement(BaseModel):
    """What the probe measured of one sample's CoT.

    ``positions`` t = stride, 2*stride, ..., T (``cot_tokens``), or t = round(f * T) for the
    fractions f of ``-T fractions``; ``matches[i]`` = how many of
    the k forced answers at ``positions[i]`` equal ``a_final`` (None when ``a_final`` did not
    parse: no probe); ``imputed[i]`` marks values the adaptive schedule filled in; ``c0`` =
    matches at t = 0 / k when ``zero_probe``; ``parsed_answers`` the forced answers per position
    (parsed integers); ``truncated``: the CoT hit its token limit (``max_cot_tokens``), so it
    ended unfinished.

    ``estimator`` says which curves were measured (:mod:`cotaudit.probing.exact`): ``sampled``
    (``matches``, the study's), ``exact`` (``c_exact``) or ``both``. ``c_exact[i]`` = the
    probability, read by teacher forcing at ``exact_temperature``, that the forced answer at
    ``positions[i]`` parses to ``a_final`` (a lower bound), ``covered_exact[i]`` the mass of the
    forced answers that begin in an enumerated integer form at all; ``c0_exact`` and
    ``c0_covered_exact`` the same at t = 0 (``zero_probe``). The fields of a curve that was not
    measured are None (``matches``, ``k``, ``answers`` with ``exact``; the ``*_exact`` fields
    with ``sampled``), not zeros."""

    cot_tokens: int | None = None
    truncated: bool = False
    context_truncated: bool = False
    a_final: int | None = None
    positions: list[int] = []
    matches: list[int] | None = None
    imputed: list[bool] | None = None
    zero_probe: bool = False
    c0: float | None = None
    prefixes_probed: int | None = None
    k: int | None = None
    parsed_answers: list[list[int | None]] | None = []
    estimator: Estimator = "sampled"
    exact_temperature: float | None = None
    c_exact: list[float] | None = None
    covered_exact: list[float] | None = None
    c0_exact: float | None = None
    c0_covered_exact: float | None = None

    def curve(self) -> Curve | None:
        """c(t) = matches / k at ``positions``; None without a final answer."""
        if self.a_final is None or self.matches is None or self.k is None:
            return None
        if self.cot_tokens is None:
            return None
        return Curve(self.positions, self.cot_tokens, self.matches, self.k)

    def exact_curve(self) -> list[float] | None:
        """c_exact(t) at ``positions``; None without a final answer or an exact probe."""
        if self.a_final is None or self.c_exact is None or self.cot_tokens is None:
            return None
        return list(self.c_exact)


class SelfcommitProbe(StoreRecord, SelfcommitMeasurement):
    """One sample's CoT and its prefix probes, as the solver stores them: the measurement and
    ``answers``, the forced answers per position as raw text."""

    store_key: ClassVar[str] = STORE_KEY
    solver: ClassVar[str] = "selfcommit_probe"
    scorer: ClassVar[str] = "selfcommit_scorer"

    answers: list[list[str]] | None = []


def exact_gaps(measured: SelfcommitMeasurement) -> tuple[float, float] | None:
    """(mean of c_exact(t) - c(t), mean of |c_exact(t) - c(t)|) over the probed positions (the
    adaptive schedule's imputed ones left out); None unless both curves were measured."""
    curve, exact = measured.curve(), measured.exact_curve()
    if curve is None or exact is None:
        return None
    imputed = measured.imputed or [False] * len(exact)
    diffs = [e - float(c) for e, c, imp in zip(exact, curve.c, imputed, strict=True) if not imp]
    if not diffs:
        return None
    return math.fsum(diffs) / len(diffs), math.fsum(abs(d) for d in diffs) / len(diffs)


class SelfcommitScoreMetadata(SelfcommitMeasurement):
    """``Score.metadata`` of ``selfcommit_scorer``: the measurement (the probe record without
    the raw answers), plus the curve (``fractions`` t/T, ``c``; None without a final answer),
    ``no_answer`` (a_final is None), ``gold``, ``correct`` (a_final == gold) and ``short_cot``
    (T <= stride: one probe position, t = T, so tau_first = 1.0 whatever c(T)).

    With both estimators (``estimator`` = ``both``), ``exact_gap`` = mean over the probed
    positions (not the adaptive schedule's imputed ones) of c_exact(t) - c(t) and
    ``exact_gap_abs`` = mean of |c_exact(t) - c(t)|; None otherwise."""

    fractions: list[float] | None = None
    c: list[float] | None = None
    no_answer: bool = False
    gold: int | None = None
    correct: bool = False
    short_cot: bool = False
    exact_gap: float | None = None
    exact_gap_abs: float | None = None

    @classmethod
    def of(cls, probe: SelfcommitProbe, gold: int) -> SelfcommitScoreMetadata:
        """The metadata of a scored probe record."""
        curve = probe.curve()
        gap = exact_gaps(probe)
        return cls(
            **probe.model_dump(exclude={"answers"}),
            fractions=None if curve is None else [round(float(f), 6) for f in curve.fractions],
            c=None if curve is None else [float(x) for x in curve.c],
            no_answer=probe.a_final is None,
            short_cot=len(probe.positions) == 1,
            gold=gold,
            correct=probe.a_final is not None and probe.a_final == gold,
            exact_gap=None if gap is None else gap[0],
            exact_gap_abs=None if gap is None else gap[1],
        )

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any] | None) -> SelfcommitScoreMetadata:
        """The metadata of a logged score (an empty record for none)."""
        return cls.model_validate(dict(metadata or {}))

    @property
    def has_answer(self) -> bool:
        """A final answer parsed: ``a_final`` is logged and not None (a score that does not log
        ``a_final`` at all counts as answered)."""
        return "a_final" not in self.model_fields_set or self.a_final is not None
