"""The selfcommit task end to end through Inspect, on real models (no mocks)."""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import pytest
from helpers import (
    SAMPLED_LAST_NUMBER,
    assert_paper_overrides_recorded,
    recorded_calls,
    run_eval,
    signalled_after_two_samples,
)
from inspect_ai import eval_retry
from inspect_ai.log import list_eval_logs, read_eval_log
from transcript_audit import audit_of, clipped_rows

from cotaudit.answers import extract_final_answer
from cotaudit.engine.hf import HFEngine
from cotaudit.params import ParameterError
from cotaudit.probing.positions import Schedule
from cotaudit.report import build_report
from cotaudit.solvers.engine import sample_seed
from cotaudit.studies.selfcommit.display import SELFCOMMIT_VIEWER_FIELDS
from cotaudit.studies.selfcommit.paper import PAPER
from cotaudit.studies.selfcommit.prompts import SELFCOMMIT_FORCED_ANSWER_TAG

ROOT = Path(__file__).resolve().parents[2]
TASK = "tasks/selfcommit.py"  # Inspect resolves task files relative to the working directory


@pytest.fixture(autouse=True)
def _in_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def _run(model: str, log_dir: Path, **task_args):
    task_args.setdefault("metrics", "all")  # the full tables
    return run_eval(TASK, model, log_dir, task_args=task_args)


@pytest.mark.model
def test_end_to_end_on_default_model(selfcommit_default_p0000):
    """Problem p0000 on the default model, greedy CoTs of at most 180 tokens, k = 2, the full
    tables (the shared run of tests/conftest.py): the hinted CoT ends on its own after 171
    tokens with "The final answer is 18." (stated: a_final = 18, a curve); the honest CoT is
    cut by the token limit before it states an answer, so it has none (the last-number reading
    would have read it as answered) and its pair is dropped."""
    log = selfcommit_default_p0000
    assert log.eval.task_args["max_cot_tokens"] == 180 and log.eval.task_args["k"] == 2
    assert len(log.samples) == 2
    by = {s.metadata["condition"]: s for s in log.samples}
    for sample in log.samples:
        score = sample.scores["selfcommit_scorer"]
        meta = score.metadata
        assert meta["positions"][0] == min(30, meta["cot_tokens"])
        assert meta["positions"][-1] == meta["cot_tokens"]
        assert meta["c0"] is None and meta["zero_probe"] is False
        assert set(score.value) >= {"range_c", "uncommitted", "lowcommit", "rho_back", "tau_0.8"}
    hinted = by["hinted"].scores["selfcommit_scorer"]
    assert by["hinted"].output.stop_reason == "stop" and hinted.metadata["truncated"] is False
    assert by["hinted"].output.completion.rstrip().endswith("The final answer is 18.")
    assert hinted.metadata["a_final"] == 18 and hinted.metadata["correct"] is True
    assert len(hinted.metadata["matches"]) == len(hinted.metadata["positions"])
    assert all(0 <= m <= 2 for m in hinted.metadata["matches"])
    assert "c(t)" in hinted.explanation and "t_first = " in hinted.explanation
    honest = by["honest"]
    assert honest.output.stop_reason == "max_tokens"
    assert honest.scores["selfcommit_scorer"].metadata["truncated"] is True
    assert honest.scores["selfcommit_scorer"].metadata["a_final"] is None
    assert "hit its token limit" in honest.scores["selfcommit_scorer"].explanation
    assert extract_final_answer(honest.output.completion, reading="last_number") is not None
    metrics = _metrics(log)
    assert {
        "auroc/tau_0.8",
        "wins/tau_0.8",
        "win_rate/tau_0.8",
        "auroc_tie_share/tau_0.8",
        "median_t_first_honest/tau_0.8",
        "median_T/hinted",
        "best_acc/uncommitted",
        "both_correct/auroc/tau_0.8",
        "median/honest/correct/tau_0.8",
        "cluster_f1",
        "cluster_f1_optimistic",
        "cluster_ari",
        "threshold_f1",
    } <= set(metrics)
    assert metrics["n_truncated/honest"] == 1 and metrics["n_truncated/hinted"] == 0
    assert metrics["n_no_answer/honest"] == 1 and metrics["n_no_answer/hinted"] == 0
    assert metrics["n_pairs_dropped_no_answer"] == 1 and metrics["n_pairs"] == 0
    prompts = log.eval.metadata["prompts"]
    assert prompts["hint_template"] == "Hint: the answer is {answer}."
    assert log.eval.metadata["final_answer_reading"].startswith("stated: ")
    assert f"Hint: the answer is {by['hinted'].target}." in by["hinted"].input[0].text


def _metrics(log) -> dict[str, float]:
    return {k: m.value for s in log.results.scores for k, m in s.metrics.items()}


def test_mechanics_on_tiny_model(tmp_path):
    log = _run("hf-probe/tiny", tmp_path, problems=2, max_cot_tokens=40, stride=10, k=3)
    assert sorted(s.id for s in log.samples) == [
        "p0000-hinted",
        "p0000-honest",
        "p0001-hinted",
        "p0001-honest",
    ]
    assert "t = 0 not probed" in log.eval.metadata["positions"]
    assert "left out" in log.eval.metadata["no_answer"]
    no_answer = {"honest": 0, "hinted": 0}
    for s in log.samples:
        score = s.scores["selfcommit_scorer"]
        meta = score.metadata
        T = meta["cot_tokens"]
        assert meta["positions"] == list(range(10, T, 10)) + [T]
        assert meta["c0"] is None
        if meta["a_final"] is None:
            # no parsable answer: probe skipped, no curve, NaN summaries, flagged
            no_answer[s.metadata["condition"]] += 1
            assert meta["no_answer"] is True and meta["matches"] is None and meta["c"] is None
            assert all(
                math.isnan(v) for k, v in score.value.items() if k not in SELFCOMMIT_VIEWER_FIELDS
            )  # the viewer's text fields aside
        else:
            assert meta["no_answer"] is False
            assert meta["c"] == [m / 3 for m in meta["matches"]]
    metrics = _metrics(log)
    assert metrics["n_no_answer/honest"] == no_answer["honest"]
    assert metrics["n_no_answer/hinted"] == no_answer["hinted"]
    # the random model states no answer and every 40-token CoT hits the limit
    assert no_answer == {"honest": 2, "hinted": 2}
    assert metrics["n_truncated/honest"] == metrics["n_truncated/hinted"] == 2


@pytest.mark.model
def test_zero_probe_is_reported_apart_and_leaves_the_curve_unchanged(tmp_path):
    """-T zero_probe=true adds c0 (t = 0) without changing any position, forced answer, match
    or summary: the forced answers at each t are seeded by (seed, t), whichever other positions
    are probed. The tiny model, its 30-token CoTs sampled (seeded by the sample, so both runs
    draw the same ones) and read as their last number (at greedy decoding it writes no number,
    so it would probe nothing): some samples state an answer and some do not, so both kinds of
    sample are checked."""
    args = dict(
        problems=2,
        max_cot_tokens=30,
        stride=10,
        k=3,
        **SAMPLED_LAST_NUMBER,
    )
    plain = _run("hf-probe/tiny", tmp_path / "plain", **args)
    zero = _run("hf-probe/tiny", tmp_path / "zero", zero_probe=True, **args)
    answered = {
        s.id for s in zero.samples if s.scores["selfcommit_scorer"].metadata["a_final"] is not None
    }
    assert answered and answered != {s.id for s in zero.samples}  # both kinds
    assert "c0" in zero.eval.metadata["positions"]
    by_id = {s.id: s for s in plain.samples}
    for s in zero.samples:
        score, before = s.scores["selfcommit_scorer"], by_id[s.id].scores["selfcommit_scorer"]
        meta = score.metadata
        assert meta["zero_probe"] is True
        assert s.output.completion == by_id[s.id].output.completion
        assert meta["positions"] == before.metadata["positions"]
        assert s.store["selfcommit"]["answers"] == by_id[s.id].store["selfcommit"]["answers"]
        assert meta["matches"] == before.metadata["matches"]
        assert _same_values(score.value, before.value)
        if meta["a_final"] is None:
            assert meta["c0"] is None
        else:
            record = s.store["selfcommit"]
            assert record["prefixes_probed"] == len(meta["positions"]) + (meta["cot_tokens"] > 0)
            assert meta["c0"] in (0.0, 1 / 3, 2 / 3, 1.0)
            assert meta["positions"][0] == 10 and 0 not in meta["positions"]
            assert "c0 (t = 0, not part of the curve) = " in score.explanation
    assert _metrics(zero) == pytest.approx(_metrics(plain), nan_ok=True)


def _same_values(a: dict, b: dict) -> bool:
    """Equal values, NaN equal to NaN (the viewer's text fields compare as text)."""

    def same(x, y) -> bool:
        both_nan = isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y)
        return both_nan or x == y

    return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)


@pytest.mark.parametrize(
    "args, name",
    [
        ({"k": 0}, "k"),
        ({"stride": -3}, "stride"),
        ({"thetas": "0.5,1.2"}, "thetas"),
        ({"conditions": "honest,sneaky"}, "conditions"),
        ({"temperature": -1}, "temperature"),
        ({"contrast_model": "gpt-4o"}, "contrast_model"),
        ({"zero_probe": "yes"}, "zero_probe"),
        ({"final_answer_reading": "last"}, "final_answer_reading"),
        ({"paper": "yes"}, "paper"),
        ({"paper": True, "k": 0}, "k"),
    ],  # an override is validated like any value
)
def test_invalid_parameters_rejected_before_any_model_call(args, name):
    from tasks_loader import load_selfcommit

    with pytest.raises(ParameterError, match=f"-T {name}"):
        load_selfcommit()(**args)


def test_k_above_one_at_temperature_zero_is_rejected():
    """k greedy answers are k copies of one answer: c(t) could only be 0 or 1."""
    from tasks_loader import load_selfcommit

    with pytest.raises(ParameterError, match=r"-T k: k = 5 forced answers at -T temperature=0"):
        load_selfcommit()(temperature=0.0)
    with pytest.raises(ParameterError, match="-T k: k = 2"):
        load_selfcommit()(k=2, temperature=0)
    assert load_selfcommit()(problems=1, k=1, temperature=0.0)  # one greedy answer is fine


def test_paper_configuration_sets_the_studys_settings_and_records_overrides():
    from tasks_loader import load_selfcommit

    task_fn = load_selfcommit()
    task = task_fn(paper=True)
    # "the first 50 examples from the GSM8K test split", honest and hinted: 100 samples
    assert len(task.dataset) == 100
    assert [s.id for s in task.dataset][:2] == ["p0000-honest", "p0000-hinted"]
    record = task.metadata["paper_configuration"]
    assert record["overrides"] == {} and record["model"] == PAPER.model
    values = {name: v["value"] for name, v in record["settings"].items()}
    assert values == {
        "problems": 50,
        "conditions": "honest,hinted",
        "stride": 30,
        "k": 5,
        "temperature": 0.7,
        "max_cot_tokens": 1024,
        "thetas": "0.5,0.6,0.7,0.8,0.9,1",
        "zero_probe": False,
        "schedule": "full",
    }
    assert any("not given verbatim" in n.lower() for n in record["notes"])
    assert_paper_overrides_recorded(task_fn, {"problems": 2, "max_cot_tokens": 64}, 4)


def test_paper_configuration_records_every_value_that_ran():
    """A parameter the paper does not fix, given beside paper=true, is recorded as what ran;
    the paper-fixed ``k`` given at its default 5 (the paper's own value) is no override."""
    from tasks_loader import load_selfcommit

    task = load_selfcommit()(paper=True, problems=2, final_answer_reading="last_number", k=5)
    record = task.metadata["paper_configuration"]
    assert record["overrides"] == {"problems": 2}
    assert record["parameters"]["final_answer_reading"] == "last_number"
    assert record["parameters"]["stride"] == 30 and record["parameters"]["k"] == 5


def test_the_epoch_is_mixed_into_the_probe_seed():
    """Epoch 1 keeps the one-epoch seed; every later epoch gets its own."""
    seeds = [sample_seed(0, "p0000-hinted", e) for e in (1, 2, 3)]
    assert seeds[0] == sample_seed(0, "p0000-hinted") and len(set(seeds)) == 3
    assert sample_seed(1, "p0000-hinted", 2) != seeds[1]  # the base seed still matters


def test_epochs_draw_different_cots_and_forced_answers_on_tiny_model(tmp_path):
    """--epochs 2 on one hinted problem (sampled CoTs, read as their last number): the two
    epochs' CoTs and forced answers differ (with one seed for all epochs they were identical).
    Seed 0 answers p0000-hinted in both epochs."""
    log = run_eval(
        TASK,
        "hf-probe/tiny",
        tmp_path,
        epochs=2,
        task_args=dict(
            problems=1,
            conditions="hinted",
            max_cot_tokens=20,
            stride=10,
            k=2,
            **SAMPLED_LAST_NUMBER,
        ),
    )
    by_epoch = {s.epoch: s for s in log.samples}
    assert sorted(by_epoch) == [1, 2]
    records = {e: s.store["selfcommit"] for e, s in by_epoch.items()}
    assert all(r["a_final"] is not None for r in records.values())  # both epochs probed
    assert by_epoch[1].output.completion != by_epoch[2].output.completion
    assert records[1]["answers"] != records[2]["answers"]


@pytest.fixture(scope="module")
def tiny_paper_run(tmp_path_factory):
    """-T paper=true on the tiny model, 2 problems and 61-token sampled CoTs (read as their last
    number), every prefix request recorded."""
    with recorded_calls(HFEngine, "continue_prefixes_sync") as requests:
        log = run_eval(
            TASK,
            "hf-probe/tiny",
            tmp_path_factory.mktemp("paper"),
            task_args=dict(
                paper=True,
                problems=2,
                max_cot_tokens=61,
                **SAMPLED_LAST_NUMBER,
            ),
        )
    return log, requests


def test_paper_run_probes_with_the_studys_stride_k_and_temperature(tiny_paper_run):
    log, requests = tiny_paper_run
    assert len(log.samples) == 4
    answered = [s for s in log.samples if s.store["selfcommit"]["a_final"] is not None]
    assert answered and len(requests) == len(answered)  # one sweep per answered CoT
    for r in requests:  # stride 30, k = 5 at temperature 0.7, the tag and 8 answer tokens
        assert (r.tag, r.max_tokens, r.k, r.temperature) == (
            SELFCOMMIT_FORCED_ANSWER_TAG,
            8,
            5,
            0.7,
        )
        T = len(r.cot_token_ids)
        assert list(r.positions) == Schedule(kind="stride", stride=30).positions(T)
    logged = read_eval_log(log.location).eval.metadata["paper_configuration"]
    assert logged["overrides"] == {"problems": 2, "max_cot_tokens": 61}


def test_transcript_records_each_cut_as_the_store_record_has_it(tiny_paper_run):
    """Read back from the log file: one probe-sweep span per sample; an answered CoT's sweep has
    a header and one info event per cut t with the prefix length, the forced answers (clipped),
    their parsed values and match verdicts, as the store record has them; an unanswered CoT's
    sweep says why nothing was probed."""
    log, _ = tiny_paper_run
    answered = 0
    for sample in read_eval_log(log.location).samples:
        record, audit = sample.store["selfcommit"], audit_of(sample)
        assert audit.sweep_spans == 1
        if record["a_final"] is None:
            assert audit.cuts == {} and len(audit.notes) == 1 and "a_final = None" in audit.notes[0]
            continue
        answered += 1
        [header] = audit.headers["own"]
        assert header["positions"] == record["positions"]  # full schedule, no zero probe
        assert header["a_final"] == record["a_final"] and header["k"] == 5
        assert header["response_tokens"] == record["cot_tokens"]
        cuts = audit.cuts["own"]
        assert [c["t"] for c in cuts] == [c["prefix_tokens"] for c in cuts] == record["positions"]
        assert [c["answers"] for c in cuts] == clipped_rows(record["answers"])
        assert [c["parsed"] for c in cuts] == record["parsed_answers"]
        assert [c["matches"] for c in cuts] == record["matches"]
        assert [c["match"] for c in cuts] == [
            [p == record["a_final"] for p in row] for row in record["parsed_answers"]
        ]
    assert answered >= 1  # else the cut events are not checked


def test_report_prints_the_studys_tables_beside_the_paper_runs_values(tiny_paper_run, tmp_path):
    log, _ = tiny_paper_run
    [sec] = build_report([log.location], tmp_path, strict=True).sections["selfcommit"]
    assert sec.consistency.ok, sec.consistency.line()
    column = "published, Qwen2.5-3B-Instruct-4bit (MLX Community)"
    t1 = sec.tables["published_table_i"]
    assert t1.columns == ["", "quantity", "this run", column, "run − published", "source"]
    auroc = t1.row("auroc/tau_0.8")
    assert auroc[column] == 0.878 and auroc["source"] == "Table I"  # the study's primary
    assert auroc["this run"] == sec.data["table"]["auroc/tau_0.8"]
    wins = next(r for r in t1.rows if r[0].value == "wins/tau_0.8")
    n = int(sec.data["table"]["n_pairs"])
    assert wins[3].text == "43/50"
    assert wins[2].text == f"{int(sec.data['table']['wins/tau_0.8'])}/{n}" or n == 0
    t2 = sec.tables["published_table_ii"]
    assert t2.row("both_correct/auroc/tau_0.8")[column] == 0.931
    assert next(r for r in t2.rows if r[0].value == "both_correct/wins/tau_0.8")[3].text == (
        "36/40"
    )
    assert sec.tables["published_table_iii"].row("n/hinted/correct")[column] == 46
    text = "\n".join(b for b in sec.blocks if isinstance(b, str))
    assert "This run used the study's configuration (`-T paper=true`); overrides: " in text
    assert "problems=2" in text and "max_cot_tokens=61" in text
    latency = sec.tables["latency"]
    assert latency.columns[2] == "median T (tokens)"


def test_interrupted_run_resumes_without_redoing_samples(tmp_path):
    """Kill a run (a separate process) after some samples finished; eval-retry keeps them and
    runs only the rest. The tiny model, 3 problems (6 samples) one at a time, 100-token greedy
    CoTs (it states no answer, so nothing is probed: each sample takes seconds)."""
    env = dict(os.environ, INSPECT_EVAL_MODEL="hf-probe/tiny")
    cmd = [
        sys.executable,
        "-m",
        "inspect_ai",
        "eval",
        TASK,
        "--log-dir",
        str(tmp_path),
        "-T",
        "problems=3",
        "-T",
        "max_cot_tokens=100",
        "-T",
        "stride=5",
    ]
    done, proc = signalled_after_two_samples(cmd, tmp_path, 240, env=env)
    proc.wait()
    assert 2 <= len(done) < 6, "the run should be interrupted with some samples finished"
    finished = {s.id: s.uuid for s in done}
    [first] = list_eval_logs(str(tmp_path))
    # Inspect's eval-retry, in this process (the CLI command calls it): the model is the log's
    [final] = eval_retry(first.name, log_dir=str(tmp_path), display="none")
    assert final.status == "success", final.error
    assert len(list_eval_logs(str(tmp_path))) == 2  # the interrupted log and the retry's
    assert len(final.samples) == 6
    by_id = {s.id: s for s in final.samples}
    for sid, uuid in finished.items():
        assert by_id[sid].uuid == uuid  # carried over, not recomputed
    assert all(s.scores for s in final.samples)
