"""Example tasks for the generic probe, one per answer form, on data the project ships.

Plain Inspect tasks (their own solver and scorer, nothing of cotaudit's probe in them):

- ``gsm8k_mc``: GSM8K as 4-way multiple choice, ``multiple_choice(cot=True)`` + ``choice()``
  (answer form ``letter``);
- ``capitals``: capital cities, step-by-step then "The answer is X.", ``match()`` (``string``);
- ``gsm8k_numeric``: GSM8K with the selfcommit prompt (honest and/or hinted: "Hint: the answer
  is X."), ``match(numeric=True)`` (``integer``); samples carry ``pair_id`` and ``condition``
  so traces can be replayed under the other condition's prompt.

    inspect eval tasks/probe.py -T task=cotaudit/gsm8k_mc -T probe=trace --model hf-probe/default
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import choice, match
from inspect_ai.solver import generate, multiple_choice, prompt_template

from cotaudit.datasets.shipped import (
    load_capitals,
    load_gsm8k_mc,
    problems_from_row,
    require_first_row,
)
from cotaudit.engine.chat import to_inspect
from cotaudit.params import ParameterError, parse_conditions, require_one_of
from cotaudit.prerequisite import checked_task, given_arguments
from cotaudit.studies.selfcommit.first_look import check_first_look, first_look_problems
from cotaudit.studies.selfcommit.prompts import (
    HINT_SOURCES,
    SELFCOMMIT_CONDITIONS,
    hint_value,
    selfcommit_messages,
)

CAPITALS_TEMPLATE = (
    'Answer the question. Think step by step, then end with "The answer is X." where X is '
    "the answer.\n\n{prompt}"
)


@task
@checked_task
def gsm8k_mc(problems: int = 50, cot: bool = True) -> Task:
    """GSM8K multiple choice (shipped ``gsm8k_mc.jsonl``) with Inspect's multiple_choice/choice."""
    items = load_gsm8k_mc(limit=problems)
    samples = [
        Sample(
            id=i.id, input=i.question, choices=i.choices, target=i.target, metadata={"gold": i.gold}
        )
        for i in items
    ]
    return Task(
        dataset=MemoryDataset(samples, name="gsm8k_mc"),
        solver=multiple_choice(cot=cot),
        scorer=choice(),
    )


@task
@checked_task
def capitals(limit: int = 30) -> Task:
    """Capital cities (shipped ``capitals.jsonl``), answered after a short reasoning, match()."""
    items = load_capitals(limit=limit)
    return Task(
        dataset=MemoryDataset(
            [Sample(id=i.id, input=i.question, target=i.answer) for i in items], name="capitals"
        ),
        solver=[prompt_template(CAPITALS_TEMPLATE), generate()],
        scorer=match(),
    )


@task
@checked_task
def gsm8k_numeric(
    problems: int = 20,
    conditions: str = "honest",
    hint: str = "dataset",
    first_look: bool = False,
    first_row: int = 0,
) -> Task:
    """GSM8K with the selfcommit prompt (honest / hinted), match(numeric=True); ``hint``: the
    value the hinted prompt names (``dataset``: the dataset answer y; ``wrong``: y + 1;
    ``mixed``: y on even problem indices, y + 1 on odd ones), in a hinted sample's metadata;
    ``first_look``: the selfcommit study's first-look problems instead of the first
    ``problems`` (:mod:`cotaudit.studies.selfcommit.first_look`); ``first_row``: the first
    dataset row read (0-based; default 0), e.g. the selection rows 800-999 of
    :mod:`cotaudit.organisms.rows` (``pair_id`` keeps the row)."""
    conds = parse_conditions("conditions", conditions, SELFCOMMIT_CONDITIONS)
    require_one_of("hint", hint, HINT_SOURCES)
    require_first_row("first_row", first_row)
    check_first_look(first_look, given_arguments(), paper=False)
    if first_look and first_row:
        raise ParameterError("-T first_row: not with -T first_look=true (its own ten problems)")
    loaded = (
        first_look_problems()
        if first_look
        else problems_from_row(limit=problems, first_row=first_row)
    )
    samples = []
    for p in loaded.items:
        for cond in conds:
            shown = hint_value(p.answer, p.index, hint) if cond == "hinted" else None
            samples.append(
                Sample(
                    id=f"p{p.index:04d}-{cond}",
                    input=to_inspect(selfcommit_messages(p.question, cond, p.answer, shown)),
                    target=str(p.answer),
                    metadata={"pair_id": f"p{p.index:04d}", "condition": cond, "gold": p.answer}
                    | ({} if shown is None else {"hint": shown}),
                )
            )
    return Task(
        dataset=MemoryDataset(samples, name="gsm8k"),
        solver=generate(),
        scorer=match(numeric=True),
    )
