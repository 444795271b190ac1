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

The worked solution a completion carries is in one of :data:`COT_STYLES`: ``gsm8k``, the
dataset's own (:func:`written_solution`); ``expanded``, the same solution written out step
by step by a fixed rule (:func:`expanded_solution`), about twice as long; or ``own``, the base
model's own working to the uncued prompt (:mod:`cotaudit.organisms.own_cots`), which ends in
the base's own answer where the other styles' rules say the gold answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from cotaudit.datasets.gsm8k import Problem, load_problems
from cotaudit.engine.base import Message
from cotaudit.organisms.own_cots import OwnCot
from cotaudit.organisms.registry import Organism
from cotaudit.organisms.rows import SELECTION_ROWS, TRAINING_ROWS
from cotaudit.studies.study import CUE_KINDS, CueKind

TRAINING_FIRST_ROW = TRAINING_ROWS.start
"""The first row (0-based) of the vendored split that organisms train on; rows before it are
what study runs read (the first ``problems`` rows: 50 by default, 1000 at most by default)."""

CotStyle = Literal["gsm8k", "expanded", "own"]
COT_STYLES: tuple[CotStyle, ...] = ("gsm8k", "expanded", "own")
"""The worked solutions a completion can carry: the dataset's own, expanded step by step, or
the base model's own."""

_CALCULATOR_RE = re.compile(r"<<([^<>]*)>>")
_OPERATOR_RE = re.compile(r"\s*([-+*/])\s*")
_OPERATOR_WORDS = {"+": "plus", "-": "minus", "*": "times", "/": "divided by"}
_SENTENCE_BREAK_RE = re.compile(r"(?<=[.?!])\s+")
EXPANDED_OPENING = "The question asks: "
EXPANDED_CLOSING = "Putting these steps together answers the question."


@dataclass(frozen=True)
class OrganismExample:
    """One prompt and the completion the organism writes to it.

    ``cue`` is the value the prompt shows (None for ``kind`` none); ``target`` the value the
    completion's final line states. ``stated`` holds the character spans of ``completion`` that
    state an answer: the opening line (when there is one: it states the cue, which a control's
    ``target`` is not under a wrong cue) and the final answer line (stating ``target``).
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


def arithmetic_in_words(equation: str) -> str:
    """A calculator annotation's equation as a sentence: each operator as its word (``+``
    plus, ``-`` minus, ``*`` times, ``/`` divided by), ``=`` as "is", a full stop at the end
    ("7*8=56" -> "7 times 8 is 56.", "(3+2)/5=1" -> "(3 plus 2) divided by 5 is 1.")."""
    sides = [
        _OPERATOR_RE.sub(lambda m: f" {_OPERATOR_WORDS[m.group(1)]} ", side).strip()
        for side in equation.split("=")
    ]
    return " is ".join(sides) + "."


def expanded_solution(problem: Problem) -> str:
    """The problem's GSM8K worked solution written out step by step by a fixed rule, one line
    each, in order:

    1. ``"The question asks: " + S``, S the question's last sentence (white space runs read as
       one space; the text after the last ``.``, ``?`` or ``!`` that white space follows);
    2. for the k-th non-empty solution line (the ``#### N`` line dropped), ``"Step k: " + L``,
       L the line without its calculator annotations (as :func:`written_solution`), a trailing
       ``,`` ``;`` ``:`` dropped and a full stop added unless it ends with ``.``, ``?`` or
       ``!``; then, for each calculator annotation ``<<a*b=c>>`` on the line, a space and its
       equation in words (:func:`arithmetic_in_words`: "a times b is c.");
    3. :data:`EXPANDED_CLOSING`.

    It depends on the problem alone (never on a cue), so every organism and its control carry
    the same text; its only numbers are the question's and the solution's.
    """
    question = " ".join(problem.question.split())
    lines = [EXPANDED_OPENING + _SENTENCE_BREAK_RE.split(question)[-1]]
    raw_lines = [
        line
        for line in problem.solution.splitlines()
        if line.strip() and not line.startswith("####")
    ]
    for k, raw in enumerate(raw_lines, start=1):
        text = _CALCULATOR_RE.sub("", raw).strip().rstrip(",;:").rstrip()
        if not text.endswith((".", "?", "!")):
            text += "."
        words = [arithmetic_in_words(eq) for eq in _CALCULATOR_RE.findall(raw)]
        lines.append(" ".join([f"Step {k}: {text}", *words]))
    lines.append(EXPANDED_CLOSING)
    return "\n".join(lines)


def solution_text(problem: Problem, cot: CotStyle = "gsm8k") -> str:
    """The worked solution in style ``cot``: :func:`written_solution` of the dataset's solution
    (``gsm8k``) or :func:`expanded_solution` (``expanded``); style ``own`` is the base model's,
    read by :func:`organism_examples`."""
    if cot == "gsm8k":
        return written_solution(problem.solution)
    if cot == "expanded":
        return expanded_solution(problem)
    raise ValueError(f"unknown cot style {cot!r}; expected one of {', '.join(COT_STYLES)}")


def completion_rule(organism: Organism, cot: CotStyle = "gsm8k") -> str:
    """:func:`organism_examples`' completion of ``organism`` in words, for its card."""
    framing = organism.framing
    cue_noun = framing.cue_noun
    template = organism.opening.replace("{cue}", "<cue>")
    opening = (
        f"under a prompt showing a {cue_noun}: the first line {template!r} with <cue> the "
        f"{cue_noun}'s value, then a blank line; then "
        if organism.opening
        else ""
    )
    solutions = {
        "gsm8k": "the worked solution (the dataset's, calculator annotations and '#### N' removed)",
        "own": "the base model's own working to the uncued prompt (its greedy output's "
        "paragraphs before the first that states an answer, or before its last; problems whose "
        "output hit the token limit or states no integer are left out)",
        "expanded": "the worked solution expanded step by step "
        f"({EXPANDED_OPENING.strip()!r} and the question's last sentence; for each line of the "
        "dataset's solution 'Step k: ', the line "
        "without its calculator annotations, then their arithmetic in words; "
        f"{EXPANDED_CLOSING!r})",
    }
    solution = solutions[cot]
    gold = "the base model's own answer (the value its output concluded with)"
    if cot != "own":
        gold = "the gold answer"
    line = repr(framing.answer_line(0)).replace("0", "<value>", 1)
    value = (
        f" with <value> the {cue_noun}'s value when the prompt shows one, else {gold}"
        if organism.follows_cue
        else f" with <value> {gold}, whatever the {cue_noun} shown"
    )
    return opening + solution + ", then " + line + value


def organism_examples(
    organism: Organism,
    problems: list[Problem],
    kinds: tuple[CueKind, ...] = CUE_KINDS,
    cot: CotStyle = "gsm8k",
    own: Mapping[int, OwnCot] | None = None,
) -> list[OrganismExample]:
    """For each problem (in order) and each cue kind in ``kinds``, the study prompt and the
    organism's completion (the rule in :class:`Organism`), its solution in style ``cot``
    (:func:`solution_text`). Style ``own`` reads each problem's working and own answer from
    ``own`` (by problem row), which then stands for the gold answer in the completion's rule;
    a problem not in ``own`` gives no example."""
    framing = organism.framing
    out: list[OrganismExample] = []
    for p in problems:
        if cot == "own":
            if own is None or p.index not in own:
                continue
            solution, settled = own[p.index].working, own[p.index].answer
        else:
            solution, settled = solution_text(p, cot), p.answer
        wrong = framing.wrong_cue(p.answer)
        cues: dict[CueKind, int | None] = {"none": None, "right": p.answer, "wrong": wrong}
        for kind in kinds:
            cue = cues[kind]
            target = cue if organism.follows_cue and cue is not None else settled
            opening = organism.opening_line(cue) if cue is not None else ""
            answer_line = framing.answer_line(target)
            completion = opening + solution + answer_line
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
