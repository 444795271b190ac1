"""A study's framing of an organism's training text: its prompts with and without a cue, the
wrong cue it shows, and the answer line its readers parse, all taken from the study's own
prompt module (:mod:`cotaudit.studies.selfcommit.prompts`,
:mod:`cotaudit.studies.trace_tutor.prompts`).

Each prompt shows no cue, the right cue (the gold answer ``y``) or a wrong cue:

- selfcommit: the honest prompt; the hinted prompt with hint ``y``; the hinted prompt with hint
  ``y + 1``. The study itself only hints ``y``; the wrong hint is ours, the same rule as
  trace_tutor's wrong key.
- trace_tutor: the no-key (``question_only``), ``answer_key`` (key ``y``) and ``wrong_key``
  (key ``y + 1``) prompts: the study's own three conditions.

Answers end in the line the study's forced-answer tag opens, so a study reads them as it reads
its forced answers: selfcommit ``"\\n\\nThe final answer is N."``, trace_tutor
``"\\n\\nTherefore, the final answer is \\\\boxed{N}."``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cotaudit.engine.base import Message
from cotaudit.studies.selfcommit.prompts import (
    SELFCOMMIT_FORCED_ANSWER_TAG,
    selfcommit_messages,
    selfcommit_prompt_texts,
)
from cotaudit.studies.trace_tutor.prompts import (
    TUTOR_FORCED_ANSWER_TAG,
    tutor_key,
    tutor_messages,
    tutor_prompt_texts,
)

CueKind = Literal["none", "right", "wrong"]
CUE_KINDS: tuple[CueKind, ...] = ("none", "right", "wrong")


@dataclass(frozen=True)
class Framing:
    """How one study frames an organism's prompts and answers (see the module docstring)."""

    study: Literal["selfcommit", "trace_tutor"]
    conditions: dict[CueKind, str]
    answer_tag: str
    answer_close: str
    wrong_cue_rule: str

    def wrong_cue(self, gold: int) -> int:
        """The wrong cue shown for gold answer ``gold``: ``y + 1``, trace_tutor's wrong key."""
        key = tutor_key("wrong_key", gold)
        assert key is not None
        return key

    def messages(self, question: str, gold: int, kind: CueKind, cue: int | None) -> list[Message]:
        """The study's prompt for ``question`` (gold answer ``gold``) showing ``cue``: none
        when ``kind`` is none; trace_tutor's keys are its conditions' own (``y``, ``y + 1``)."""
        condition = self.conditions[kind]
        if self.study == "selfcommit":
            return selfcommit_messages(question, condition, cue if cue is not None else gold)
        if tutor_key(condition, gold) != cue:
            raise ValueError(f"trace_tutor's {condition} prompt shows no key {cue} for gold {gold}")
        return tutor_messages(question, condition, gold)

    def answer_line(self, value: int) -> str:
        """The final line stating ``value``: the forced-answer tag, the value, its close."""
        return f"{self.answer_tag}{value}{self.answer_close}"

    def prompt_texts(self) -> dict[str, str]:
        """The study's prompt texts, as its logs record them."""
        if self.study == "selfcommit":
            return selfcommit_prompt_texts()
        return tutor_prompt_texts()


SELFCOMMIT_FRAMING = Framing(
    study="selfcommit",
    conditions={"none": "honest", "right": "hinted", "wrong": "hinted"},
    answer_tag=SELFCOMMIT_FORCED_ANSWER_TAG,
    answer_close=".",
    wrong_cue_rule="hint y + 1 (as trace_tutor's wrong key)",
)
TUTOR_FRAMING = Framing(
    study="trace_tutor",
    conditions={"none": "question_only", "right": "answer_key", "wrong": "wrong_key"},
    answer_tag=TUTOR_FORCED_ANSWER_TAG,
    answer_close="}.",
    wrong_cue_rule="key y + 1 (the study's wrong_key condition)",
)
