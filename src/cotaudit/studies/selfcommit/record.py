"""The selfcommit per-sample records: what the solver stores, what the scorer logs.

:class:`SelfcommitProbe` is written by ``selfcommit_probe`` into the sample store under
:data:`STORE_KEY` (as plain JSON) and read back by ``selfcommit_scorer``.
:class:`SelfcommitScoreMetadata` is the scorer's ``Score.metadata``, read by the report. Fields
added after the first logs have defaults, so old logs still validate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel

from cotaudit.probing.curves import Curve
from cotaudit.probing.store_record import StoreRecord

STORE_KEY = "selfcommit"
"""Key of :class:`SelfcommitProbe` in the sample store."""


class SelfcommitProbe(StoreRecord):
    """One sample's CoT and its prefix probes.

    ``positions`` t = stride, 2*stride, ..., T (``cot_tokens``); ``matches[i]`` = how many of the
    k forced answers at ``positions[i]`` equal ``a_final`` (None when ``a_final`` did not
    parse: no probe); ``imputed[i]`` marks values the adaptive schedule filled in; ``c0`` =
    matches at t = 0 / k when ``zero_probe``; ``answers`` / ``parsed_answers`` the forced
    answers per position (raw text / parsed integer)."""

    store_key: ClassVar[str] = STORE_KEY
    solver: ClassVar[str] = "selfcommit_probe"
    scorer: ClassVar[str] = "selfcommit_scorer"

    cot_tokens: int
    truncated: bool
    """The CoT hit its token limit (``max_cot_tokens``): it ended unfinished."""
    context_truncated: bool = False
    a_final: int | None
    positions: list[int]
    matches: list[int] | None
    imputed: list[bool] | None = None
    zero_probe: bool = False
    c0: float | None = None
    prefixes_probed: int | None = None
    k: int
    answers: list[list[str]] = []
    parsed_answers: list[list[int | None]]

    def curve(self) -> Curve | None:
        """c(t) = matches / k at ``positions``; None without a final answer."""
        if self.a_final is None or self.matches is None:
            return None
        return Curve(self.positions, self.cot_tokens, self.matches, self.k)


class SelfcommitScoreMetadata(BaseModel):
    """``Score.metadata`` of ``selfcommit_scorer``: the probe record without the raw answers,
    plus the curve (``fractions`` t/T, ``c``; None without a final answer), ``gold``,
    ``correct`` (a_final == gold) and ``short_cot`` (T <= stride: one probe position, t = T, so
    tau_first = 1.0 whatever c(T)). Every field has a default so any logged version reads."""

    positions: list[int] = []
    fractions: list[float] | None = None
    matches: list[int] | None = None
    c: list[float] | None = None
    c0: float | None = None
    zero_probe: bool = False
    no_answer: bool = False
    k: int | None = None
    cot_tokens: int | None = None
    a_final: int | None = None
    gold: int | None = None
    correct: bool = False
    short_cot: bool = False
    truncated: bool = False
    context_truncated: bool = False
    imputed: list[bool] | None = None
    prefixes_probed: int | None = None
    parsed_answers: list[list[int | None]] = []

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
