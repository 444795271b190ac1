"""The selfcommit task's parameters, checked once (:class:`SelfcommitSettings`).

Each check raises the project's :class:`cotaudit.params.ParameterError`, one line naming the
``-T`` parameter; :meth:`SelfcommitSettings.of` raises that error itself (not pydantic's
``ValidationError`` around it), so ``inspect eval`` prints the one line.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, field_validator, model_validator

from cotaudit.answers import READINGS, Reading
from cotaudit.datasets.shipped import FirstRow
from cotaudit.params import (
    ContrastModel,
    Flag,
    ParameterError,
    PositiveCount,
    Seed,
    TaskSettings,
    Temperature,
    Thetas,
    checked,
    conditions_of,
    one_of,
    parsed,
    require_text,
)
from cotaudit.probing.exact import ESTIMATORS, Estimator
from cotaudit.probing.forcing import ForcesAnswers
from cotaudit.probing.positions import DEFAULT_MAX_CUTS, Schedule, fractions_parameter
from cotaudit.probing.resample_record import ResampleOptions
from cotaudit.studies.metrics import parse_metric_set
from cotaudit.studies.selfcommit.first_look import check_first_look
from cotaudit.studies.selfcommit.prompts import HINT_SOURCES, SELFCOMMIT_CONDITIONS, HintSource

SelfcommitConditions = Annotated[list[str], conditions_of(SELFCOMMIT_CONDITIONS)]
"""``-T conditions`` of a run of the selfcommit study's prompts (the selfcommit and resample
tasks): a non-empty list of :data:`~cotaudit.studies.selfcommit.prompts.SELFCOMMIT_CONDITIONS`,
each once, from "a,b" or a list."""

SCHEDULES = ("full", "adaptive")
"""Values of ``-T schedule``."""


class SelfcommitSettings(ResampleOptions, ForcesAnswers, TaskSettings):
    """The resolved parameters of a selfcommit run (the ``selfcommit`` task's arguments but
    ``paper``; what each means: Fields, below). ``conditions`` and ``thetas`` parsed from
    their comma-separated text; a positive integer for ``problems``, ``stride``, ``k``,
    ``max_cot_tokens`` and ``answer_max_tokens``; temperatures finite and >= 0; k > 1 needs a
    temperature above 0 when answers are sampled (``estimator`` ``sampled`` or ``both``);
    ``first_row`` an integer >= 0; ``fractions`` (None: the stride's cuts) strictly increasing
    in (0, 1], not with ``cuts=sentences`` nor the adaptive schedule.

    Fields:
      problems: Number of problems, from ``first_row`` of the split.
      dataset: "vendored" (bundled GSM8K test split), a local .jsonl/.json path, or "openai/gsm8k".
      conditions: Comma-separated subset of honest,hinted.
      stride: Tokens between cut positions (unless ``fractions`` are given).
      k: Forced answers per prefix (k > 1 needs temperature > 0).
      temperature: Forced-answer sampling temperature.
      max_cot_tokens: CoT token budget.
      answer_max_tokens: Forced-answer token budget.
      forced_answer_tag: Text appended after each prefix.
      thetas: Comma-separated thresholds for tau_first, each in [0, 1].
      cot_temperature: CoT sampling temperature (0 = greedy).
      seed: Base seed of all sampling.
      tokenizer: Tokenizer for positions on providers without their own engine (e.g. vllm/).
      schedule: "full" (every position) or "adaptive" (coarse first, refine where ambiguous).
      contrast_model: Model that describes what distinguishes the two clusters' CoTs
        (written into the log; default none).
      zero_probe: Also probe t = 0 (prompt alone, no CoT); reported per sample as ``c0``, never
        part of the curve or its summaries (default false, as in the study).
      final_answer_reading: How a_final is read from the CoT: "stated" (default: the answer
        it states; a CoT cut by the token limit without one has none) or "last_number" (also
        its last number, cut or not). See :func:`cotaudit.answers.extract_final_answer`.
      metrics: "compact" (default: the headline -- AUROC, paired wins and ties (counts) of
        tau_first(0.8) over n_pairs --, the cluster F1 with its interval, and a screenful of
        secondary numbers, no NaN for empty strata) or "all" (every table: the theta sweep,
        both-correct and condition x correctness strata, all cluster statistics).
      estimator: How c(t) is read: "sampled" (default, the study's: k answers sampled per
        prefix), "exact" (c_exact(t), the probability that the forced answer parses to
        a_final, by teacher forcing at ``temperature``, no sampling: every summary and
        statistic under ``<name>_exact``, the headline AUROC of tau_first_exact(0.8)) or
        "both" (both curves, the sampled one leading, and their difference per sample).
      cuts: Where c(t) is probed: "tokens" (default, the study's: every ``stride`` tokens) or
        "sentences" (at the ends of the CoT's sentences, at most ``max_cuts``; not with the
        adaptive schedule).
      max_cuts: Most sentence cuts per CoT with ``cuts=sentences``.
      resample: Also resample each CoT from its sentence cuts: this many continuations per
        cut (0, the default: off), with forced answers on the same cuts (docs/resample.md);
        the values join the score as ``resample_<value>`` and the run metrics as
        ``resample_summary``.
      resample_max_cuts: Most sentence cuts per CoT for ``resample``.
      resample_temperature: Temperature of the continuations.
      hint: The value X the hinted prompt names: "dataset" (default, the study's: the dataset
        answer y), "wrong" (y + 1) or "mixed" (y on problems of even index, y + 1 on odd
        ones), so that following the hint shows in the final answer; recorded per hinted
        sample as metadata ``hint``.
      first_look: Run the ten problems of the vendored split chosen for a first look on the
        embedded model (the first ten whose greedy CoTs on hf-probe/default state a final
        answer under both prompts, so that the headline stands on 10 problems in about a
        minute: :mod:`cotaudit.studies.selfcommit.first_look`) instead of the first
        ``problems``; not with ``problems``, ``dataset`` or ``paper=true``.
      first_row: The first dataset row read (0-based; default 0, the study's): a run on
        another row set of the split, e.g. the selection rows 800-999 of
        :mod:`cotaudit.organisms.rows`; sample ids and ``pair_id`` keep the row
        (``p0800``).
      fractions: Cut each CoT at round(f * T) for each fraction f (comma-separated, strictly
        increasing in (0, 1]) instead of every ``stride`` tokens, so that every CoT has as
        many cuts (e.g. the validation's 0.1,0.2,...,1.0: ten per CoT); default none (the
        study's stride); not with ``stride``, ``cuts=sentences`` or ``schedule=adaptive``.
    """

    model_config = ConfigDict(frozen=True)
    GREEDY_COPIES_ERROR: ClassVar[str] = (
        "-T k: k = {k} forced answers at -T temperature=0 are {k} copies of one greedy answer "
        "(c(t) can only be 0 or 1); use k=1, or a temperature above 0 (the study: k=5 at 0.7)"
    )

    problems: PositiveCount
    dataset: str
    conditions: SelfcommitConditions
    stride: PositiveCount
    k: PositiveCount
    temperature: Temperature
    max_cot_tokens: PositiveCount
    answer_max_tokens: PositiveCount
    forced_answer_tag: Annotated[str, checked(require_text)]
    thetas: Thetas
    cot_temperature: Temperature
    seed: Seed
    tokenizer: str | None
    schedule: Literal["full", "adaptive"]
    contrast_model: ContrastModel
    zero_probe: Flag
    final_answer_reading: Annotated[Reading, one_of(READINGS)]
    metrics: Annotated[Literal["compact", "all"], parsed(parse_metric_set)]
    estimator: Annotated[Estimator, one_of(ESTIMATORS)]
    cuts: Annotated[Literal["tokens", "sentences"], one_of(("tokens", "sentences"))] = "tokens"
    max_cuts: PositiveCount = DEFAULT_MAX_CUTS
    hint: Annotated[HintSource, one_of(HINT_SOURCES)] = "dataset"
    first_look: bool = False
    first_row: FirstRow = 0
    fractions: tuple[float, ...] | None = None

    @field_validator("fractions", mode="before")
    @classmethod
    def _fractions(cls, value: Any) -> Any:
        return fractions_parameter(value)

    def cut_schedule(self) -> Schedule:
        """The cuts of the curve: every ``stride`` tokens (the study's), or at round(f * T) for
        each of ``fractions`` (:class:`cotaudit.probing.positions.Schedule`)."""
        if self.fractions is not None:
            return Schedule(kind="fractions", fractions=self.fractions)
        return Schedule(kind="stride", stride=self.stride)

    @field_validator("schedule", mode="before")
    @classmethod
    def _schedule(cls, value: Any) -> Any:
        if value not in SCHEDULES:
            raise ParameterError(f"-T schedule: must be 'full' or 'adaptive', got {value!r}")
        return value

    @model_validator(mode="after")
    def _k_needs_temperature(self) -> SelfcommitSettings:
        self.refuse_greedy_copies()
        if self.cuts == "sentences" and self.schedule == "adaptive":
            raise ParameterError(
                "-T schedule=adaptive refines a token stride; not with -T cuts=sentences"
            )
        if self.fractions is not None and self.cuts == "sentences":
            raise ParameterError("-T fractions: cuts at fractions of T; not with -T cuts=sentences")
        if self.fractions is not None and self.schedule == "adaptive":
            raise ParameterError(
                "-T schedule=adaptive refines a token stride; not with -T fractions"
            )
        return self


def check_given(
    given: Collection[str], paper: bool, first_look: Any, first_row: Any, fractions: Any
) -> None:
    """The checks of the parameters ``given`` by name (``-T first_look=true`` alone with its
    own ten problems, :func:`~cotaudit.studies.selfcommit.first_look.check_first_look`, and not
    with ``-T first_row``; ``-T fractions`` not with ``-T stride``): the first that fails
    raises its one-line :class:`~cotaudit.params.ParameterError`."""
    check_first_look(first_look, given, paper)
    if first_look and first_row:
        raise ParameterError("-T first_row: not with -T first_look=true (its own ten problems)")
    if fractions is not None and "stride" in given:
        raise ParameterError("-T fractions and -T stride exclude each other; give one")
