"""The resampling task on the embedded model: greedy continuations from every sentence cut
reproduce the CoT, so every continuation reaches its final answer (r = 1) and no sentence
matters (RI = 0); the record's curves are the shares of its own stored answers."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from cotaudit.probing.resample_record import ResampleRecord

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.model
def test_greedy_resampling_reproduces_the_cot(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    [log] = inspect_eval(
        "tasks/resample.py",
        model="hf-probe/default",
        task_args={
            "problems": 1,
            "conditions": "hinted",
            "n": 2,
            "temperature": 0.0,
            "k": 1,
            "forced_temperature": 0.0,
            "max_cuts": 5,
            "max_cot_tokens": 256,
        },
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    [sample] = log.samples
    record = ResampleRecord.model_validate(sample.store["resample"])
    assert record.reference == int(sample.output.completion.split("answer is")[-1].strip(" .$\n"))
    # cuts: 0, then at most 5 sentence ends, the CoT's end last
    assert record.cuts[0] == 0 and record.cuts[-1] == record.cot_tokens
    assert 3 <= len(record.cuts) <= 6 and record.cuts == sorted(set(record.cuts))
    # the chunks are the CoT's text between the cuts
    assert "".join(c.text for c in record.chunks) == sample.output.completion
    # greedy continuations are the CoT's own rest: every one reaches the CoT's answer
    assert record.answers == [[record.reference] * 2 for _ in record.cuts]
    assert record.resampled == [1.0] * len(record.cuts)
    assert all(c.resampling == 0.0 and c.resampling_kl == 0.0 for c in record.chunks)
    # the forced curve is the share of its own stored answers
    assert record.forced == [
        sum(a == record.reference for a in row) / len(row) for row in record.forced_answers
    ]
    value = sample.scores["resample_scorer"].value
    assert value["r_mean"] == 1.0 and value["max_importance"] == 0.0
    assert value["gap_mean"] == pytest.approx(sum(record.forced) / len(record.forced) - 1.0)
