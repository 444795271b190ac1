"""The first look (``-T first_look=true``): ten problems on which the embedded model's run
says something in about a minute.

The embedded default model (SmolLM2-135M-Instruct, greedy CoT under the selfcommit prompts)
states no final answer on many problems under the honest prompt (problem 0 among them), and a
problem without both answers leaves the run (its pair is dropped). The first look runs
:data:`FIRST_LOOK_PROBLEMS`: the first ten problems of the vendored GSM8K test split whose
greedy CoTs on ``hf-probe/default`` state a final answer under both prompts (read from a run of
the first 40 problems: 18 of them have both). On that model every one of the ten makes a pair,
so the headline AUROC stands on n = 10 problems. It is a selection on the model's own output,
made for a first run to show a number that means something, not a sample of the split: the
study's own run is the first 50 problems (``-T paper=true``). On another model the ten are just
ten problems.
"""

from __future__ import annotations

from collections.abc import Collection

from cotaudit.datasets.gsm8k import VENDORED, Problems, load_problems
from cotaudit.params import ParameterError

FIRST_LOOK_PROBLEMS = (1, 3, 5, 7, 9, 11, 13, 19, 25, 27)
"""Row indices in the vendored GSM8K test split of the first look's problems."""

FIRST_LOOK_TEXT = (
    "the first ten problems of the vendored GSM8K test split whose greedy CoTs on "
    "hf-probe/default state a final answer under both prompts (rows "
    + ", ".join(str(i) for i in FIRST_LOOK_PROBLEMS)
    + "): a selection on that model's output for a first run, not a sample of the split"
)
"""What ``-T first_look=true`` ran, as the log's metadata records it."""

EXCLUSIVE_WITH = ("problems", "dataset")
"""Parameters that choose the problems too, so not given with ``-T first_look=true`` (nor is
``-T paper=true``, the study's own 50)."""


def check_first_look(first_look: bool, given: Collection[str], paper: bool) -> None:
    """One line naming the parameter when ``-T first_look`` is not a bool, or is true beside
    ``-T paper=true`` or a parameter of :data:`EXCLUSIVE_WITH` (``given``: the names given to
    the task)."""
    if not isinstance(first_look, bool):
        raise ParameterError(f"-T first_look: must be true or false, got {first_look!r}")
    clash = [name for name in EXCLUSIVE_WITH if name in given] + (["paper=true"] if paper else [])
    if first_look and clash:
        raise ParameterError(
            f"-T first_look=true runs its own ten problems; not with -T {clash[0]} "
            "(drop one of them)"
        )


def first_look_problems() -> Problems:
    """The :data:`FIRST_LOOK_PROBLEMS` of the vendored split, in that order."""
    loaded = load_problems(VENDORED, limit=max(FIRST_LOOK_PROBLEMS) + 1)
    by_index = {p.index: p for p in loaded.items}
    return Problems(
        items=[by_index[i] for i in FIRST_LOOK_PROBLEMS],
        source=loaded.source,
        non_integer_dropped=loaded.non_integer_dropped,
    )
