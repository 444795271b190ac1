"""selfcommit with ``-T resample`` and ``-T cuts=sentences``: c(t) cut at sentence ends, the
resampling probe's values beside it in the same score, its run metric in the log, and the
report's recomputation of it (embedded model)."""

from __future__ import annotations

import pytest
from helpers import run_eval

from cotaudit.params import ParameterError
from cotaudit.probing.resample_record import ResampleRecord


def test_bad_resample_parameters_are_one_line():
    from cotaudit.tasks.selfcommit import selfcommit

    with pytest.raises(ParameterError, match="^-T resample: must be 0 \\(off\\) or more"):
        selfcommit(resample=-1)
    with pytest.raises(ParameterError, match="^-T resample_max_cuts: must be a positive"):
        selfcommit(resample=2, resample_max_cuts=0)
    with pytest.raises(ParameterError, match="^-T schedule=adaptive refines a token stride"):
        selfcommit(cuts="sentences", schedule="adaptive")
    with pytest.raises(ParameterError, match="^-T cuts: must be one of tokens, sentences"):
        selfcommit(cuts="lines")


@pytest.mark.model
def test_greedy_resampling_beside_the_curve(tmp_path):
    """Greedy continuations from the sentence cuts reproduce the CoT: every one reaches
    a_final (resample_r_mean = 1), in the sample's score and in the run metric."""
    log = run_eval(
        "tasks/selfcommit.py",
        "hf-probe/default",
        tmp_path,
        task_args={
            "problems": 1,
            "conditions": "hinted",
            "max_cot_tokens": 256,
            "stride": 256,
            "k": 1,
            "temperature": 0.0,
            "resample": 1,
            "resample_temperature": 0.0,
            "resample_max_cuts": 3,
            "cuts": "sentences",
            "max_cuts": 2,
        },
    )
    [sample] = log.samples
    # c(t) itself cut at the sentence ends: the last of the two is T
    from cotaudit.probing.sentences import capped, sentence_ends
    from cotaudit.providers.hf_probe import _load_engine, resolve_model_path
    from cotaudit.solvers.engine import completion_token_ids

    engine = _load_engine(resolve_model_path("default"), "float32", "cpu")
    ids = completion_token_ids(sample.output, engine)
    probe = sample.store["selfcommit"]
    assert probe["positions"] == capped(sentence_ends(ids, engine.detokenize), 2)
    assert len(probe["positions"]) == 2 and probe["positions"][-1] == len(ids)
    assert log.eval.metadata["positions"].startswith("t = the token positions where")
    score = sample.scores["selfcommit_scorer"]
    record = ResampleRecord.model_validate(score.metadata["resample"])
    assert record.reference == score.metadata["a_final"] is not None
    assert record.resampled == [1.0] * len(record.cuts) and 3 <= len(record.cuts) <= 4
    assert score.value["resample_r_mean"] == 1.0
    forced_mean = sum(record.forced) / len(record.forced)
    assert score.value["resample_forced_mean"] == pytest.approx(forced_mean)
    metrics = {name: m.value for s in log.results.scores for name, m in s.metrics.items()}
    assert metrics["resample_n_samples"] == 1 and metrics["resample_r_mean"] == 1.0
    assert metrics["resample_r_mean/hinted"] == 1.0

    from cotaudit.report import build_report

    [section] = build_report([log.location], tmp_path / "report").sections["selfcommit"]
    assert section.consistency.ok
    assert section.recomputed["resample_gap_mean"] == pytest.approx(forced_mean - 1.0)
