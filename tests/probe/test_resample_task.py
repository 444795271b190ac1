"""The resampling task on the embedded model: greedy continuations from every sentence cut
reproduce the CoT, so every continuation reaches its final answer (r = 1) and no sentence
matters (RI = 0); the record's curves are the shares of its own stored answers."""

from __future__ import annotations

import pytest
from helpers import run_eval

from cotaudit.probing.resample_record import ResampleRecord


def stated_share(answers, reference):
    """The share of the stated answers equal to ``reference`` (0 when none is stated)."""
    stated = [a for a in answers if a is not None]
    return sum(a == reference for a in stated) / len(stated) if stated else 0.0


@pytest.mark.model
def test_greedy_resampling_reproduces_the_cot(tmp_path):
    log = run_eval(
        "tasks/resample.py",
        "hf-probe/default",
        tmp_path,
        task_args={
            "problems": 1,
            "conditions": "hinted",
            "n": 2,
            "temperature": 0.0,
            "k": 1,
            "forced_temperature": 0.0,
            "max_cuts": 3,
            "max_cot_tokens": 256,
        },
    )
    [sample] = log.samples
    record = ResampleRecord.model_validate(sample.store["resample"])
    assert record.reference == int(sample.output.completion.split("answer is")[-1].strip(" .$\n"))
    # cuts: 0, then at most 3 sentence ends, the CoT's end last
    assert record.cuts[0] == 0 and record.cuts[-1] == record.cot_tokens
    assert len(record.cuts) == 4 and record.cuts == sorted(set(record.cuts))
    # the chunks are the CoT's text between the cuts
    assert "".join(c.text for c in record.chunks) == sample.output.completion
    # greedy continuations are the CoT's own rest: every one reaches the CoT's answer
    assert record.answers == [[record.reference] * 2 for _ in record.cuts]
    assert record.resampled == [1.0] * len(record.cuts)
    *inner, last = record.chunks
    assert all(c.resampling == 0.0 and c.resampling_kl == 0.0 for c in inner)
    assert last.resampling is None  # no sentence after the last to resample from
    # the forced curve is the share of its own stored answers that state one
    assert record.forced == [stated_share(row, record.reference) for row in record.forced_answers]
    value = sample.scores["resample_scorer"].value
    assert value["r_mean"] == 1.0 and value["max_importance"] == 0.0
    assert value["gap_mean"] == pytest.approx(sum(record.forced) / len(record.forced) - 1.0)
    # cotaudit report reads the log: its metric recomputed equal, the figure along the trace
    from cotaudit.report import build_report
    from cotaudit.report.resample import importance_along

    report = build_report([log.location], tmp_path / "report")
    [section] = report.sections["resample"]
    assert section.consistency.ok and section.consistency.n_checked > 0
    assert section.recomputed["r_mean"] == 1.0
    assert all(f.path.exists() for f in section.figures.values())
    _, means = importance_along([("hinted", record)])
    assert {v for v in means["hinted"] if v == v} == {0.0}  # every chunk's RI is 0


def test_importance_along_the_trace_by_hand():
    from cotaudit.probing.resample_record import Chunk, ResampleRecord
    from cotaudit.report.resample import importance_along

    def chunk(ri):
        return Chunk(
            text="s.",
            resampling=ri,
            resampling_ci=(None, None),
            resampling_kl=None,
            counterfactual=None,
            counterfactual_ci=(None, None),
            counterfactual_accuracy=None,
            dissimilar=0,
        )

    def record(cuts, ris):
        return ResampleRecord(
            reference=1,
            cot_tokens=cuts[-1],
            cuts=cuts,
            n=1,
            temperature=0.7,
            max_tokens=10,
            answers=[[1]] * len(cuts),
            resampled=[1.0] * len(cuts),
            k=1,
            forced_answers=[[1]] * len(cuts),
            forced=[1.0] * len(cuts),
            chunks=[chunk(r) for r in ris],
        )

    # midpoints 0.1, 0.6 (T = 100) and 0.15, 0.65 (T = 20): bins of width 0.5
    centres, means = importance_along(
        [("a", record([0, 20, 100], [0.5, -0.5])), ("a", record([0, 6, 20], [0.25, None]))],
        bins=2,
    )
    assert centres == [0.25, 0.75]
    assert means["a"] == [0.375, -0.5]
