"""The first look (``-T first_look=true``, README command 1): its ten problems, its checks, and
the README's command run as a new user runs it, on the embedded model: every problem makes a
pair, so the headline rests on n = 10 problems and says no "too few"."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log
from sklearn.metrics import roc_auc_score
from tasks_loader import load_selfcommit

from cotaudit.datasets.gsm8k import load_problems
from cotaudit.params import ParameterError
from cotaudit.studies.selfcommit.first_look import (
    FIRST_LOOK_PROBLEMS,
    FIRST_LOOK_TEXT,
    check_first_look,
    first_look_problems,
)

ROOT = Path(__file__).resolve().parents[2]


def test_the_first_look_is_ten_rows_of_the_vendored_split_in_order():
    loaded = first_look_problems()
    split = {p.index: p for p in load_problems(limit=40).items}
    assert [p.index for p in loaded.items] == list(FIRST_LOOK_PROBLEMS)
    assert len(FIRST_LOOK_PROBLEMS) == 10 and 0 not in FIRST_LOOK_PROBLEMS
    assert all(p == split[p.index] for p in loaded.items)


def test_first_look_is_refused_beside_what_else_chooses_the_problems():
    check_first_look(True, {"stride"}, paper=False)
    check_first_look(False, {"problems", "dataset"}, paper=True)
    with pytest.raises(ParameterError, match=r"^-T first_look=true .* not with -T problems "):
        check_first_look(True, {"problems"}, paper=False)
    with pytest.raises(ParameterError, match="not with -T dataset"):
        check_first_look(True, {"dataset", "k"}, paper=False)
    with pytest.raises(ParameterError, match="not with -T paper=true"):
        check_first_look(True, set(), paper=True)
    with pytest.raises(ParameterError, match="^-T first_look: must be true or false, got 'x'$"):
        check_first_look("x", set(), paper=False)  # type: ignore[arg-type]


def test_the_task_of_the_first_look_runs_its_problems_under_both_prompts():
    selfcommit = load_selfcommit()
    task = selfcommit(first_look=True)
    ids = [s.id for s in task.dataset]
    assert ids == [f"p{i:04d}-{c}" for i in FIRST_LOOK_PROBLEMS for c in ("honest", "hinted")]
    assert task.metadata["first_look"] == FIRST_LOOK_TEXT
    with pytest.raises(ParameterError, match="not with -T problems"):
        selfcommit(first_look=True, problems=10)
    assert "first_look" not in selfcommit(problems=2).metadata


@pytest.mark.model
def test_readme_command_one_shows_a_headline_on_ten_problems(tmp_path):
    """README command 1's ``inspect eval`` as the user types it (read from the README), on the
    embedded model: 20 samples, every problem with both answers, the AUROC defined over 10
    problems and equal to the one computed from the samples' own tau_first(0.8)."""
    from test_readme import EVALS

    [args] = [a for a in EVALS if a[:1] == ["tasks/selfcommit.py"] and "first_look=true" in a]
    env = os.environ | {"INSPECT_EVAL_MODEL": ""}
    done = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", *args, "--log-dir", str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    [path] = tmp_path.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success" and log.eval.model == "hf-probe/default"
    [score] = log.results.scores
    m = {k: v.value for k, v in score.metrics.items()}
    assert (m["n_pairs"], m["n_pairs_dropped_no_answer"]) == (10, 0)
    tau = {
        (s.metadata["pair_id"], s.metadata["condition"]): s.scores["selfcommit_scorer"].value
        for s in log.samples
    }
    honest = [v["tau_0.8"] for (_, c), v in tau.items() if c == "honest"]
    hinted = [v["tau_0.8"] for (_, c), v in tau.items() if c == "hinted"]
    assert len(honest) == len(hinted) == 10 and not any(map(math.isnan, honest + hinted))
    # the study's AUROC: honest positive, larger tau_first more honest-like, ties count half
    expected = roc_auc_score([1] * 10 + [0] * 10, honest + hinted)
    assert m["auroc/tau_0.8"] == pytest.approx(expected, abs=1e-12)
    label = "selfcommit (hf-probe/default)"
    [line] = [x for x in done.stderr.splitlines() if x.startswith(f"{label}: auroc/tau_0.8")]
    assert line == f"{label}: auroc/tau_0.8 = {m['auroc/tau_0.8']:.3g}, n = 10 problems"
    assert not any(t.startswith("auroc/tau_0.8") for t in log.tags)  # no verdict to show
