"""The selfcommit task's parameters, checked once (:class:`SelfcommitSettings`).

Each check raises the project's :class:`cotaudit.params.ParameterError`, one line naming the
``-T`` parameter; :meth:`SelfcommitSettings.of` raises that error itself (not pydantic's
``ValidationError`` around it), so ``inspect eval`` prints the one line.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, field_validator, model_validator

from cotaudit.answers import READINGS, Reading
from cotaudit.params import (
    ParameterError,
    TaskSettings,
    parse_conditions,
    parse_contrast_model,
    parse_thetas,
    require_int,
    require_one_of,
    require_positive,
    require_range,
    require_text,
)
from cotaudit.probing.exact import ESTIMATORS, Estimator, samples
from cotaudit.probing.positions import DEFAULT_MAX_CUTS
from cotaudit.probing.resample_record import ResampleOptions
from cotaudit.studies.metrics import parse_metric_set
from cotaudit.studies.selfcommit.prompts import HINT_SOURCES, SELFCOMMIT_CONDITIONS, HintSource

SCHEDULES = ("full", "adaptive")
"""Values of ``-T schedule``."""


class SelfcommitSettings(ResampleOptions, TaskSettings):
    """The resolved parameters of a selfcommit run (the ``selfcommit`` task's arguments but
    ``paper``; their meaning: the task's docstring). ``conditions`` and ``thetas`` parsed from
    their comma-separated text; a positive integer for ``problems``, ``stride``, ``k``,
    ``max_cot_tokens`` and ``answer_max_tokens``; temperatures finite and >= 0; k > 1 needs a
    temperature above 0 when answers are sampled (``estimator`` ``sampled`` or ``both``)."""

    model_config = ConfigDict(frozen=True)

    problems: int
    dataset: str
    conditions: list[str]
    stride: int
    k: int
    temperature: float
    max_cot_tokens: int
    answer_max_tokens: int
    forced_answer_tag: str
    thetas: tuple[float, ...]
    cot_temperature: float
    seed: int
    tokenizer: str | None
    schedule: Literal["full", "adaptive"]
    contrast_model: str | None
    zero_probe: bool
    final_answer_reading: Reading
    metrics: Literal["compact", "all"]
    estimator: Estimator
    cuts: Literal["tokens", "sentences"] = "tokens"
    max_cuts: int = DEFAULT_MAX_CUTS
    hint: HintSource = "dataset"
    first_look: bool = False

    @field_validator("hint", mode="before")
    @classmethod
    def _hint(cls, value: Any) -> Any:
        return require_one_of("hint", value, HINT_SOURCES)

    @field_validator("cuts", mode="before")
    @classmethod
    def _cuts(cls, value: Any) -> Any:
        return require_one_of("cuts", value, ("tokens", "sentences"))

    @field_validator("max_cuts", mode="before")
    @classmethod
    def _max_cuts(cls, value: Any) -> Any:
        require_positive("max_cuts", value)
        return value

    @field_validator(
        "problems", "stride", "k", "max_cot_tokens", "answer_max_tokens", mode="before"
    )
    @classmethod
    def _positive(cls, value: Any, info: Any) -> Any:
        require_positive(info.field_name, value)
        return value

    @field_validator("temperature", "cot_temperature", mode="before")
    @classmethod
    def _temperature(cls, value: Any, info: Any) -> Any:
        require_range(info.field_name, value, 0.0, None)
        return value

    @field_validator("conditions", mode="before")
    @classmethod
    def _conditions(cls, value: Any) -> list[str]:
        return parse_conditions("conditions", value, SELFCOMMIT_CONDITIONS)

    @field_validator("thetas", mode="before")
    @classmethod
    def _thetas(cls, value: Any) -> tuple[float, ...]:
        return parse_thetas("thetas", value)

    @field_validator("forced_answer_tag", mode="before")
    @classmethod
    def _tag(cls, value: Any) -> Any:
        require_text("forced_answer_tag", value)
        return value

    @field_validator("seed", mode="before")
    @classmethod
    def _seed(cls, value: Any) -> Any:
        require_int("seed", value)
        return value

    @field_validator("schedule", mode="before")
    @classmethod
    def _schedule(cls, value: Any) -> Any:
        if value not in SCHEDULES:
            raise ParameterError(f"-T schedule: must be 'full' or 'adaptive', got {value!r}")
        return value

    @field_validator("contrast_model", mode="before")
    @classmethod
    def _contrast_model(cls, value: Any) -> str | None:
        return parse_contrast_model(value)

    @field_validator("zero_probe", mode="before")
    @classmethod
    def _zero_probe(cls, value: Any) -> Any:
        if not isinstance(value, bool):
            raise ParameterError(f"-T zero_probe: must be true or false, got {value!r}")
        return value

    @field_validator("final_answer_reading", mode="before")
    @classmethod
    def _reading(cls, value: Any) -> Any:
        if value not in READINGS:
            raise ParameterError(
                f"-T final_answer_reading: must be one of {', '.join(READINGS)}, got {value!r}"
            )
        return value

    @field_validator("metrics", mode="before")
    @classmethod
    def _metrics(cls, value: Any) -> str:
        try:
            return parse_metric_set(value)
        except ValueError as e:
            raise ParameterError(str(e)) from e

    @field_validator("estimator", mode="before")
    @classmethod
    def _estimator(cls, value: Any) -> Any:
        return require_one_of("estimator", value, ESTIMATORS)

    @model_validator(mode="after")
    def _k_needs_temperature(self) -> SelfcommitSettings:
        if self.k > 1 and self.temperature == 0 and samples(self.estimator):
            raise ParameterError(
                f"-T k: k = {self.k} forced answers at -T temperature=0 are {self.k} copies of "
                "one greedy answer (c(t) can only be 0 or 1); use k=1, or a temperature above 0 "
                "(the study: k=5 at 0.7)"
            )
        if self.cuts == "sentences" and self.schedule == "adaptive":
            raise ParameterError(
                "-T schedule=adaptive refines a token stride; not with -T cuts=sentences"
            )
        return self
