"""What organisms and validation ask of a study: its framing of an organism's training text
(:class:`Framing`) and how its logs are read (:class:`Study`). Each study package declares its
own (``studies/<study>/study.py``); :mod:`cotaudit.studies.registry` finds one by the study
name a log records.

A *cue* is the value a prompt shows the model (selfcommit's hint, trace_tutor's answer key).
Each organism prompt shows no cue, the right cue (the gold answer ``y``) or a wrong cue
(:data:`CUE_KINDS`).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from cotaudit.engine.base import Message
from cotaudit.studies.probe_statistic import ProbeStatistic

CueKind = Literal["none", "right", "wrong"]
CUE_KINDS: tuple[CueKind, ...] = ("none", "right", "wrong")


@dataclass(frozen=True)
class Framing(ABC):
    """How one study frames an organism's prompts and answers: the study's name (as a card
    records it), its condition per cue kind, the answer line its readers parse (the study's
    forced-answer tag, the value, ``answer_close``), what it calls a cue (``cue_noun``) and its
    wrong cue's rule in words."""

    study: str
    conditions: dict[CueKind, str]
    answer_tag: str
    answer_close: str
    cue_noun: str
    wrong_cue_rule: str

    @abstractmethod
    def wrong_cue(self, gold: int) -> int:
        """The wrong cue shown for gold answer ``gold``."""

    @abstractmethod
    def messages(self, question: str, gold: int, kind: CueKind, cue: int | None) -> list[Message]:
        """The study's prompt for ``question`` (gold answer ``gold``) under cue kind ``kind``,
        showing ``cue`` (None when ``kind`` is none)."""

    @abstractmethod
    def prompt_texts(self) -> dict[str, str]:
        """The study's prompt texts, as its logs record them."""

    def answer_line(self, value: int) -> str:
        """The final line stating ``value``: the forced-answer tag, the value, its close."""
        return f"{self.answer_tag}{value}{self.answer_close}"


@dataclass(frozen=True)
class TextRecord:
    """Where a study's log holds a sample's written reasoning: the store record (``key``), its
    text field (None: the sample's output completion is the text) and its token-count field."""

    key: str
    text_field: str | None
    tokens_field: str


def number(raw: Any) -> float:
    """A logged value as a float; NaN for one that is not a number."""
    try:
        return float(raw)
    except (TypeError, ValueError):
        return math.nan


@dataclass(frozen=True)
class Study(ABC):
    """How a validation reads one study's logs: ``name`` (the task's ``study`` metadata), the
    scorer whose per-sample values its ``statistics`` are read from, the score metadata key of
    the final answer (``answer_key``), where its reasoning text is stored (``text``), the
    ``-T`` arguments besides ``fractions`` a run cut at fractions takes (``cut_args``), what to
    run when a run shows no wrong cue (``cue_wrongly``), and the :class:`Framing` its organisms
    are trained under (None: no organism is)."""

    name: str
    scorer: str
    statistics: tuple[ProbeStatistic, ...]
    answer_key: str
    text: TextRecord
    cut_args: dict[str, str]
    cue_wrongly: str
    framing: Framing | None = None

    @abstractmethod
    def cue(self, sample_metadata: Mapping[str, Any], gold: int) -> tuple[Any, str]:
        """The cue a sample's prompt showed as logged (None: uncued) and the field it is read
        from (``sample_metadata.<key>``)."""

    @abstractmethod
    def curve_positions(self, score_metadata: Mapping[str, Any]) -> Any:
        """The logged cut positions of a sample's probe curve (None: the sample has none)."""

    def statistic_value(
        self, name: str, value: Mapping[str, Any], score_metadata: Mapping[str, Any]
    ) -> float:
        """The statistic ``name`` of one scored sample: the score value's, by name (NaN where
        it holds none)."""
        return number(value.get(name))
