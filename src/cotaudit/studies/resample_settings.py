"""The resample task's parameters, checked once (:class:`ResampleSettings`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict

from cotaudit.answers import READINGS, Reading
from cotaudit.params import (
    PositiveCount,
    Seed,
    TaskSettings,
    Temperature,
    one_of,
)
from cotaudit.probing.forcing import Continuations, ForcesAnswers
from cotaudit.studies.selfcommit.prompts import HINT_SOURCES, HintSource
from cotaudit.studies.selfcommit.settings import SelfcommitConditions


class ResampleSettings(ForcesAnswers, TaskSettings):
    """The resolved parameters of a resample run (the ``resample`` task's arguments; their
    meaning: the task's docstring): a positive integer for every count, temperatures finite and
    >= 0, an integer seed, ``conditions`` parsed from their comma-separated text. The first
    failing check (in this order) raises its one-line :class:`~cotaudit.params.ParameterError`
    (:meth:`~cotaudit.params.TaskSettings.of`)."""

    model_config = ConfigDict(frozen=True)

    problems: PositiveCount
    n: PositiveCount
    max_cuts: PositiveCount
    max_cot_tokens: PositiveCount
    k: PositiveCount
    answer_max_tokens: PositiveCount
    temperature: Temperature
    forced_temperature: Temperature
    cot_temperature: Temperature
    seed: Seed
    final_answer_reading: Annotated[Reading, one_of(READINGS)]
    hint: Annotated[HintSource, one_of(HINT_SOURCES)]
    conditions: SelfcommitConditions
    dataset: str
    forced_answer_tag: str
    tokenizer: str | None

    def answer_temperature(self) -> float:
        """The forced answers' temperature: the task's ``forced_temperature``."""
        return self.forced_temperature

    def continuations(self) -> Continuations:
        """``n`` continuations per sentence cut (at most ``max_cuts``) at ``temperature``, within
        the CoT's own budget ``max_cot_tokens``, against the CoT's own final answer."""
        return Continuations(
            n=self.n,
            temperature=self.temperature,
            max_tokens=self.max_cot_tokens,
            max_cuts=self.max_cuts,
        )
