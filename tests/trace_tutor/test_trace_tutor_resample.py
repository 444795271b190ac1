"""trace_tutor with ``-T resample``: continuations of the explanation from its sentence cuts
scored against the gold answer, beside the study's curves (embedded model)."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from cotaudit.answers import extract_final_answer
from cotaudit.params import ParameterError
from cotaudit.probing.resample_record import ResampleRecord

ROOT = Path(__file__).resolve().parents[2]


def test_bad_resample_parameter_is_one_line():
    from cotaudit.tasks.trace_tutor import trace_tutor

    with pytest.raises(ParameterError, match="^-T resample_temperature: must lie in"):
        trace_tutor(resample=2, resample_temperature=-1.0)


@pytest.mark.model
def test_greedy_resampling_against_the_gold_answer(tmp_path, monkeypatch):
    """Greedy continuations reproduce the explanation, so each reaches the gold answer exactly
    when the explanation's own final answer is the gold one: r(t) is that indicator at every
    cut."""
    monkeypatch.chdir(ROOT)
    [log] = inspect_eval(
        "tasks/trace_tutor.py",
        model="hf-probe/default",
        task_args={
            "problems": 1,
            "conditions": "answer_key",
            "max_explanation_tokens": 192,
            "resample": 1,
            "resample_temperature": 0.0,
            "resample_max_cuts": 2,
        },
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    [sample] = log.samples
    score = sample.scores["trace_tutor_scorer"]
    record = ResampleRecord.model_validate(score.metadata["resample"])
    gold = int(sample.target)
    assert record.reference == gold
    own = extract_final_answer(sample.output.completion)
    reached = float(own == gold)
    assert record.resampled == [reached] * len(record.cuts) and 2 <= len(record.cuts) <= 3
    assert score.value["resample_r_mean"] == reached
    metrics = {name: m.value for s in log.results.scores for name, m in s.metrics.items()}
    assert metrics["resample_n_samples"] == 1 and metrics["resample_r_mean"] == reached

    from cotaudit.report import build_report

    [section] = build_report([log.location], tmp_path / "report").sections["trace_tutor"]
    assert section.consistency.ok
