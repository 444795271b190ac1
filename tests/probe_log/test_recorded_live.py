"""A recorded trace probed on the embedded model gives the forced answers the same trace gets
when the generic probe generates it live, with the same seed and settings: the generic probe's
own log is the recorded log (its samples hold the traces it generated and probed)."""

from __future__ import annotations

import pytest
from helpers import run_eval

import cotaudit
from cotaudit.probing.record import ProbeRecord

SETTINGS = {"probe": "selfcommit", "k": 2, "temperature": 0.7, "seed": 3}


def _eval(task, log_dir):
    return run_eval(task, "hf-probe/default", log_dir, max_tokens=40)


@pytest.mark.parametrize(
    ("task", "task_args", "stride", "final"),
    [
        # 40-token GSM8K traces, cut by the token limit: no final answer, c(t) undefined
        ("cotaudit/gsm8k_numeric", {"problems": 2}, 8, False),
        # "The answer is Paris." (5 tokens): a final answer, c(t) defined at every cut
        ("cotaudit/capitals", {"limit": 2}, 2, True),
    ],
)
def test_recorded_trace_gets_the_live_answers(tmp_path, task, task_args, stride, final):
    settings = SETTINGS | {"stride": stride}
    live = _eval(cotaudit.probe(task, task_args=task_args, **settings), tmp_path)
    recorded = _eval(cotaudit.probe_log(live.location, **settings), tmp_path)
    assert len(recorded.samples) == len(live.samples) == 2
    # the task's scorer, re-created from the probe log's record of it (after the probe's own)
    assert recorded.eval.metadata["probe_log"]["scorer"]["name"] == "match"
    for was, now in zip(live.samples, recorded.samples, strict=True):
        assert str(was.id) == str(now.id)
        a, b = (ProbeRecord.model_validate(s.store["probe"]) for s in (was, now))
        assert b.response == a.response
        assert (b.trace_tokens, b.probed) == (a.trace_tokens, a.probed)
        assert len(a.probed) >= 3
        assert b.context("own").answers == a.context("own").answers
        was_score, now_score = was.scores["probe_scorer"], now.scores["probe_scorer"]
        assert (now_score.metadata["a_final"] is not None) is final
        assert now_score.metadata["a_final"] == was_score.metadata["a_final"]
        assert now_score.metadata["own"]["canonical"] == was_score.metadata["own"]["canonical"]
        assert now_score.value.keys() == was_score.value.keys()
        for key, value in was_score.value.items():
            assert now_score.value[key] == pytest.approx(value, nan_ok=True), key
