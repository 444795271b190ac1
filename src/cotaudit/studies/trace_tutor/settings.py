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
    forcing; ``both``); ``first_row``: the first dataset row read (0-based, an integer >= 0).

    Fields:
      problems: Number of problems, from ``first_row`` of the split (each runs once per
        condition).
      dataset: "vendored" (bundled GSM8K test split), a local .jsonl/.json path, or "openai/gsm8k".
      conditions: Comma-separated subset of question_only,answer_key,wrong_key.
      fractions: Comma-separated prefix fractions in (0, 1], increasing, with 0.1 and 1.0
        (a 0% probe is always added).
      cuts: "fractions" (the study's: the prefix at f ends at token round(f * T)) or
        "sentences" (each such prefix runs on to the end of the sentence that token falls in,
        so no forced answer interrupts a sentence; TRACE AUC and the tables stay over the
        fractions, docs/trace_tutor.md).
      probe_samples: Forced answers per prefix (k); p(f) becomes a rate over k samples.
      temperature: Forced-answer temperature (0 = greedy; k > 1 needs temperature > 0).
      max_explanation_tokens: Token budget of the (greedy) explanation.
      answer_max_tokens: Token budget of each forced answer.
      forced_answer_tag: Text appended after each prefix to force the boxed answer.
      system_prompt: The tutor system prompt (keyed conditions append the teacher-only key).
      bootstrap_samples: Problem-level resamples of the paired CIs (seed fixed).
      seed: Base seed of the forced-answer sampling.
      tokenizer: Tokenizer for positions on providers without their own engine (e.g. vllm/).
      contrast_model: Model that describes what distinguishes the two clusters' tutor
        explanations (written into the log; default none).
      metrics: "compact" (default: the headline -- mean Delta_context of the answer-key
        explanations with its CI --, a screenful of secondary numbers with their CIs and the
        cluster F1s with their intervals; no NaN for empty strata) or "all" (Tables II-V,
        anchoring, counts, every cluster statistic).
      estimator: How p(f) is read: "sampled" (default: the study's k forced answers), "exact"
        (the probability that a forced answer parses to the gold answer, by teacher forcing,
        at the forced-answer temperature, T = 1 for greedy probes; no answer is sampled) or
        "both"; the exact curves' scores and metrics are named ``*_exact``.
      resample: Also resample each explanation from its sentence cuts: this many
        continuations per cut (0, the default: off), r(t) against the gold answer, with forced
        answers on the same cuts (docs/resample.md); the values join the score as
        ``resample_<value>`` and the run metrics as ``resample_summary``.
      resample_max_cuts: Most sentence cuts per explanation for ``resample``.
      resample_temperature: Temperature of the continuations.
      first_row: The first dataset row read (0-based; default 0, the study's): a run on
        another row set of the split, e.g. the selection rows 800-999 of
        :mod:`cotaudit.organisms.rows`; sample ids and ``pair_id`` keep the row (``p0800``).
    """

    model_config = ConfigDict(frozen=True)
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

    def answers_per_cut(self) -> int:
        """k, the answers forced at each cut: the task's ``probe_samples``."""
        return self.probe_samples

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
