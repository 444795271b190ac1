"""The report_ll task's parameters, checked once (:class:`ReportLLSettings`).

Each check raises the project's :class:`cotaudit.params.ParameterError`, one line naming the
``-T`` parameter; :meth:`ReportLLSettings.of` raises that error itself (not pydantic's
``ValidationError`` around it), so ``inspect eval`` prints the one line. What depends on the
fixture file's content (``scenarios``, ``family``) is checked when the file is read
(``tasks/report_ll.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, field_validator

from cotaudit.params import (
    ContrastModel,
    ParameterError,
    PositiveCount,
    Seed,
    TaskSettings,
    as_list,
    parse_choices,
    parsed,
    require_positive,
    require_range,
)
from cotaudit.studies.metrics import parse_metric_set
from cotaudit.studies.report_ll.fixtures import DEFAULT_CORPUS, REWRITES
from cotaudit.studies.report_ll.fixtures.schema import (
    FACTOR_LEVELS,
    Register,
    Rendering,
    Rewrite,
    Richness,
)
from cotaudit.studies.report_ll.stats import UNITS, Unit

DEFAULT_FIXTURES = "default"
"""``-T fixtures`` value of the committed corpus."""
ALL_LEVELS = {f: ",".join(levels) for f, levels in FACTOR_LEVELS.items()}
"""Factor -> every level as ``-T`` text (the factor parameters' defaults)."""


def parse_levels(name: str, value: str | Sequence[str]) -> list[str]:
    """A non-empty subset of the factor ``name``'s levels, from "a,b" or a list."""
    return parse_choices(name, value, FACTOR_LEVELS[name], "level")


def resolve_fixtures(fixtures: Any) -> Path:
    """``"default"`` (the committed corpus) or a path to a JSONL fixture file."""
    if isinstance(fixtures, Path):
        fixtures = str(fixtures)
    if not isinstance(fixtures, str) or not fixtures.strip():
        raise ParameterError(f"-T fixtures: expected 'default' or a file path, got {fixtures!r}")
    if fixtures == DEFAULT_FIXTURES:
        return DEFAULT_CORPUS
    path = Path(fixtures).expanduser()
    if not path.is_file():
        raise ParameterError(f"-T fixtures: no such file {str(path)!r}")
    return path


def _one_of(name: str, value: Any, known: Sequence[str]) -> Any:
    if value not in known:
        raise ParameterError(f"-T {name}: expected one of {list(known)}, got {value!r}")
    return value


class ReportLLSettings(TaskSettings):
    """The resolved parameters of a report_ll run (the ``report_ll`` task's arguments but
    ``paper``; what each means: Fields, below), in the order they are checked:
    ``contrast_model`` none or ``provider/model``; ``metrics`` compact or all; ``fixtures``
    the committed corpus or an existing file; ``register_rewrite`` one of
    :data:`~cotaudit.studies.report_ll.fixtures.REWRITES`; the factor levels non-empty subsets
    of their levels (from comma-separated text); a positive integer for ``n_resamples``, an
    integer >= 0 for ``cluster_boot``, an integer ``seed``; a finite ``discrimination_band``
    >= 0; ``unit`` one of
    :data:`~cotaudit.studies.report_ll.stats.UNITS`; ``tokenizer`` None or non-blank text.
    ``scenarios`` a count (a positive integer, or its digits) or scenario ids, ``family``
    family names (both from comma-separated text; read against the fixture file).

    Fields:
      fixtures: "default" or the path of a JSONL fixture file (validated; errors name line and
        field).
      scenarios: A count (the first N scenarios, in file order, after the family filter) or
        comma-separated scenario ids. Default: all.
      rendering: Comma-separated subset of shell,driver.
      richness: Comma-separated subset of outcome_clause,bare.
      register: Comma-separated subset of plain,concealing_dressed,honest_dressed.
      family: Comma-separated families to include (default: all). At most one non-control
        family may remain; control families are summarised separately.
      register_rewrite: Which dressed texts fill the dressed register levels: "bundled" (the
        study's bundled rewrite: another verb, an added adverb, "throughout the run", a
        metaphor with an intensifier) or "minimal" (the plain verb and time phrase kept, one
        intensifier added; the outcome clause swapped for a metaphor).
      n_resamples: Bootstrap resamples / random sign flips of the run statistics.
      cluster_boot: Bootstrap resamples of the cluster F1 interval (0: none).
      seed: Seed of the bootstrap, sign flips and clustering.
      tokenizer: Tokenizer (hub id or folder) of a vllm/ or sglang/ model, to locate the
        report's tokens in the prompt log-probabilities; default the model's name.
      contrast_model: Model that describes what distinguishes the two clusters' reports
        (written into the log; default none).
      discrimination_band: Pre-registered band (nats): a model on which dressing the
        concealing report moves the DiD (of the study's cell when run, else pooled over the
        run's cells) by |mean| at most this cannot answer whether dressing the honest report
        does the same.
      unit: The independent unit every interval and sign-flip p-value resamples: "bug"
        (default; a bug serves several scenarios), "project" or "scenario".
      metrics: "compact" (default: the headline -- plain/plain DiD of the study's cell with its
        CI and p-value --, per cell the dressed register levels, the pooled figure and the
        register effects, the discrimination check, invalid scorings, control verdicts and the
        cluster F1 with its interval; no NaN for empty strata) or "all" (every cell, register
        effect and factorial table and every cluster statistic).
    """

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    contrast_model: ContrastModel
    metrics: Annotated[Literal["compact", "all"], parsed(parse_metric_set)]
    fixtures: Path
    register_rewrite: Rewrite
    rendering: list[Rendering]
    richness: list[Richness]
    register_levels: list[Register] = Field(alias="register")
    """``-T register`` (a field named ``register`` would shadow ``BaseModel.register``)."""
    n_resamples: PositiveCount
    cluster_boot: int
    seed: Seed
    discrimination_band: float
    unit: Unit
    tokenizer: str | None
    scenarios: int | list[str] | None
    family: list[str] | None

    @field_validator("fixtures", mode="before")
    @classmethod
    def _fixtures(cls, value: Any) -> Path:
        return resolve_fixtures(value)

    @field_validator("register_rewrite", mode="before")
    @classmethod
    def _rewrite(cls, value: Any) -> Any:
        return _one_of("register_rewrite", value, list(REWRITES))

    @field_validator("rendering", "richness", "register_levels", mode="before")
    @classmethod
    def _levels(cls, value: Any, info: Any) -> list[str]:
        return parse_levels(cls.model_fields[info.field_name].alias or info.field_name, value)

    @field_validator("cluster_boot", mode="before")
    @classmethod
    def _cluster_boot(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParameterError(f"-T cluster_boot: must be an integer >= 0, got {value!r}")
        require_range("cluster_boot", value, 0, None)
        return value

    @field_validator("discrimination_band", mode="before")
    @classmethod
    def _band(cls, value: Any) -> float:
        require_range("discrimination_band", value, 0, None)
        return float(value)

    @field_validator("unit", mode="before")
    @classmethod
    def _unit(cls, value: Any) -> Any:
        return _one_of("unit", value, UNITS)

    @field_validator("tokenizer", mode="before")
    @classmethod
    def _tokenizer(cls, value: Any) -> Any:
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ParameterError(f"-T tokenizer: expected a hub id or folder, got {value!r}")
        return value

    @field_validator("scenarios", mode="before")
    @classmethod
    def _scenarios(cls, value: Any) -> int | list[str] | None:
        if value is None:
            return None
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if not isinstance(value, int):
                raise ParameterError(
                    f"-T scenarios: expected a count or scenario ids, got {value!r}"
                )
            require_positive("scenarios", value)
            return value
        return as_list(value)

    @field_validator("family", mode="before")
    @classmethod
    def _family(cls, value: Any) -> list[str] | None:
        return None if value is None else as_list(value)

    @property
    def levels(self) -> dict[str, list[str]]:
        """The factor levels run: factor -> its chosen levels."""
        return {
            "rendering": [*self.rendering],
            "richness": [*self.richness],
            "register": [*self.register_levels],
        }
