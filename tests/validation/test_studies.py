"""The study objects organisms and validation ask (``studies/<study>/study.py``), found by the
study name a log records; no module of organisms/ or validation/ names a study itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import cotaudit
from cotaudit.logs.data import ScoreData, ScoredSample
from cotaudit.studies.registry import STUDIES, study_named
from cotaudit.studies.selfcommit.study import PROBE_SELFCOMMIT, SELFCOMMIT, SELFCOMMIT_FRAMING
from cotaudit.studies.trace_tutor.study import TRACE_TUTOR, TUTOR_FRAMING
from cotaudit.validation.presets import validation_task_args
from cotaudit.validation.samples import SampleError, validation_sample
from cotaudit.validation.statistics import scorer_of, statistics_of
from cotaudit.validation.table import how_to_cue_wrongly

SOURCE = Path(cotaudit.__file__).parent


def test_each_logged_study_name_finds_its_object():
    assert STUDIES == {
        "selfcommit": SELFCOMMIT,
        "probe_selfcommit": PROBE_SELFCOMMIT,
        "trace_tutor": TRACE_TUTOR,
    }
    assert study_named("report_ll") is None
    assert statistics_of("report_ll") == () and scorer_of("report_ll") == ""
    assert [scorer_of(n) for n in STUDIES] == [
        "selfcommit_scorer",
        "probe_scorer",
        "trace_tutor_scorer",
    ]
    assert [s.name for s in statistics_of("probe_selfcommit")] == [
        "tau_0.8",
        "range_c",
        "uncommitted",
        "lowcommit",
    ]


def test_a_validation_runs_cut_schedule_per_study():
    ten = "0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1"
    assert validation_task_args(SELFCOMMIT) == {"fractions": ten}
    assert validation_task_args(TRACE_TUTOR) == {"fractions": ten}
    assert list(validation_task_args(PROBE_SELFCOMMIT).items()) == [
        ("cuts", "fractions"),
        ("fractions", ten),
    ]


def test_what_to_run_without_a_wrong_cue_is_the_studys():
    assert how_to_cue_wrongly("selfcommit") == (
        "run the study with -T hint=mixed (hints wrong as often as right)"
    )
    assert "wrong_key" in how_to_cue_wrongly("trace_tutor")
    assert how_to_cue_wrongly("report_ll") == "run it with cues wrong as often as right"


def test_the_framings_wrong_cue_is_one_above_gold_and_named_by_the_studys_noun():
    assert (SELFCOMMIT_FRAMING.wrong_cue(7), TUTOR_FRAMING.wrong_cue(7)) == (8, 8)
    assert (SELFCOMMIT_FRAMING.cue_noun, TUTOR_FRAMING.cue_noun) == ("hint", "key")
    assert SELFCOMMIT.framing is SELFCOMMIT_FRAMING and TRACE_TUTOR.framing is TUTOR_FRAMING
    assert PROBE_SELFCOMMIT.framing is None


def test_a_sample_of_a_study_no_validation_reads_is_refused():
    scored = ScoredSample("s1", ScoreData({}, {}), {"pair_id": "p0001", "gold": 3})
    with pytest.raises(SampleError, match="study 'report_ll' has no validation reading"):
        validation_sample("report_ll", scored, ())


def _strings(path: Path) -> set[str]:
    """The string constants of a module that are no docstring."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    }


@pytest.mark.parametrize(
    "path",
    sorted(p for d in ("organisms", "validation") for p in (SOURCE / d).glob("*.py")),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_organisms_and_validation_name_no_study(path):
    """A study is asked through its object; no code here holds its name."""
    assert _strings(path) & {*STUDIES, "report_ll"} == set()
