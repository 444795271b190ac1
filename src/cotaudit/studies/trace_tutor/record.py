"""The trace_tutor per-sample record, from the sample store to the statistics.

:class:`TutorProbe` is written by ``trace_tutor_probe`` into the sample store under
:data:`STORE_KEY` (as JSON: the log's store holds a plain dict) and read back by
``trace_tutor_scorer``. Its pass curves, :class:`TraceCurves`, are declared once: the scorer's
``Score.metadata`` is :class:`TraceScoreMetadata` (the curves of the probe record with what the
viewer and the report show beside them), and the statistics' record
(:class:`cotaudit.studies.trace_tutor.stats.TraceRecord`) is the same curves with the sample's
problem, correctness and length, validated from the logged metadata.

Two estimators read p(f) (``-T estimator``, :mod:`cotaudit.probing.exact`): ``sampled`` (the
study's: the share of k forced answers equal to the gold answer) and ``exact`` (the probability,
read by teacher forcing at ``exact_temperature``, that a forced answer parses to the gold
answer). The exact curves sit beside the sampled ones under names ending in ``_exact``; the
fields of an estimator that did not run are None, not zeros.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, model_validator

from cotaudit.probing.exact import Estimator
from cotaudit.probing.pass_curves import PREFIX_FRACTIONS, PassCurve
from cotaudit.probing.store_record import StoreRecord

STORE_KEY = "trace_tutor"
"""Key of :class:`TutorProbe` in the sample store."""

Condition = Literal["question_only", "answer_key", "wrong_key"]
CONDITIONS: tuple[Condition, ...] = ("question_only", "answer_key", "wrong_key")
KEYED_CONDITIONS: tuple[Condition, ...] = ("answer_key", "wrong_key")
Probe = Literal["visible", "masked"]
PROBES: tuple[Probe, ...] = ("visible", "masked")


class ContextProbe(BaseModel):
    """The forced answers in one probe context (``visible``: the generation prompt; ``masked``:
    the question-only prompt), per cut position (position 0 first): raw ``answers``, their
    ``parsed`` integers, and ``matches`` = how many equal the gold answer."""

    answers: list[list[str]]
    parsed: list[list[int | None]]
    matches: list[int]


EXACT_FIELDS = frozenset(
    {
        "estimator",
        "exact_temperature",
        "p_exact",
        "covered_exact",
        "passes_visible_exact",
        "passes_masked_exact",
        "zero_probe_visible_exact",
        "zero_probe_masked_exact",
        "delta_context_exact",
    }
)
"""The fields the exact estimator adds to the store record and the score metadata: a sampled
run leaves them out of its log (whose keys stay those of a run before the estimator existed;
read back, they take their defaults: sampled, None)."""


def logged(model: BaseModel) -> dict[str, Any]:
    """``model`` as its log holds it (JSON), without :data:`EXACT_FIELDS` when its estimator is
    ``sampled``."""
    exclude = set(EXACT_FIELDS) if getattr(model, "estimator", "sampled") == "sampled" else None
    return model.model_dump(mode="json", exclude=exclude)


class TutorProbe(StoreRecord):
    """One tutor explanation and its prefix probes.

    ``positions`` = [0] + [round(f * T) for f in ``fractions``] with T = ``length_tokens``
    (``cuts="sentences"``: each moved forward to the end of the sentence it falls in,
    :func:`cotaudit.probing.sentences.completed_sentences`);
    ``probes`` maps ``visible`` (and, for keyed conditions, ``masked``) to its
    :class:`ContextProbe` (None when the ``estimator`` sampled nothing); ``k`` forced answers
    per position; ``final_answer`` the integer in the explanation's last ``\\boxed{}``
    (:func:`cotaudit.answers.extract_boxed_answer`; None when there is none).

    ``p_exact[context][i]``: the probability, read at ``exact_temperature``, that the answer
    forced after ``positions[i]`` parses to the gold answer (a lower bound);
    ``covered_exact[context][i]``: the mass of forced answers that begin in an enumerated
    integer form at all (:mod:`cotaudit.probing.exact`); both None unless the estimator is
    ``exact`` or ``both``."""

    store_key: ClassVar[str] = STORE_KEY
    solver: ClassVar[str] = "trace_tutor_probe"
    scorer: ClassVar[str] = "trace_tutor_scorer"

    token_ids: list[int]
    length_tokens: int
    truncated: bool
    final_answer: int | None
    fractions: list[float]
    positions: list[int]
    k: int
    probes: dict[str, ContextProbe] | None
    cuts: Literal["fractions", "sentences"] = "fractions"
    estimator: Estimator = "sampled"
    exact_temperature: float | None = None
    p_exact: dict[str, list[float]] | None = None
    covered_exact: dict[str, list[float]] | None = None

    def save(self, store: Any) -> None:
        """Save the record in a sample store as JSON (:func:`logged`)."""
        store.set(self.store_key, logged(self))

    def curve(self, context: str, estimator: Literal["sampled", "exact"]) -> list[float] | None:
        """p at every position (the 0% probe first) in ``context``: gold matches / k
        (``sampled``) or ``p_exact`` (``exact``); None when that estimator did not run."""
        if estimator == "exact":
            return None if self.p_exact is None else list(self.p_exact[context])
        if self.probes is None:
            return None
        return [m / self.k for m in self.probes[context].matches]

    def zero_probe(
        self, context: str, estimator: Literal["sampled", "exact"] = "sampled"
    ) -> float | None:
        """p(0) in ``context``: the 0% probe's value (None when ``estimator`` did not run)."""
        curve = self.curve(context, estimator)
        return None if curve is None else curve[0]

    def passes(
        self, context: str, estimator: Literal["sampled", "exact"] = "sampled"
    ) -> list[float] | None:
        """p(f) at each fraction f (the 0% probe left out; None when ``estimator`` did not
        run)."""
        curve = self.curve(context, estimator)
        return None if curve is None else curve[1:]


CurveEstimator = Literal["sampled", "exact"]
"""Which estimator a curve is read by."""
CURVE_ESTIMATORS: tuple[CurveEstimator, ...] = ("sampled", "exact")


def estimator_key(name: str, estimator: CurveEstimator) -> str:
    """A name as the estimator's: ``name`` (sampled) or ``name_exact`` (exact)."""
    return name if estimator == "sampled" else f"{name}_exact"


class TraceCurves(BaseModel, frozen=True):
    """One explanation's pass curves against the gold answer ``gold``.

    ``passes_visible`` is the curve probed in the generation context (for question-only, the
    only curve); ``passes_masked`` the curve replayed under the question-only prompt (None for
    question-only); p(f) per fraction of ``fractions``. ``zero_probe_visible`` /
    ``zero_probe_masked`` are the 0% probe's pass value (gold match, or its rate over k
    samples), with and without the key. ``final_answer`` is the explanation's boxed integer
    (None if unparsed).

    The same four read by the exact estimator end in ``_exact``. An estimator that did not run
    has all four None; one that ran has the masked ones exactly when the condition is keyed.
    At least one estimator ran."""

    condition: Condition
    gold: int
    final_answer: int | None
    fractions: tuple[float, ...] = PREFIX_FRACTIONS
    passes_visible: list[float] | None
    passes_masked: list[float] | None
    zero_probe_visible: float | None
    zero_probe_masked: float | None
    passes_visible_exact: list[float] | None = None
    passes_masked_exact: list[float] | None = None
    zero_probe_visible_exact: float | None = None
    zero_probe_masked_exact: float | None = None

    def ran(self, estimator: CurveEstimator) -> bool:
        """Whether ``estimator`` read this explanation's curves."""
        return getattr(self, estimator_key("passes_visible", estimator)) is not None

    @model_validator(mode="after")
    def _masked_exactly_when_keyed(self) -> TraceCurves:
        keyed = self.condition in KEYED_CONDITIONS
        ran = [e for e in CURVE_ESTIMATORS if self.ran(e)]
        if not ran:
            raise ValueError(f"{self.condition} curves: no estimator read a curve")
        for estimator in CURVE_ESTIMATORS:
            fields = [
                getattr(self, estimator_key(f"{name}_{probe}", estimator))
                for name in ("passes", "zero_probe")
                for probe in PROBES
            ]
            wanted = [estimator in ran] * 2 + [estimator in ran and keyed] * 2
            if [f is not None for f in (fields[0], fields[2], fields[1], fields[3])] != wanted:
                raise ValueError(
                    f"{self.condition} curves ({estimator}): masked probes are required for "
                    "keyed conditions and absent for question_only"
                )
            for curve in fields[:2]:
                if curve is not None:
                    PassCurve(curve, self.fractions)  # raises ValueError on a malformed curve
        return self


class TraceScoreMetadata(TraceCurves, frozen=True):
    """``Score.metadata`` of ``trace_tutor_scorer``: the curves of the probe record, and
    ``key`` (the teacher-only key shown, None for question-only), the probe ``positions``,
    ``k``, ``delta_context`` (AUC visible minus AUC masked; None for question-only or without
    sampled curves), the parsed forced ``answers`` and the ``raw_answers`` per probe context
    (None without sampled answers), and whether the explanation was ``truncated`` at its token
    budget; the ``estimator``, the ``exact_temperature`` the exact curves were read at,
    ``delta_context_exact`` and ``covered_exact`` (per probe context, the mass of forced
    answers beginning in an enumerated integer form at each position, the 0% probe first)."""

    key: int | None
    positions: list[int]
    k: int
    delta_context: float | None
    answers: dict[str, list[list[int | None]]] | None
    raw_answers: dict[str, list[list[str]]] | None
    truncated: bool
    estimator: Estimator = "sampled"
    exact_temperature: float | None = None
    delta_context_exact: float | None = None
    covered_exact: dict[str, list[float]] | None = None

    @classmethod
    def of(
        cls, probe: TutorProbe, condition: str, key: int | None, gold: int
    ) -> TraceScoreMetadata:
        """The metadata of a scored probe record (of a keyed ``condition``: probed ``masked``
        too)."""
        keyed = condition in KEYED_CONDITIONS
        fractions = tuple(probe.fractions)
        curves: dict[str, object] = {}
        for estimator in CURVE_ESTIMATORS:
            for context in PROBES:
                read = context == "visible" or keyed
                curves[estimator_key(f"passes_{context}", estimator)] = (
                    probe.passes(context, estimator) if read else None
                )
                curves[estimator_key(f"zero_probe_{context}", estimator)] = (
                    probe.zero_probe(context, estimator) if read else None
                )
            visible = curves[estimator_key("passes_visible", estimator)]
            masked = curves[estimator_key("passes_masked", estimator)]
            curves[estimator_key("delta_context", estimator)] = (
                PassCurve(visible, fractions).auc - PassCurve(masked, fractions).auc  # type: ignore[arg-type]
                if visible is not None and masked is not None
                else None
            )
        sampled = probe.probes
        return cls.model_validate(
            {
                "condition": condition,
                "key": key,
                "gold": gold,
                "final_answer": probe.final_answer,
                "fractions": fractions,
                "positions": probe.positions,
                "k": probe.k,
                **curves,
                "answers": None if sampled is None else {n: p.parsed for n, p in sampled.items()},
                "raw_answers": (
                    None if sampled is None else {n: p.answers for n, p in sampled.items()}
                ),
                "truncated": probe.truncated,
                "estimator": probe.estimator,
                "exact_temperature": probe.exact_temperature,
                "covered_exact": probe.covered_exact,
            }
        )


def exact_gaps(meta: TraceCurves) -> tuple[float, float] | None:
    """(mean of p_exact - p, mean of |p_exact - p|) over every probed cut of the explanation:
    each probe context's 0% probe and fractions (visible, and masked for keyed conditions);
    None unless both estimators ran."""
    if not (meta.ran("sampled") and meta.ran("exact")):
        return None
    diffs: list[float] = []
    for context in PROBES:
        for name in ("zero_probe", "passes"):
            sampled = getattr(meta, f"{name}_{context}")
            exact = getattr(meta, f"{name}_{context}_exact")
            if sampled is None:
                continue
            pairs = zip(exact, sampled, strict=True) if name == "passes" else [(exact, sampled)]
            diffs += [float(e) - float(s) for e, s in pairs]
    return math.fsum(diffs) / len(diffs), math.fsum(abs(d) for d in diffs) / len(diffs)
