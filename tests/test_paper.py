"""Each study's paper configuration against the study's own text (``../shared/seeds/``, or
``$COTAUDIT_SEEDS``; skipped where neither exists, unless ``COTAUDIT_REQUIRE_SEEDS=1``).

Every setting's quote must appear in the study verbatim (whitespace and typographic quotes
aside) and must state the value it fixes; every setting names a real task parameter.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
from pathlib import Path

import pytest

from cotaudit.params import ParameterError
from cotaudit.studies.paper import PaperConfiguration, PaperSetting, parameters_used

SEEDS = Path(
    os.environ.get("COTAUDIT_SEEDS")
    or Path(__file__).resolve().parents[1].parent / "shared" / "seeds"
)
STUDIES = ("selfcommit", "trace_tutor", "report_ll")


def _normalised(text: str) -> str:
    text = text.replace("\u201c", '"').replace("\u201d", '"').replace("\u2019", "'")
    return re.sub(r"\s+", " ", text).strip()


def _paper(study: str) -> PaperConfiguration:
    return importlib.import_module(f"cotaudit.studies.{study}.paper").PAPER


def _task_function(study: str):
    return getattr(importlib.import_module(f"cotaudit.tasks.{study}"), study)


@pytest.fixture(scope="module")
def seeds() -> dict[str, str]:
    if not SEEDS.is_dir():
        why = (
            f"the studies' texts are not at {SEEDS} (the shared folder beside the checkout; "
            "set COTAUDIT_SEEDS)"
        )
        if os.environ.get("COTAUDIT_REQUIRE_SEEDS") == "1":
            pytest.fail(why)
        pytest.skip(why)
    return {p.name: _normalised(p.read_text(encoding="utf-8")) for p in SEEDS.glob("*.txt")}


@pytest.mark.parametrize("study", STUDIES)
def test_every_quote_is_the_studys_own_words_and_states_its_value(study, seeds):
    paper = _paper(study)
    assert paper.study == study
    text = seeds[paper.seed]
    assert paper.settings, f"{study}: no settings"
    for name, setting in paper.settings.items():
        quote = _normalised(setting.quote)
        assert quote in text, f"{study}.{name}: quote not in {paper.seed}: {setting.quote!r}"
        assert _normalised(setting.stated_as()) in quote, (
            f"{study}.{name}: the quote does not state {setting.stated_as()!r}"
        )


@pytest.mark.parametrize("study", STUDIES)
def test_every_setting_names_a_task_parameter(study):
    parameters = inspect.signature(_task_function(study)).parameters
    defaults = {name: p.default for name, p in parameters.items()}
    assert "paper" in defaults and defaults["paper"] is False
    assert set(_paper(study).settings) <= set(defaults)


_TOY = PaperConfiguration(
    study="s",
    source="S",
    seed="x.txt",
    model="m",
    settings={
        "k": PaperSetting(5, "k=5"),
        "stride": PaperSetting(30, "stride 30"),
        "problems": PaperSetting(50, "first 50"),
    },
)


def test_the_paper_is_the_base_that_given_values_overlay():
    # the task's values (defaults k=1, stride=10, problems=2, seed=0), k given at its default
    arguments = {"k": 1, "stride": 30, "problems": 5, "seed": 3}
    resolved, overrides = _TOY.apply(arguments, given={"k", "stride", "problems", "seed"})
    # k given at the task's default 1 stays 1 and is an override; stride given as the paper's
    # own value is no override; problems given stays 5; seed is not a paper knob
    assert resolved == {"k": 1, "stride": 30, "problems": 5, "seed": 3}
    assert overrides == {"k": 1, "problems": 5}
    # nothing given: the paper's values, no override
    resolved, overrides = _TOY.apply({"k": 1, "stride": 10, "problems": 2, "seed": 0}, given=())
    assert resolved == {"k": 5, "stride": 30, "problems": 50, "seed": 0} and overrides == {}


def test_configure_records_what_ran_and_refuses_a_non_bool():
    arguments = {"k": 1, "stride": 10, "problems": 2, "seed": 0}
    assert _TOY.configure(False, arguments, given=()) == (arguments, None)
    resolved, record = _TOY.configure(True, arguments, given={"problems"})
    assert record is not None
    assert record["parameters"] == resolved == {"k": 5, "stride": 30, "problems": 2, "seed": 0}
    assert record["overrides"] == {"problems": 2}
    with pytest.raises(ParameterError, match="-T paper: must be true or false"):
        _TOY.configure("yes", arguments, given=())


def test_parameters_used_reads_what_ran():
    # Inspect's task_args list the defaults for parameters not given
    task_args = {"k": 1, "stride": 10, "problems": 2, "paper": True}
    record = _TOY.configure(True, {"k": 1, "stride": 10, "problems": 2}, {"problems"})[1]
    assert parameters_used(task_args, {"paper_configuration": record}) == {
        "k": 5,
        "stride": 30,
        "problems": 2,
    }
    # a log whose record has no parameters: the settings' values, then the overrides
    older = {k: v for k, v in record.items() if k != "parameters"}
    assert parameters_used(task_args, {"paper_configuration": older}) == {
        "k": 5,
        "stride": 30,
        "problems": 2,
        "paper": True,
    }
    assert parameters_used(task_args, {}) == task_args
