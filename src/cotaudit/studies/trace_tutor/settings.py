"""The trace_tutor task's parameters, checked once: :class:`TraceTutorSettings`."""

from __future__ import annotations

import math
from itertools import pairwise
from typing import Annotated, ClassVar, Literal

from pydantic import ConfigDict, ValidationInfo, field_validator, model_validator

from cotaudit.datasets.shipped import FirstRow
from cotaudit.params import (
    ContrastModel,
    ParameterError,
    PositiveCount,
    Seed,
    TaskSettings,
    Temperature,
    conditions_of,
    one_of,
    parsed,
)
from cotaudit.probing.exact import ESTIMATORS, Estimator
from cotaudit.probing.forcing import ForcesAnswers
from cotaudit.probing.resample_record import ResampleOptions
from cotaudit.studies.metrics import parse_metric_set
from cotaudit.studies.trace_tutor.prompts import TUTOR_CONDITIONS
from cotaudit.studies.trace_tutor.stats import PREFIX_FRACTIONS, Condition


def parse_fractions(name: str, value: str | list[float]) -> tuple[float, ...]:
    """Strictly increasing prefix fractions in (0, 1] that include 0.1 (Pass@10) and 1.0."""
    items = [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else value
    try:
        fractions = tuple(float(v) for v in items)
    except (TypeError, ValueError) as e:
        raise ParameterError(f"-T {name}: expected numbers in (0, 1], got {value!r}") from e
    bad = [f for f in fractions if not (0.0 < f <= 1.0) or math.isnan(f)]
    if bad or not fractions:
        raise ParameterError(f"-T {name}: fractions must lie in (0, 1], got {bad or value!r}")
    if any(b <= a for a, b in pairwise(fractions)):
        raise ParameterError(f"-T {name}: fractions must be strictly increasing, got {value!r}")
    for needed, why in ((0.1, "Pass@10"), (1.0, "the full explanation")):
        if not any(math.isclose(f, needed) for f in fractions):
            raise ParameterError(f"-T {name}: must include {needed} ({why}), got {value!r}")
    return fractions


DEFAULT_CONDITIONS = ",".join(TUTOR_CONDITIONS)
TUTOR_CUTS = ("fractions", "sentences")
"""``-T cuts``: where a fraction's prefix ends (the study's round(f * T), or the end of the
sentence that position falls in)."""
DEFAULT_FRACTIONS = ",".join(f"{f:g}" for f in PREFIX_FRACTIONS)


class TraceTutorSettings(ResampleOptions, ForcesAnswers, TaskSettings):
    """The parameters of :func:`trace_tutor`, checked: each check raises
    :class:`cotaudit.params.ParameterError` naming its ``-T`` parameter (:meth:`of`).

    ``conditions``: the conditions run, in the order given (duplicates dropped); ``fractions``:
    strictly increasing prefix fractions in (0, 1] with 0.1 and 1.0; ``cuts``: ``fractions``
    (cut at round(f * T), the study's) or ``sentences`` (each such cut moved forward to the end
    of the sentence it falls in); ``probe_samples`` (k) > 1
    needs ``temperature`` > 0 (k greedy samples are identical); ``estimator``: how p(f) is read
    (``sampled``, the study's k forced answers; ``exact``, their probability by teacher
    forcing; ``both``); ``first_row``: the first dataset row read (0-based, an integer >= 0)."""

    model_config = ConfigDict(frozen=True)
    K_PARAMETER: ClassVar[str] = "probe_samples"
    GREEDY_COPIES_ERROR: ClassVar[str] = (
        "-T probe_samples={k}: k > 1 greedy samples are identical; set -T temperature > 0 "
        "(or probe_samples=1)"
    )

    problems: PositiveCount
    dataset: str
    conditions: Annotated[tuple[Condition, ...], conditions_of(TUTOR_CONDITIONS)]
    fractions: tuple[float, ...]
    cuts: Annotated[Literal["fractions", "sentences"], one_of(TUTOR_CUTS)] = "fractions"
    probe_samples: PositiveCount
    temperature: Temperature
    max_explanation_tokens: PositiveCount
    answer_max_tokens: PositiveCount
    forced_answer_tag: str
    system_prompt: str
    bootstrap_samples: PositiveCount
    seed: Seed
    tokenizer: str | None
    contrast_model: ContrastModel
    metrics: Annotated[Literal["compact", "all"], parsed(parse_metric_set)]
    estimator: Annotated[Estimator, one_of(ESTIMATORS)]
    first_row: FirstRow = 0

    @field_validator("fractions", mode="before")
    @classmethod
    def _fractions(cls, value: str | list[float]) -> tuple[float, ...]:
        return parse_fractions("fractions", value)

    @field_validator("forced_answer_tag", "system_prompt", mode="before")
    @classmethod
    def _text(cls, value: str, info: ValidationInfo) -> str:
        if not isinstance(value, str) or not value.strip():
            raise ParameterError(f"-T {info.field_name}: must be non-empty text")
        return value

    @model_validator(mode="after")
    def _samples_need_temperature(self) -> TraceTutorSettings:
        self.refuse_greedy_copies()
        return self
