"""``-T probe=resample`` on any task: continuations from the trace's sentence cuts, their final
answers read by the task's own scorer; on the tiny random models through Inspect."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from helpers import run_eval
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import match
from written_trace import written_trace

import cotaudit
from cotaudit.params import ParameterError
from cotaudit.probing.forms import normalize_string
from cotaudit.probing.resample_record import ResampleDraws, ResampleRecord
from cotaudit.probing.sentences import capped, sentence_ends
from cotaudit.probing.settings import probe_settings
from cotaudit.probing.think import DEFAULT_THINK_CLOSE
from cotaudit.providers.hf_probe import _load_engine, resolve_model_path
from cotaudit.tasks.probe_examples import capitals, gsm8k_numeric

ROOT = Path(__file__).resolve().parents[2]


def _engine(model: str):
    return _load_engine(resolve_model_path(model.split("/", 1)[1]), "float32", "cpu")


def test_resample_settings_defaults_and_exclusions():
    s = probe_settings("resample")
    assert s.schedule().kind == "sentences" and s.schedule().max_cuts == 20
    assert (s.answers_k, s.answer_temperature) == (5, 0.7)
    assert s.resampling("resample") == 10 and s.resampling("resample_reference") == "own"
    assert probe_settings("resample", max_cuts=4).schedule().max_cuts == 4
    for bad, message in [
        ({"stride": 5}, "^-T stride: does not apply to -T probe=resample$"),
        ({"replay_under": "honest"}, "^-T replay_under: does not apply to -T probe=resample$"),
        ({"cuts": "tokens"}, "^-T cuts: -T probe=resample cuts at sentences only$"),
        ({"estimator": "exact"}, "^-T estimator: -T probe=resample samples its answers$"),
        ({"resample": 0}, "^-T resample: must be a positive integer"),
        ({"resample_reference": "key"}, "^-T resample_reference: must be one of own, gold"),
    ]:
        with pytest.raises(ParameterError, match=message):
            probe_settings("resample", **bad)
    with pytest.raises(ParameterError, match="^-T resample: applies to -T probe=resample only$"):
        probe_settings("selfcommit", resample=3)
    with pytest.raises(ParameterError, match="^-T probe: must be one of trace, selfcommit, resa"):
        probe_settings("resampling")


@pytest.mark.model
def test_greedy_continuations_rewrite_the_trace_tiny(tmp_path, monkeypatch):
    """A greedy trace continued greedily from each sentence cut is the trace itself: every
    continuation reaches the trace's own final answer (the task scorer's reading), r = 1."""
    monkeypatch.chdir(ROOT)
    task = cotaudit.probe(
        gsm8k_numeric(problems=1),
        "resample",
        resample=2,
        resample_temperature=0.0,
        k=1,
        temperature=0.0,
        max_cuts=3,
    )
    log = run_eval(task, "hf-probe/tiny", tmp_path, max_tokens=48, temperature=0.0)
    engine = _engine("hf-probe/tiny")
    [sample] = log.samples
    draws = ResampleDraws.model_validate(sample.store["resample_draws"])
    ids = sample.output.metadata["token_ids"][0]
    assert draws.offset == 0 and draws.cot_tokens == len(ids) == 48
    assert draws.cuts == [0, *capped(sentence_ends(ids, engine.detokenize), 3)]
    assert draws.max_tokens == 48  # the run's max_tokens: a continuation gets the rest of it
    response = sample.output.completion
    for t, prefix, row, used in zip(
        draws.cuts, draws.prefix_texts, draws.continuations, draws.truncated, strict=True
    ):
        assert prefix == engine.detokenize(ids[:t])
        assert [prefix + c for c in row] == [response, response]
        assert used == [True, True]  # each ran to the 48-token budget, as the trace did
    # the tiny model's trace states no number: no own answer to reach, nothing scored
    assert not any(ch.isdigit() for ch in response)
    score = sample.scores["resample_probe_scorer"]
    assert score.value == {} and score.explanation.startswith("No own final answer")


@pytest.mark.model
@pytest.mark.slow
def test_greedy_continuations_reach_the_traces_answer(tmp_path, monkeypatch):
    """On the embedded model: greedy continuations of a greedy trace all reach its own final
    answer as the task's scorer (match) reads it: r = 1 at every cut, no sentence matters."""
    monkeypatch.chdir(ROOT)
    task = cotaudit.probe(
        capitals(limit=1), "resample", resample=1, resample_temperature=0.0, k=1, temperature=0.0
    )
    log = run_eval(task, "hf-probe/default", tmp_path, max_tokens=80, temperature=0.0)
    [sample] = log.samples
    draws = ResampleDraws.model_validate(sample.store["resample_draws"])
    score = sample.scores["resample_probe_scorer"]
    record = ResampleRecord.model_validate(score.metadata["resample"])
    own = normalize_string(sample.output.completion.split("answer is")[-1])
    assert record.reference == score.answer == own
    assert [p + c for p, [c] in zip(draws.prefix_texts, draws.continuations, strict=True)] == [
        sample.output.completion
    ] * len(draws.cuts)
    assert record.answers == [[own] for _ in draws.cuts]
    assert record.resampled == [1.0] * len(draws.cuts)
    assert score.value["r_mean"] == 1.0
    # RI(i) = r(c_{i+1}) - r(c_i) = 0 for every sentence but the last, whose RI is undefined
    # (it has no next sentence to resample from): max |RI| is 0, or NaN for a one-sentence trace
    assert [c.resampling for c in record.chunks] == [0.0] * (len(record.chunks) - 1) + [None]
    if len(record.chunks) > 1:
        assert score.value["max_importance"] == 0.0
    else:
        assert math.isnan(score.value["max_importance"])
    assert record.forced == [sum(a == own for a in row) for row in record.forced_answers]
    [metrics] = [s.metrics for s in log.results.scores if s.scorer == "resample_probe_scorer"]
    assert metrics["r_mean"].value == 1.0 and metrics["n_samples"].value == 1.0
    # cotaudit report reads the log in the resampling section: its metric recomputed equal
    from cotaudit.report import build_report

    report = build_report([log.location], tmp_path / "report")
    [section] = report.sections["probe_resample"]
    assert section.consistency.ok and section.recomputed["r_mean"] == 1.0


THINK = "She has 16 eggs. She uses 7 of them. So 9 are sold at 2 dollars each.\n"


@pytest.mark.model
def test_think_block_cuts_and_gold_reference_tiny(tmp_path):
    """A trace with a think block: the cuts are the block's sentence ends, the continuations
    start inside it, and a continuation's final answer is read after the block it closes (none
    while it stays open); r counts the answers equal to the gold target's reading."""
    written = f"{THINK}</think>\n\nThe final answer is 18."
    task = cotaudit.probe(
        Task(
            dataset=MemoryDataset([Sample(id="p0", input="Janet's ducks?", target="18")]),
            solver=written_trace(written),
            scorer=match(numeric=True),
        ),
        "resample",
        resample=3,
        resample_reference="gold",
        resample_max_tokens=40,
        k=2,
    )
    log = run_eval(task, "hf-probe/tiny-think", tmp_path)
    engine = _engine("hf-probe/tiny-think")
    [sample] = log.samples
    draws = ResampleDraws.model_validate(sample.store["resample_draws"])
    ids = engine.tokenize(written)
    span = ids[: draws.cot_tokens]
    assert draws.think_source == "prompt" and engine.detokenize(span) == THINK
    assert draws.cuts == [0, *capped(sentence_ends(span, engine.detokenize), 20)]
    assert draws.tag == DEFAULT_THINK_CLOSE + "\n\nThe final answer is "  # closes the block
    assert draws.final_text == "The final answer is 18."
    score = sample.scores["resample_probe_scorer"]
    record = ResampleRecord.model_validate(score.metadata["resample"])
    assert record.reference == "18"
    for prefix, row, answers in zip(
        draws.prefix_texts, draws.continuations, record.answers, strict=True
    ):
        assert "</think>" not in prefix and len(row) == 3
        for text, answer in zip(row, answers, strict=True):
            if "</think>" not in text:
                assert answer is None  # still thinking: no final answer
    # r: the share of the continuations stating an answer that state 18 (0 when none does)
    stated = [[a for a in row if a is not None] for row in record.answers]
    assert record.resampled == [
        sum(a == "18" for a in row) / len(row) if row else 0.0 for row in stated
    ]
    assert [c.text for c in record.chunks] == [
        b[len(a) :] for a, b in zip(draws.prefix_texts, draws.prefix_texts[1:], strict=False)
    ]


@pytest.mark.model
def test_task_scorer_raising_on_a_continuation_names_where_the_draws_are(tmp_path):
    """A task scorer that fails on a continuation's copy: the sample's error names the sample
    and the store key that keeps the continuations, which stay in the log."""
    from inspect_ai.scorer import Score, accuracy, scorer
    from inspect_ai.solver import TaskState

    @scorer(metrics=[accuracy()])
    def fragile():
        async def score(state: TaskState, target) -> Score:
            if state.output.completion != "The answer is Paris.":  # not the trace itself
                raise KeyError("no such answer key")
            return Score(value=1, answer="Paris")

        return score

    task = Task(
        dataset=MemoryDataset([Sample(id="c", input="Capital of France?", target="Paris")]),
        solver=written_trace("The answer is Paris."),
        scorer=fragile(),
    )
    [log] = inspect_eval(
        cotaudit.probe(task, "resample", resample=2, resample_max_tokens=12, k=1),
        model="hf-probe/tiny",
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "error"
    [sample] = log.samples
    message = sample.error.message
    assert "the task's scorer raised on the verification copy" in message
    assert "KeyError" in message and "'c'" in message and "'resample_draws'" in message
    draws = ResampleDraws.model_validate(sample.store["resample_draws"])
    assert [len(row) for row in draws.continuations] == [2] * len(draws.cuts)
