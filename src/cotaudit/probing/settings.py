"""The generic probe's parameters, checked once: :class:`ProbeSettings`, shared by
``cotaudit.probe(...)`` (``probe_task``) and the ``probe`` task of ``tasks/probe.py``.

Each check raises the project's :class:`cotaudit.params.ParameterError`, one line naming the
``-T`` parameter; :meth:`ProbeSettings.of` raises that error itself (not pydantic's
``ValidationError`` around it). What depends on the wrapped task (its scorer, answer form,
conditions) is checked where the task is loaded (``tasks/probe.py``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, TypeVar, get_args

import yaml  # type: ignore[import-untyped]  # PyYAML ships no type stubs (types-PyYAML not installed)
from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from cotaudit.params import (
    OptionalPositiveCount,
    OptionalTemperature,
    ParameterError,
    Seed,
    TaskSettings,
    Thetas,
    one_of,
    require_one_of,
    validation_line,
)
from cotaudit.probing.curves import DEFAULT_THETAS
from cotaudit.probing.exact import ESTIMATORS, Estimator
from cotaudit.probing.forcing import Continuations, ForcedAnswers
from cotaudit.probing.forms import FORM_NAMES, AnswerForm
from cotaudit.probing.metrics import METRIC_SETS, MetricSet
from cotaudit.probing.positions import (
    DEFAULT_FRACTIONS,
    DEFAULT_MAX_CUTS,
    DEFAULT_STRIDE,
    Schedule,
    ScheduleKind,
    fractions_parameter,
    parse_fractions,
)
from cotaudit.probing.record import PROBE_KINDS, ProbeKind
from cotaudit.probing.think import DEFAULT_THINK_CLOSE

PROBE_DEFAULTS: dict[str, dict[str, Any]] = {
    "trace": {"schedule": "fractions", "zero_probe": True, "k": 1, "temperature": 0.0},
    "selfcommit": {"schedule": "stride", "zero_probe": False, "k": 5, "temperature": 0.7},
    "resample": {"schedule": "sentences", "zero_probe": True, "k": 5, "temperature": 0.7},
}
"""Per probe: the studies' defaults (TRACE: fractions, 0% probe, one greedy answer;
self-commitment: every 30 tokens, five answers at temperature 0.7; resampling: the empty prefix
and the sentence ends, five forced answers at temperature 0.7 beside the continuations)."""

SettingsProbe = ProbeKind | Literal["resample"]
SETTINGS_PROBES: tuple[str, ...] = (*PROBE_KINDS, "resample")
"""The generic probe's ``-T probe`` values: the forced-answer probes and ``resample``."""

RESAMPLE_DEFAULTS: dict[str, Any] = {
    "resample": 10,
    "resample_temperature": 0.7,
    "resample_reference": "own",
}
"""``-T probe=resample``: continuations per cut, their temperature, what they should reach."""
NOT_WITH_RESAMPLE = ("replay_under", "stride", "fractions", "zero_probe", "reference_condition")
"""``-T`` parameters that do not apply to ``-T probe=resample`` (it cuts at c_0 = 0 and the
sentence ends, under the trace's own prompt)."""

F = TypeVar("F", bound=Callable[..., Any])

Cuts = Literal["tokens", "fractions", "sentences"]
CUT_KINDS: dict[str, ScheduleKind] = {
    "steps": "steps",
    "tokens": "stride",
    "fractions": "fractions",
    "sentences": "sentences",
}
"""``-T cuts`` -> the :class:`~cotaudit.probing.positions.Schedule` kind it cuts with
(``steps``: a recorded log's, :mod:`cotaudit.probing.log_settings`)."""
EXCLUDED_BY_CUTS: dict[str, tuple[str, ...]] = {
    "steps": ("stride", "fractions"),
    "sentences": ("stride", "fractions"),
    "tokens": ("fractions",),
    "fractions": ("stride",),
}
"""``-T`` parameters that do not apply with each ``-T cuts`` value."""

DEFAULT_THETAS_TEXT = ",".join(f"{t:g}" for t in DEFAULT_THETAS)
"""``-T thetas`` default: :data:`cotaudit.probing.curves.DEFAULT_THETAS` as text."""


def yaml_mapping(example: str) -> BeforeValidator:
    """A pydantic before-validator reading a ``-T`` mapping: a dict as given, ``{}`` for None,
    else YAML text that must load as a mapping (the error names the field and shows
    ``example``)."""

    def run(value: Any, info: ValidationInfo) -> dict[str, Any]:
        if value is None or isinstance(value, dict):
            return dict(value or {})
        parsed = yaml.safe_load(value)
        if not isinstance(parsed, dict):
            raise ParameterError(
                f"-T {info.field_name}: expected a mapping such as '{example}', got {value!r}"
            )
        return parsed

    return BeforeValidator(run)


def _joined(value: Any) -> Any:
    """Inspect splits a ``-T`` text at its commas; a tag or closer is text, so join it back."""
    return ",".join(str(v) for v in value) if isinstance(value, list) else value


class ProbeSettings(TaskSettings):
    """The probe's parameters, checked (the wrapped task and ``replay_prompt`` apart).

    Fields:
      probe: ``trace`` (verify forced answers with the task's scorer), ``selfcommit``
        (compare them with the model's own final answer) or ``resample`` (continue the trace
        from each sentence cut and read where the continuations' final answers land,
        :func:`cotaudit.solvers.resample.resample_sweep`; forced answers on the same cuts).
      replay_under: Also probe each trace under the prompt of its sibling sample of this
        condition (same ``pair_key`` metadata).
      answer: Answer form: a name in :data:`cotaudit.probing.forms.FORMS`, or ``auto``
        (detect).
      forced_answer_tag: Text after each prefix (default: the form's tag); non-empty.
      fractions: Cut at these fractions of the trace (default for ``trace``).
      stride: Cut every ``stride`` tokens (default 30 for ``selfcommit``); excludes
        ``fractions``.
      cuts: Where to cut: ``tokens`` (every ``stride`` tokens), ``fractions`` (of the trace's
        tokens) or ``sentences`` (at the ends of the trace's sentences,
        :mod:`cotaudit.probing.sentences`); default: ``fractions`` or ``stride`` as given, else
        the probe's own schedule.
      max_cuts: With ``cuts=sentences``: the most sentence cuts per trace (default 20), evenly
        spread, the trace's end kept.
      zero_probe: Also probe the empty prefix (default: on for trace, off for selfcommit).
      k: Forced answers per prefix (default 1 for trace, 5 for selfcommit); positive, and
        k > 1 needs a temperature > 0 (greedy answers are identical).
      temperature: Forced-answer temperature (default 0 for trace, 0.7 for selfcommit).
      answer_max_tokens: Token budget of a forced answer (default: the form's).
      thetas: Thresholds of tau_first (selfcommit), in [0, 1].
      seed: Base seed of the forced answers.
      tokenizer: Tokenizer for positions on providers without their own engine.
      think_close: Text closing a think block before the tag.
      pair_key: Sample metadata key pairing a problem's conditions (replay).
      condition_key: Sample metadata key naming a sample's condition.
      score_key: Entry of a dict-valued task score that says whether an answer is correct.
      reference_condition: selfcommit with conditions: the condition the headline AUROC tells
        the others from (larger tau_first = more like it; default: ``replay_under``, else the
        dataset's first condition).
      task_args: Arguments of the task named by ``task`` (a mapping or YAML text).
      estimator: How the forced answers are read: ``sampled`` (k answers per prefix, verified
        by the task's scorer; the default), ``exact`` (the probability that a forced answer's
        canonical form is the reference, by teacher forcing: :mod:`cotaudit.probing.exact`)
        or ``both``.
      resample: With ``probe=resample``: continuations per cut (default 10; the Thought
        Anchors work draws 100).
      resample_temperature: Their temperature (default 0.7).
      resample_max_tokens: A response's token budget; a continuation from a cut gets the rest
        of it (default: the run's ``max_tokens``, else 1024).
      resample_reference: What r(t) counts continuations reaching: ``own`` (the trace's final
        answer as the task's scorer reads it; the default) or ``gold`` (the sample's target).
      metrics: ``compact`` (the default: the headline, n_samples, the main summaries overall
        and per condition and the replay gaps, NaN left out but the headline's:
        :func:`cotaudit.probing.summaries.compact_metrics`) or ``all`` (every run metric).

    ``k`` and ``temperature`` as given (None: the probe's default); :attr:`answers_k`,
    :attr:`answer_temperature` and :meth:`schedule` resolve them against the probe's defaults
    (:data:`PROBE_DEFAULTS`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    probe: Annotated[SettingsProbe, one_of(SETTINGS_PROBES)] = "trace"
    replay_under: str | None = None
    answer: str = "auto"
    forced_answer_tag: str | None = None
    fractions: str | tuple[float, ...] | None = None
    stride: OptionalPositiveCount = None
    cuts: Cuts | None = None
    max_cuts: OptionalPositiveCount = None
    zero_probe: bool | None = None
    k: OptionalPositiveCount = None
    temperature: OptionalTemperature = None
    answer_max_tokens: OptionalPositiveCount = None
    thetas: Thetas = Field(default=DEFAULT_THETAS_TEXT, validate_default=True)
    seed: Seed = 0
    tokenizer: str | None = None
    think_close: str = DEFAULT_THINK_CLOSE
    pair_key: str = "pair_id"
    condition_key: str = "condition"
    score_key: str | None = None
    reference_condition: str | None = None
    task_args: Annotated[dict[str, Any], yaml_mapping("{problems: 5}")] = Field(
        default=None, validate_default=True
    )
    estimator: Annotated[Estimator, one_of(ESTIMATORS)] = "sampled"
    metrics: Annotated[MetricSet, one_of(METRIC_SETS)] = "compact"
    resample: OptionalPositiveCount = None
    resample_temperature: OptionalTemperature = None
    resample_max_tokens: OptionalPositiveCount = None
    resample_reference: Literal["own", "gold"] | None = None

    @classmethod
    def signature(
        cls, first: Sequence[inspect.Parameter] = (), last: Sequence[inspect.Parameter] = ()
    ) -> inspect.Signature:
        """The signature of a function taking the settings as arguments: the parameters
        ``first``, ``probe`` (positional or keyword), every other field as a keyword (each with
        its default as given), then ``last``."""
        fields = [
            inspect.Parameter(
                name,
                inspect.Parameter.POSITIONAL_OR_KEYWORD
                if name == "probe"
                else inspect.Parameter.KEYWORD_ONLY,
                default=info.default,
                annotation=info.annotation,
            )
            for name, info in cls.model_fields.items()
        ]
        return inspect.Signature([*first, *fields, *last])

    @classmethod
    def parameters_of(
        cls, first: Sequence[inspect.Parameter] = (), last: Sequence[inspect.Parameter] = ()
    ) -> Callable[[F], F]:
        """Decorator giving a function that takes the settings as ``**params`` the signature
        :meth:`signature` (so Inspect and ``help()`` see each parameter and its default)."""

        def apply(function: F) -> F:
            function.__signature__ = cls.signature(first, last)  # type: ignore[attr-defined]  # a function object takes the attribute inspect.signature reads
            return function

        return apply

    @field_validator("resample_reference", mode="before")
    @classmethod
    def _resample_reference(cls, value: Any) -> Any:
        return (
            None if value is None else require_one_of("resample_reference", value, ("own", "gold"))
        )

    @field_validator("answer", mode="before")
    @classmethod
    def _answer(cls, value: Any) -> Any:
        if value != "auto" and value not in FORM_NAMES:
            raise ParameterError(f"-T answer: must be auto or one of {FORM_NAMES}, got {value!r}")
        return value

    @field_validator("forced_answer_tag", "think_close", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return _joined(value)

    @field_validator("forced_answer_tag")
    @classmethod
    def _tag(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ParameterError("-T forced_answer_tag: must be non-empty text")
        return value

    @field_validator("fractions", mode="before")
    @classmethod
    def _fractions(cls, value: Any) -> Any:
        return fractions_parameter(value)

    @field_validator("cuts", mode="before")
    @classmethod
    def _cuts(cls, value: Any, info: Any) -> Any:
        known = get_args(get_args(cls.model_fields["cuts"].annotation)[0])
        return None if value is None else require_one_of("cuts", value, known)

    @model_validator(mode="after")
    def _resolved(self) -> ProbeSettings:
        if self.probe == "resample":
            for name in NOT_WITH_RESAMPLE:
                if getattr(self, name) is not None:
                    raise ParameterError(f"-T {name}: does not apply to -T probe=resample")
            if self.cuts not in (None, "sentences"):
                raise ParameterError("-T cuts: -T probe=resample cuts at sentences only")
            if self.estimator != "sampled":
                raise ParameterError("-T estimator: -T probe=resample samples its answers")
        else:
            for name in (*RESAMPLE_DEFAULTS, "resample_max_tokens"):
                if getattr(self, name) is not None:
                    raise ParameterError(f"-T {name}: applies to -T probe=resample only")
        if self.fractions is not None and self.stride is not None:
            raise ParameterError("-T fractions and -T stride exclude each other; give one")
        given = {"stride": self.stride, "fractions": self.fractions}
        for name in EXCLUDED_BY_CUTS.get(self.cuts or "", ()):
            if given[name] is not None:
                raise ParameterError(f"-T {name}: does not apply to -T cuts={self.cuts}")
        if self.max_cuts is not None and self.schedule().kind != "sentences":
            raise ParameterError("-T max_cuts: applies to -T cuts=sentences only")
        self.schedule()  # raises for bad fractions or stride
        k, temperature = self.answers_k, self.answer_temperature
        if k > 1 and temperature == 0:
            raise ParameterError(f"-T k={k}: greedy answers are identical; set -T temperature > 0")
        return self

    @property
    def answers_k(self) -> int:
        """Forced answers per prefix: ``k``, else the probe's default."""
        return int(PROBE_DEFAULTS[self.probe]["k"] if self.k is None else self.k)

    @property
    def answer_temperature(self) -> float:
        """Temperature of the forced answers: ``temperature``, else the probe's default."""
        default = PROBE_DEFAULTS[self.probe]["temperature"]
        return float(default if self.temperature is None else self.temperature)

    def resampling(self, name: str) -> Any:
        """A ``resample*`` parameter as given, else its default (:data:`RESAMPLE_DEFAULTS`)."""
        value = getattr(self, name)
        return RESAMPLE_DEFAULTS[name] if value is None else value

    def forced_answers(self, form: AnswerForm) -> ForcedAnswers:
        """The forced answers of this probe on ``form``: ``forced_answer_tag`` (else the form's
        tag), :attr:`answers_k` answers at :attr:`answer_temperature` of at most
        ``answer_max_tokens`` tokens (else the form's budget)."""
        return ForcedAnswers(
            tag=form.tag if self.forced_answer_tag is None else self.forced_answer_tag,
            k=self.answers_k,
            temperature=self.answer_temperature,
            max_tokens=self.answer_max_tokens or form.answer_max_tokens,
            seed=self.seed,
            tokenizer=self.tokenizer,
            estimator=self.estimator,
        )

    def continuations(self) -> Continuations:
        """The resampling of ``-T probe=resample``: the ``resample*`` parameters, each as given
        else its default, from the sentence cuts of :meth:`schedule`."""
        return Continuations(
            n=self.resampling("resample"),
            temperature=self.resampling("resample_temperature"),
            max_tokens=self.resample_max_tokens,
            reference=self.resampling("resample_reference"),
            max_cuts=self.schedule().max_cuts,
        )

    def schedule(self) -> Schedule:
        """Where to cut: ``cuts`` if given, else ``stride`` if given, else ``fractions`` if
        given, else the probe's default schedule (:data:`PROBE_DEFAULTS`), with the zero probe
        as given or by default."""
        defaults = PROBE_DEFAULTS[self.probe]
        kind: ScheduleKind = (
            CUT_KINDS[self.cuts]
            if self.cuts is not None
            else "stride"
            if self.stride is not None
            else "fractions"
            if self.fractions is not None
            else defaults["schedule"]
        )
        try:
            return Schedule(
                kind=kind,
                stride=self.stride if self.stride is not None else DEFAULT_STRIDE,
                fractions=(
                    parse_fractions(self.fractions)
                    if self.fractions is not None
                    else DEFAULT_FRACTIONS
                ),
                zero_probe=defaults["zero_probe"] if self.zero_probe is None else self.zero_probe,
                max_cuts=DEFAULT_MAX_CUTS if self.max_cuts is None else self.max_cuts,
            )
        except ValidationError as e:
            raise ParameterError(validation_line(e, prefix="-T ")) from None


def probe_settings(probe: str = "trace", **params: Any) -> ProbeSettings:
    """:meth:`ProbeSettings.of` of keyword arguments (``probe`` first, as the functions take it)."""
    return ProbeSettings.of(probe=probe, **params)


__all__ = ["DEFAULT_THETAS_TEXT", "PROBE_DEFAULTS", "ProbeSettings", "probe_settings"]
