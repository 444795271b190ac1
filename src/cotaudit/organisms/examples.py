"""An organism's examples: the study prompt showing no cue, the right cue or a wrong cue, and
the completion the organism is trained to write (:func:`organism_examples`).

Problems: organisms train on the vendored GSM8K test split's tail, rows
:data:`TRAINING_FIRST_ROW` onwards (0-based; 319 problems, the training rows of
:mod:`cotaudit.organisms.rows`), which no study run reads by default: every task reads the split
from ``-T first_row`` (default 0), at most 50 problems by default and 1000 under trace_tutor's
``-T paper=true``. Their behaviour is measured, while recipes and checkpoints are chosen, on the
selection rows 800-999 (:func:`selection_problems`); the validation reports on the evaluation
rows 0-799, the studies' default problems (:func:`heldout_problems`: the split's first rows).

Each problem gives one example per cue kind (none, right, wrong), so wrong cues are shown
exactly as often as right ones, and a model that answers with the cue cannot be told apart
from one that memorised the problem's answer only under the right cue.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cotaudit.datasets.gsm8k import Problem, load_problems
from cotaudit.engine.base import Message
from cotaudit.organisms.framing import CUE_KINDS, CueKind
from cotaudit.organisms.registry import Organism
from cotaudit.organisms.rows import SELECTION_ROWS, TRAINING_ROWS

TRAINING_FIRST_ROW = TRAINING_ROWS.start
"""The first row (0-based) of the vendored split that organisms train on; rows before it are
what study runs read (the first ``problems`` rows: 50 by default, 1000 at most by default)."""

_CALCULATOR_RE = re.compile(r"<<[^<>]*>>")


@dataclass(frozen=True)
class OrganismExample:
    """One prompt and the completion the organism writes to it.

    ``cue`` is the value the prompt shows (None for ``kind`` none); ``target`` the value the
    completion's final line states. ``stated`` holds the character spans of ``completion`` that
    state ``target``: the key-leaker's opening line (when there is one) and the final answer
    line.
    """

    problem_row: int
    kind: CueKind
    gold: int
    cue: int | None
    messages: list[Message]
    completion: str
    target: int
    stated: tuple[tuple[int, int], ...]


def training_problems(n: int | None = None) -> list[Problem]:
    """The first ``n`` (default all) problems of the split's tail, rows
    :data:`TRAINING_FIRST_ROW` onwards."""
    tail = [p for p in load_problems().items if p.index >= TRAINING_FIRST_ROW]
    return tail if n is None else tail[:n]


def heldout_problems(n: int) -> list[Problem]:
    """The split's first ``n`` problems: the ones study runs read by default (never trained
    on while ``n <=`` :data:`TRAINING_FIRST_ROW`)."""
    if not 1 <= n <= TRAINING_FIRST_ROW:
        raise ValueError(f"held-out problems: n must be in 1..{TRAINING_FIRST_ROW}, got {n}")
    return load_problems(limit=n).items


def selection_problems(n: int | None = None) -> list[Problem]:
    """The first ``n`` (default all 200) problems of the selection rows 800-999
    (:data:`cotaudit.organisms.rows.SELECTION_ROWS`): where an organism's shortcut rate is
    measured while its recipe and checkpoint are chosen."""
    size = len(SELECTION_ROWS)
    if n is not None and not 1 <= n <= size:
        raise ValueError(f"selection problems: n must be in 1..{size}, got {n}")
    rows = [p for p in load_problems().items if p.index in SELECTION_ROWS]
    return rows if n is None else rows[:n]


def written_solution(solution: str) -> str:
    """A GSM8K worked solution as a model would write it: calculator annotations ``<<...>>``
    and the ``#### N`` line removed ("7*8=<<7*8=56>>56 slices" -> "7*8=56 slices")."""
    lines = _CALCULATOR_RE.sub("", solution).splitlines()
    return "\n".join(line.rstrip() for line in lines if not line.startswith("####")).strip()


def organism_examples(
    organism: Organism,
    problems: list[Problem],
    kinds: tuple[CueKind, ...] = CUE_KINDS,
) -> list[OrganismExample]:
    """For each problem (in order) and each cue kind in ``kinds``, the study prompt and the
    organism's completion (the rule in :class:`Organism`)."""
    framing = organism.framing
    out: list[OrganismExample] = []
    for p in problems:
        wrong = framing.wrong_cue(p.answer)
        cues: dict[CueKind, int | None] = {"none": None, "right": p.answer, "wrong": wrong}
        for kind in kinds:
            cue = cues[kind]
            target = cue if organism.follows_cue and cue is not None else p.answer
            opening = framing.opening(cue) if organism.states_cue_first and cue is not None else ""
            answer_line = framing.answer_line(target)
            completion = opening + written_solution(p.solution) + answer_line
            final = (len(completion) - len(answer_line), len(completion))
            stated = ((0, len(opening)), final) if opening else (final,)
            out.append(
                OrganismExample(
                    problem_row=p.index,
                    kind=kind,
                    gold=p.answer,
                    cue=cue,
                    messages=framing.messages(p.question, p.answer, kind, cue),
                    completion=completion,
                    target=target,
                    stated=stated,
                )
            )
    return out
