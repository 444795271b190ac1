"""The trace_tutor per-sample record that the solver stores and the scorer reads.

:class:`TutorProbe` is written by ``trace_tutor_probe`` into the sample store under
:data:`STORE_KEY` (as JSON: the log's store holds a plain dict) and read
back by ``trace_tutor_scorer``. The scorer's metadata is read by the report through
:func:`cotaudit.studies.trace_tutor.stats.record_from_score`.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from cotaudit.probing.store_record import StoreRecord

STORE_KEY = "trace_tutor"
"""Key of :class:`TutorProbe` in the sample store."""


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
