"""-T fractions (cuts at round(f * T) of each CoT) and -T first_row (the first dataset row read)
of the selfcommit task; the study's defaults (stride 30, rows from 0) unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import SAMPLED_LAST_NUMBER, run_eval
from tasks_loader import load_selfcommit, load_task_module

from cotaudit.logs.data import ScoreData, ScoredSample
from cotaudit.params import ParameterError
from cotaudit.validation.presets import VALIDATION_FRACTIONS, VALIDATION_FRACTIONS_TEXT
from cotaudit.validation.samples import validation_sample
from cotaudit.validation.statistics import statistics_of

ROOT = Path(__file__).resolve().parents[2]


def test_the_defaults_are_the_studys():
    task = load_selfcommit()(problems=2)
    assert [s.id for s in task.dataset][:2] == ["p0000-honest", "p0000-hinted"]
    assert "stride" in task.metadata["positions"]
    assert "fractions" not in task.metadata and "first_row" not in task.metadata


def test_fractions_and_first_row_are_recorded():
    task = load_selfcommit()(problems=2, first_row=800, fractions=VALIDATION_FRACTIONS_TEXT)
    assert [s.id for s in task.dataset] == [
        "p0800-honest",
        "p0800-hinted",
        "p0801-honest",
        "p0801-hinted",
    ]
    assert {s.metadata["pair_id"] for s in task.dataset} == {"p0800", "p0801"}
    assert task.metadata["fractions"] == list(VALIDATION_FRACTIONS)
    assert task.metadata["positions"].startswith("t = round(f * T)")
    assert task.metadata["first_row"] == 800


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"first_row": -1}, r"^-T first_row: must be a dataset row >= 0 \(0-based\), got -1$"),
        ({"first_row": 1.5}, r"^-T first_row: must be an integer, got 1.5$"),
        ({"fractions": "0.5,0.2"}, r"^-T fractions must be strictly increasing"),
        ({"fractions": "0,1"}, r"^-T fractions must lie in \(0, 1\]"),
        ({"fractions": "a"}, r"^-T fractions: expected numbers"),
        ({"fractions": "0.5,1", "stride": 10}, r"^-T fractions and -T stride exclude each other"),
        ({"fractions": "0.5,1", "cuts": "sentences"}, r"^-T fractions: .*cuts=sentences$"),
        ({"fractions": "0.5,1", "schedule": "adaptive"}, r"^-T schedule=adaptive .*fractions$"),
        ({"first_row": 3, "first_look": True}, r"^-T first_row: not with -T first_look=true"),
    ],
)
def test_bad_values_are_one_line(args, message):
    with pytest.raises(ParameterError, match=message) as e:
        load_selfcommit()(**args)
    assert "\n" not in str(e.value)


def test_the_generic_probes_gsm8k_and_trace_tutor_read_from_first_row():
    numeric = load_task_module("probe_examples").gsm8k_numeric(problems=2, first_row=999)
    assert [s.id for s in numeric.dataset] == ["p0999-honest", "p1000-honest"]
    tutor = load_task_module("trace_tutor").trace_tutor(problems=1, first_row=800)
    assert {s.metadata["pair_id"] for s in tutor.dataset} == {"p0800"}
    assert tutor.metadata["first_row"] == 800
    with pytest.raises(ParameterError, match=r"^-T first_row: must be an integer, got True$"):
        load_task_module("trace_tutor").trace_tutor(first_row=True)


@pytest.mark.model
def test_fraction_cuts_on_tiny_model(tmp_path, monkeypatch):
    """Every answered CoT is cut at round(f * T) for the ten validation fractions, and its
    validation sample counts its distinct cuts."""
    monkeypatch.chdir(ROOT)
    log = run_eval(
        "tasks/selfcommit.py",
        "hf-probe/tiny",
        tmp_path,
        task_args=dict(
            problems=2,
            first_row=800,
            max_cot_tokens=30,
            k=2,
            fractions=VALIDATION_FRACTIONS_TEXT,
            **SAMPLED_LAST_NUMBER,
        ),
    )
    answered = 0
    for s in log.samples:
        assert s.metadata["pair_id"] in ("p0800", "p0801")
        meta = s.scores["selfcommit_scorer"].metadata
        if meta["a_final"] is None:
            continue
        answered += 1
        T = meta["cot_tokens"]
        assert meta["positions"] == [round(f * T) for f in VALIDATION_FRACTIONS]
        assert len(meta["matches"]) == len(VALIDATION_FRACTIONS)
        scored = ScoredSample(s.id, ScoreData({}, meta), s.metadata)
        v = validation_sample("selfcommit", scored, statistics_of("selfcommit"))
        assert v.n_cuts == len(set(meta["positions"]))
    assert answered
