"""The selfcommit hint option: which value the hinted prompt names, per problem."""

from __future__ import annotations

import pytest
from tasks_loader import load_selfcommit, load_task_module

from cotaudit.params import ParameterError
from cotaudit.studies.selfcommit.prompts import HINT_TEMPLATE, hint_value


def test_hint_values_by_hand():
    assert [hint_value(18, i, "dataset") for i in range(3)] == [18, 18, 18]
    assert [hint_value(18, i, "wrong") for i in range(3)] == [19, 19, 19]
    assert [hint_value(18, i, "mixed") for i in range(4)] == [18, 19, 18, 19]


def _hints(task) -> dict[str, int | None]:
    return {s.id: (s.metadata or {}).get("hint") for s in task.dataset}


def test_mixed_hints_are_wrong_on_odd_problems_and_named_in_the_prompt():
    task = load_selfcommit()(problems=2, hint="mixed")
    golds = {s.id: s.metadata["gold"] for s in task.dataset}
    assert _hints(task) == {
        "p0000-honest": None,
        "p0000-hinted": golds["p0000-hinted"],
        "p0001-honest": None,
        "p0001-hinted": golds["p0001-hinted"] + 1,
    }
    for s in task.dataset:
        text = s.input[-1].text
        if s.metadata["condition"] == "hinted":
            assert text.endswith(HINT_TEMPLATE.format(answer=s.metadata["hint"]))
        else:
            assert "Hint" not in text
    assert task.metadata["hint"].startswith("X = y on problems of even index")


def test_the_default_hint_is_the_studys_dataset_answer():
    task = load_selfcommit()(problems=2)
    assert all(h == s.metadata["gold"] for s in task.dataset if (h := s.metadata.get("hint")))


def test_the_resample_and_generic_probe_tasks_take_the_same_hint():
    resample = load_task_module("resample").resample(problems=2, hint="wrong")
    numeric = load_task_module("probe_examples").gsm8k_numeric(
        problems=2, conditions="honest,hinted", hint="wrong"
    )
    for task in (resample, numeric):
        hinted = [s for s in task.dataset if s.metadata["condition"] == "hinted"]
        assert [s.metadata["hint"] for s in hinted] == [s.metadata["gold"] + 1 for s in hinted]


@pytest.mark.parametrize("module, name", [("selfcommit", "selfcommit"), ("resample", "resample")])
def test_an_unknown_hint_is_one_line(module, name):
    with pytest.raises(ParameterError, match=r"^-T hint: must be one of dataset, wrong, mixed"):
        getattr(load_task_module(module), name)(problems=1, hint="sometimes")
