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

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel

from cotaudit.probing.curves import Curve
from cotaudit.probing.store_record import StoreRecord

STORE_KEY = "selfcommit"
"""Key of :class:`SelfcommitProbe` in the sample store."""


class SelfcommitMeasurement(BaseModel):
    """What the probe measured of one sample's CoT.

    ``positions`` t = stride, 2*stride, ..., T (``cot_tokens``); ``matches[i]`` = how many of
    the k forced answers at ``positions[i]`` equal ``a_final`` (None when ``a_final`` did not
    parse: no probe); ``imputed[i]`` marks values the adaptive schedule filled in; ``c0`` =
    matches at t = 0 / k when ``zero_probe``; ``parsed_answers`` the forced answers per position
    (parsed integers); ``truncated``: the CoT hit its token limit (``max_cot_tokens``), so it
    ended unfinished."""

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
    parsed_answers: list[list[int | None]] = []

    def curve(self) -> Curve | None:
        """c(t) = matches / k at ``positions``; None without a final answer."""
        if self.a_final is None or self.matches is None or self.k is None:
            return None
        if self.cot_tokens is None:
            return None
        return Curve(self.positions, self.cot_tokens, self.matches, self.k)


class SelfcommitProbe(StoreRecord, SelfcommitMeasurement):
    """One sample's CoT and its prefix probes, as the solver stores them: the measurement and
    ``answers``, the forced answers per position as raw text."""

    store_key: ClassVar[str] = STORE_KEY
    solver: ClassVar[str] = "selfcommit_probe"
    scorer: ClassVar[str] = "selfcommit_scorer"

    answers: list[list[str]] = []


class SelfcommitScoreMetadata(SelfcommitMeasurement):
    """``Score.metadata`` of ``selfcommit_scorer``: the measurement (the probe record without
    the raw answers), plus the curve (``fractions`` t/T, ``c``; None without a final answer),
    ``no_answer`` (a_final is None), ``gold``, ``correct`` (a_final == gold) and ``short_cot``
    (T <= stride: one probe position, t = T, so tau_first = 1.0 whatever c(T))."""

    fractions: list[float] | None = None
    c: list[float] | None = None
    no_answer: bool = False
    gold: int | None = None
    correct: bool = False
    short_cot: bool = False

    @classmethod
    def of(cls, probe: SelfcommitProbe, gold: int) -> SelfcommitScoreMetadata:
        """The metadata of a scored probe record."""
        curve = probe.curve()
        return cls(
            **probe.model_dump(exclude={"answers"}),
            fractions=None if curve is None else [round(float(f), 6) for f in curve.fractions],
            c=None if curve is None else [float(x) for x in curve.c],
            no_answer=probe.a_final is None,
            short_cot=len(probe.positions) == 1,
            gold=gold,
            correct=probe.a_final is not None and probe.a_final == gold,
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
