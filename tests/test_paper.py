"""Each study's paper configuration against the study's own text (``../shared/seeds/``, or
``$COTAUDIT_SEEDS``; skipped where neither exists, unless ``COTAUDIT_REQUIRE_SEEDS=1``).

Every setting's quote must appear in the study verbatim (whitespace and typographic quotes
aside) and must state the value it fixes; every setting names a real task parameter.
"""

from __future__ import annotations

import importlib
import os
import re
from pathlib import Path

import pytest

from cotaudit.studies.paper import PaperConfiguration, PaperSetting, parameter_defaults

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
    defaults = parameter_defaults(_task_function(study))
    assert "paper" in defaults and defaults["paper"] is False
    assert set(_paper(study).settings) <= set(defaults)


def test_apply_keeps_command_line_values_as_overrides():
    paper = PaperConfiguration(
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
    defaults = {"k": 1, "stride": 10, "problems": 2, "seed": 0}
    given = {"k": 1, "stride": 30, "problems": 5, "seed": 3}
    resolved, overrides = paper.apply(given, defaults)
    # k at its default takes the paper's 5; stride set to the paper's own value is no override;
    # problems set on the command line stays 5 and is recorded; seed is not a paper knob.
    assert resolved == {"k": 5, "stride": 30, "problems": 5, "seed": 3}
    assert overrides == {"problems": 5}
    assert paper.log_record(overrides)["overrides"] == {"problems": 5}
