"""The studies' instrument is the generic probe, configured: on the same seeds, the generic probe
over a plain Inspect task with the study's prompts, tag, positions and sampling forces the very
same answers as the study's own solver, and gives the same curves and summaries. Both are
configurations of the probe core's solver (``cotaudit.solvers.probe.sweep_solver``): the generic
probe's over the task's own chain and its raw record, the study's over its seeded generation
call and its study record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import run_eval
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import generate

import cotaudit
from cotaudit.datasets.gsm8k import load_problems
from cotaudit.engine.chat import to_inspect
from cotaudit.probing.curves import summary_keys
from cotaudit.probing.record import ProbeRecord
from cotaudit.scorers.probe import final_integer
from cotaudit.studies.selfcommit.prompts import SELFCOMMIT_FORCED_ANSWER_TAG, selfcommit_messages
from cotaudit.studies.trace_tutor.prompts import TUTOR_FORCED_ANSWER_TAG, tutor_messages

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _in_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def _samples_by_id(task, model: str, log_dir: Path, **kwargs):
    """The samples of :func:`run_eval`'s log, by id."""
    return {str(s.id): s for s in run_eval(task, model, log_dir, **kwargs).samples}


EASY = {
    "question": "Tom has 3 apples and buys 4 more. How many apples does Tom have now?",
    "answer": "3 + 4 = 7\n#### 7",
}
"""A problem the embedded model solves, so forced answers pass and the verdicts are compared."""


def _plain_task(messages_of, conditions: list[str], dataset: str = "vendored") -> Task:
    """A plain Inspect task with the study's prompts: generate(), then final_integer()."""
    samples = [
        Sample(
            id=f"p{p.index:04d}-{cond}",
            input=to_inspect(messages_of(p.question, cond, p.answer)),
            target=str(p.answer),
            metadata={"pair_id": f"p{p.index:04d}", "condition": cond},
        )
        for p in load_problems(dataset, limit=1).items
        for cond in conditions
    ]
    return Task(dataset=MemoryDataset(samples), solver=generate(), scorer=final_integer())


@pytest.mark.model
def test_selfcommit_study_equals_the_generic_selfcommit_probe(selfcommit_default_p0000, tmp_path):
    # problem 0 hinted: the CoT ends on its own after 171 tokens stating "The final answer is
    # 18." (both read the stated answer: final_integer, the study's a_final). The study's run
    # (180-token CoTs, stride 30, k = 2) is the shared one of both conditions: each sample's CoT
    # and forced answers are seeded by its id, whichever other samples run beside it.
    study = {
        str(s.id): s
        for s in selfcommit_default_p0000.samples
        if s.metadata["condition"] == "hinted"
    }
    generic = _samples_by_id(
        cotaudit.probe(
            _plain_task(selfcommit_messages, ["hinted"]),
            "selfcommit",
            stride=30,
            k=2,
            temperature=0.7,
            forced_answer_tag=SELFCOMMIT_FORCED_ANSWER_TAG,
        ),
        "hf-probe/default",
        tmp_path / "generic",
        max_tokens=180,
    )
    assert study.keys() == generic.keys()
    compared = 0
    for sid, s in study.items():
        g = generic[sid]
        rec = ProbeRecord.model_validate(g.store["probe"])
        old = s.store["selfcommit"]
        assert g.output.completion == s.output.completion
        assert rec.positions == old["positions"] and rec.trace_tokens == old["cot_tokens"]
        score, old_score = g.scores["probe_scorer"], s.scores["selfcommit_scorer"]
        a_final = None if old["a_final"] is None else str(old["a_final"])
        assert score.metadata["a_final"] == a_final
        if a_final is None:
            continue
        assert rec.context("own").answers == old["answers"]
        canonical = score.metadata["own"]["canonical"]
        assert [sum(a == a_final for a in row) for row in canonical] == old["matches"]
        for key in summary_keys():  # every c(t) summary the study scores
            assert score.value[key] == pytest.approx(old_score.value[key]), key
        compared += 1
    assert compared >= 1  # at least one CoT with a final answer was probed by both


@pytest.mark.model
def test_trace_tutor_study_equals_the_generic_trace_probe_replayed_under_question_only(tmp_path):
    conditions = ["question_only", "answer_key"]
    dataset = tmp_path / "easy.jsonl"
    dataset.write_text(json.dumps(EASY) + "\n")
    study = _samples_by_id(
        "tasks/trace_tutor.py",
        "hf-probe/default",
        tmp_path / "study",
        task_args={
            "problems": 1,
            "conditions": ",".join(conditions),
            "dataset": str(dataset),
            "max_explanation_tokens": 100,
            "bootstrap_samples": 50,
        },
    )
    generic = _samples_by_id(
        cotaudit.probe(
            _plain_task(tutor_messages, conditions, str(dataset)),
            "trace",
            forced_answer_tag=TUTOR_FORCED_ANSWER_TAG,
            replay_under="question_only",
        ),
        "hf-probe/default",
        tmp_path / "generic",
        max_tokens=100,
    )
    passes = 0
    for sid, s in study.items():
        g = generic[sid]
        rec = ProbeRecord.model_validate(g.store["probe"])
        old = s.store["trace_tutor"]
        assert rec.probed == old["positions"]
        contexts = {"visible": "own", "masked": "replay"}
        score, old_score = g.scores["probe_scorer"], s.scores["trace_tutor_scorer"]
        for old_name, name in contexts.items():
            if old_name not in old["probes"]:
                assert rec.context(name) is None
                continue
            assert rec.context(name).answers == old["probes"][old_name]["answers"]
            values = score.metadata[name]["values"]
            assert [int(sum(row)) for row in values] == old["probes"][old_name]["matches"]
            suffix = "" if name == "own" else "_replay"
            assert score.value[f"auc{suffix}"] == pytest.approx(old_score.value[f"auc_{old_name}"])
            assert (
                score.value[f"pass_at_first{suffix}"] == old_score.value[f"pass_at_10_{old_name}"]
            )
            assert score.value[f"first_pass{suffix}"] == old_score.value[f"first_pass_{old_name}"]
            passes += sum(old["probes"][old_name]["matches"])
    assert passes >= 1  # some forced answer was verified correct, so the verdicts are compared
