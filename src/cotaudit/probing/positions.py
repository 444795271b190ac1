"""Cut positions of a trace of T tokens: a token stride (self-commitment) or prefix fractions
(TRACE). Prefixes are cumulative: cut t keeps the trace's first t tokens.

- ``stride``: t = stride, 2*stride, ..., T (T always included;
  :func:`cotaudit.probing.curves.prefix_positions`).
- ``fractions``: t = round(f * T) for each f (Python's round, half to even).
- ``steps``: t = the token position where each step of a recorded trajectory ends
  (:mod:`cotaudit.probing.trajectory`), min(end, T); the sample's ends are filled in per sample
  (``steps``).
- ``sentences``: t = the token position where each sentence of the trace ends
  (:func:`cotaudit.probing.sentences.sentence_ends`), at most ``max_cuts`` of them evenly spread
  with the trace's end kept (:func:`cotaudit.probing.sentences.capped`); filled in per sample
  (``steps``) like a trajectory's step ends.

The empty prefix t = 0 (the prompt alone) is no point of either curve; ``zero_probe`` probes it
apart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import pairwise
from typing import Any, Literal

from pydantic import BaseModel, field_validator, model_validator

from cotaudit.probing.curves import prefix_positions

DEFAULT_STRIDE = 30
DEFAULT_FRACTIONS: tuple[float, ...] = (0.10, 0.25, 0.50, 0.75, 1.00)


DEFAULT_MAX_CUTS = 20
"""Most sentence cuts per trace (``sentences``), unless ``max_cuts`` says otherwise."""

ScheduleKind = Literal["stride", "fractions", "steps", "sentences"]


class Schedule(BaseModel, frozen=True):
    """Where to cut: ``kind`` ``stride`` (every ``stride`` tokens), ``fractions``, ``steps``
    (at the token ends ``steps`` of a trajectory's steps, one sample's) or ``sentences`` (at
    the ends of the trace's sentences, at most ``max_cuts``, filled into ``steps`` per
    sample)."""

    kind: ScheduleKind
    stride: int = DEFAULT_STRIDE
    fractions: tuple[float, ...] = DEFAULT_FRACTIONS
    zero_probe: bool = False
    steps: tuple[int, ...] = ()
    max_cuts: int = DEFAULT_MAX_CUTS

    @field_validator("stride", "max_cuts")
    @classmethod
    def _positive(cls, v: int, info: Any) -> int:
        if v <= 0:
            raise ValueError(f"{info.field_name} must be positive, got {v}")
        return v

    @model_validator(mode="after")
    def _fractions_ok(self) -> Schedule:
        f = self.fractions
        if not f or any(not (0.0 < x <= 1.0) or math.isnan(x) for x in f):
            raise ValueError(f"fractions must lie in (0, 1], got {list(f)}")
        if any(b <= a for a, b in pairwise(f)):
            raise ValueError(f"fractions must be strictly increasing, got {list(f)}")
        return self

    def positions(self, length: int) -> list[int]:
        """The curve's cut positions for a trace of ``length`` tokens (t = 0 excluded)."""
        if self.kind == "stride":
            return prefix_positions(length, self.stride)
        if self.kind in ("steps", "sentences"):
            return list(dict.fromkeys(min(end, length) for end in self.steps))
        return [round(f * length) for f in self.fractions]

    def curve_fractions(self, length: int) -> list[float]:
        """The x of each curve point: the fractions, or t / T for a stride (1.0 when T = 0)."""
        if self.kind == "fractions":
            return list(self.fractions)
        return [t / length if length else 1.0 for t in self.positions(length)]

    def probed(self, length: int) -> list[int]:
        """Every position probed, in order: 0 first when ``zero_probe``, then the curve's."""
        return ([0] if self.zero_probe else []) + self.positions(length)


def parse_fractions(value: str | Sequence[float]) -> tuple[float, ...]:
    """Fractions from ``"0.1,0.5,1"`` or a sequence of numbers."""
    items = [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else value
    try:
        return tuple(float(v) for v in items)
    except (TypeError, ValueError) as e:
        raise ValueError(f"fractions: expected numbers in (0, 1], got {value!r}") from e


def fractions_parameter(value: Any) -> tuple[float, ...] | None:
    """``-T fractions`` checked as a schedule's fractions (:class:`Schedule`): None stays None;
    text ``"0.1,0.5,1"``, a list or one number become the fractions; bad input raises
    :class:`cotaudit.params.ParameterError`, one line naming ``-T fractions``."""
    from pydantic import ValidationError

    from cotaudit.params import ParameterError, validation_line

    if value is None:
        return None
    try:
        parsed = parse_fractions(value if isinstance(value, str | list | tuple) else [value])
        return Schedule(kind="fractions", fractions=parsed).fractions
    except ValidationError as e:
        raise ParameterError(validation_line(e, prefix="-T ")) from None
    except ValueError as e:
        raise ParameterError(f"-T {e}") from None
