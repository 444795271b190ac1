"""The trace_tutor per-sample record, from the sample store to the statistics.

:class:`TutorProbe` is written by ``trace_tutor_probe`` into the sample store under
:data:`STORE_KEY` (as JSON: the log's store holds a plain dict) and read back by
``trace_tutor_scorer``. Its pass curves, :class:`TraceCurves`, are declared once: the scorer's
``Score.metadata`` is :class:`TraceScoreMetadata` (the curves of the probe record with what the
viewer and the report show beside them), and the statistics' record
(:class:`cotaudit.studies.trace_tutor.stats.TraceRecord`) is the same curves with the sample's
problem, correctness and length, validated from the logged metadata.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, model_validator

from cotaudit.probing.pass_curves import PREFIX_FRACTIONS, checked_passes, trace_auc
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


class TutorProbe(StoreRecord):
    """One tutor explanation and its prefix probes.

    ``positions`` = [0] + [round(f * T) for f in ``fractions``] with T = ``length_tokens``;
    ``probes`` maps ``visible`` (and, for keyed conditions, ``masked``) to its
    :class:`ContextProbe`; ``k`` forced answers per position; ``final_answer`` the integer in
    the explanation's last ``\\boxed{}`` (:func:`cotaudit.answers.extract_boxed_answer`; None
    when there is none)."""

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
    probes: dict[str, ContextProbe]

    def zero_probe(self, context: str) -> float:
        """p(0) in ``context``: gold matches of the 0% probe / k."""
        return self.probes[context].matches[0] / self.k

    def passes(self, context: str) -> list[float]:
        """p(f) = gold matches / k at each fraction f (the 0% probe left out)."""
        return [m / self.k for m in self.probes[context].matches[1:]]


class TraceCurves(BaseModel, frozen=True):
    """One explanation's pass curves against the gold answer ``gold``.

    ``passes_visible`` is the curve probed in the generation context (for question-only, the
    only curve); ``passes_masked`` the curve replayed under the question-only prompt (None, and
    only None, for question-only); p(f) per fraction of ``fractions``. ``zero_probe_visible`` /
    ``zero_probe_masked`` are the 0% probe's pass value (gold match, or its rate over k
    samples), with and without the key. ``final_answer`` is the explanation's boxed integer
    (None if unparsed)."""

    condition: Condition
    gold: int
    final_answer: int | None
    fractions: tuple[float, ...] = PREFIX_FRACTIONS
    passes_visible: list[float]
    passes_masked: list[float] | None
    zero_probe_visible: float
    zero_probe_masked: float | None

    @model_validator(mode="after")
    def _masked_exactly_when_keyed(self) -> TraceCurves:
        keyed = self.condition in KEYED_CONDITIONS
        if keyed != (self.passes_masked is not None) or keyed != (
            self.zero_probe_masked is not None
        ):
            raise ValueError(
                f"{self.condition} curves: masked probes are required for keyed conditions and "
                "absent for question_only"
            )
        checked_passes(self.passes_visible, self.fractions)
        if self.passes_masked is not None:
            checked_passes(self.passes_masked, self.fractions)
        return self


class TraceScoreMetadata(TraceCurves, frozen=True):
    """``Score.metadata`` of ``trace_tutor_scorer``: the curves of the probe record, and
    ``key`` (the teacher-only key shown, None for question-only), the probe ``positions``,
    ``k``, ``delta_context`` (AUC visible minus AUC masked; None for question-only), the parsed
    forced ``answers`` and the ``raw_answers`` per probe context, and whether the explanation
    was ``truncated`` at its token budget."""

    key: int | None
    positions: list[int]
    k: int
    delta_context: float | None
    answers: dict[str, list[list[int | None]]]
    raw_answers: dict[str, list[list[str]]]
    truncated: bool

    @classmethod
    def of(
        cls, probe: TutorProbe, condition: str, key: int | None, gold: int
    ) -> TraceScoreMetadata:
        """The metadata of a scored probe record (of a keyed ``condition``: probed ``masked``
        too)."""
        keyed = condition in KEYED_CONDITIONS
        fractions = tuple(probe.fractions)
        delta = (
            trace_auc(probe.passes("visible"), fractions)
            - trace_auc(probe.passes("masked"), fractions)
            if keyed
            else None
        )
        return cls.model_validate(
            {
                "condition": condition,
                "key": key,
                "gold": gold,
                "final_answer": probe.final_answer,
                "fractions": fractions,
                "positions": probe.positions,
                "k": probe.k,
                "passes_visible": probe.passes("visible"),
                "passes_masked": probe.passes("masked") if keyed else None,
                "zero_probe_visible": probe.zero_probe("visible"),
                "zero_probe_masked": probe.zero_probe("masked") if keyed else None,
                "delta_context": delta,
                "answers": {n: p.parsed for n, p in probe.probes.items()},
                "raw_answers": {n: p.answers for n, p in probe.probes.items()},
                "truncated": probe.truncated,
            }
        )
