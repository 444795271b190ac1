"""The generic probe end to end through Inspect on real models (the embedded default model and
the tiny random models); the task scorers are Inspect's own (choice, match)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import run_eval
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.scorer import choice, match
from inspect_ai.solver import TaskState
from transcript_audit import audit_of, clipped_rows
from written_trace import written_trace

import cotaudit
from cotaudit.answers import extract_final_answer
from cotaudit.datasets.gsm8k import load_problems
from cotaudit.datasets.shipped import load_gsm8k_mc
from cotaudit.engine.base import PrefixRequest
from cotaudit.engine.chat import to_plain
from cotaudit.params import ParameterError
from cotaudit.probing.forms import clip, extract_letter, normalize_string
from cotaudit.probing.pass_curves import PassCurve
from cotaudit.probing.record import ProbeRecord
from cotaudit.probing.summaries import pass_rates
from cotaudit.providers.hf_probe import _load_engine, resolve_model_path
from cotaudit.solvers.engine import completion_token_ids, sample_seed
from cotaudit.tasks.probe_examples import capitals, gsm8k_mc, gsm8k_numeric

ROOT = Path(__file__).resolve().parents[2]
THINK_CLOSE_ID = 4097  # "</think>" in the tiny think model's vocabulary


@pytest.fixture(autouse=True)
def _in_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def _engine(model: str):
    return _load_engine(resolve_model_path(model.split("/", 1)[1]), "float32", "cpu")


def _record(sample) -> ProbeRecord:
    return ProbeRecord.model_validate(sample.store["probe"])


def _replayed_answers(engine, sample, rec: ProbeRecord, context: str, messages=None):
    """The forced answers recomputed straight from the engine: the logged prompt (or
    ``messages``), the logged response's token ids cut at offset + t, then the cut tag."""
    idx = max(i for i, m in enumerate(sample.messages) if m.role == "assistant")
    prompt = messages if messages is not None else to_plain(sample.messages[:idx])
    ids = (
        sample.output.metadata["token_ids"][0]
        if rec.think_source != "reasoning_content"
        else engine.tokenize(rec.response)
    )
    cuts = sorted({rec.offset + t for t in rec.probed})
    rows = engine.continue_prefixes_sync(
        PrefixRequest(
            messages=prompt,
            cot_token_ids=ids[: rec.offset + rec.trace_tokens],
            positions=cuts,
            tag=rec.cut_tag,
            k=rec.k,
            max_tokens=sample_max_tokens(rec),
            temperature=rec.temperature,
            seed=sample_seed(0, sample.id),
        )
    )
    by_cut = dict(zip(cuts, rows, strict=True))
    return [by_cut[rec.offset + t] for t in rec.probed]


def sample_max_tokens(rec: ProbeRecord) -> int:
    return {"integer": 8, "letter": 4, "string": 12}[rec.form]


def _metric(log, name: str) -> float:
    scores = next(s for s in log.results.scores if s.name == "probe_scorer")
    return scores.metrics[name].value


def _assert_run_means(log, keys):
    """Every run metric equals a numpy recount over the logged per-sample values."""
    for key in keys:
        values = np.array([s.scores["probe_scorer"].value[key] for s in log.samples], dtype=float)
        expected = float(np.nanmean(values)) if not np.all(np.isnan(values)) else math.nan
        got = _metric(log, key)
        assert (math.isnan(got) and math.isnan(expected)) or got == pytest.approx(expected), key


# --- mechanics on the tiny model ---------------------------------------------------------------


@pytest.mark.model
def _viewer_score_columns(log) -> list[str]:
    """The probe scorer's keys the log's sample table shows, in their order; every shown label
    fits its column (at most 10 characters)."""
    view = log.eval.viewer.task_samples_view
    prefix = "score__probe_scorer__"
    assert all(len(label) <= 10 for label in view.score_labels.values()), view.score_labels
    return [c.id.removeprefix(prefix) for c in view.columns if c.id.startswith(prefix)]


def _choice_trace(model: str, tmp_path: Path, max_tokens: int) -> tuple[EvalLog, list]:
    """The TRACE probe on two GSM8K multiple-choice problems: the log and, per sample, the sample,
    its record and choice()'s values on the verification copies, checked to be the engine's
    replayed answers read as letters against the item's target."""
    log = run_eval(
        cotaudit.probe(gsm8k_mc(problems=2), "trace"), model, tmp_path, max_tokens=max_tokens
    )
    engine = _engine(model)
    items = {i.id: i for i in load_gsm8k_mc(limit=2)}
    checked = []
    for sample in log.samples:
        rec = _record(sample)
        own = rec.context("own")
        assert own.answers == _replayed_answers(engine, sample, rec, "own")
        expected = [
            [float(extract_letter("ANSWER: " + clip(a)) == items[sample.id].target) for a in row]
            for row in own.answers
        ]
        assert sample.scores["probe_scorer"].metadata["own"]["values"] == expected
        checked.append((sample, rec, expected))
    return log, checked


def test_trace_probe_on_a_choice_task_tiny(tmp_path):
    log, checked = _choice_trace("hf-probe/tiny", tmp_path, max_tokens=40)
    for sample, rec, expected in checked:
        assert (rec.form, rec.tag, rec.cut_tag, rec.think_source) == (
            "letter",
            "\n\nANSWER: ",
            "\n\nANSWER: ",
            "none",
        )
        T = len(sample.output.metadata["token_ids"][0])
        assert rec.trace_tokens == T and rec.offset == 0
        assert rec.probed == [0] + [round(f * T) for f in (0.1, 0.25, 0.5, 0.75, 1.0)]
        score = sample.scores["probe_scorer"]
        p = pass_rates(expected)
        assert score.value["p0"] == p[0]
        assert score.value["auc"] == pytest.approx(
            PassCurve(p[1:], [0.1, 0.25, 0.5, 0.75, 1.0]).auc
        )
        assert score.value["task_score"] == float(sample.scores["choice"].value == "C")
        assert list(score.value) == _viewer_score_columns(log)
    _assert_run_means(log, ["auc", "pass_at_first", "first_pass", "p0", "task_score"])


@pytest.mark.model
def test_think_template_model_cuts_inside_the_block_tiny(tmp_path):
    task = cotaudit.probe(gsm8k_numeric(problems=1), "trace", k=2, temperature=0.7)
    log = run_eval(task, "hf-probe/tiny-think", tmp_path, max_tokens=40)
    engine = _engine("hf-probe/tiny-think")
    [sample] = log.samples
    rec = _record(sample)
    ids = sample.output.metadata["token_ids"][0]
    assert rec.think_source == "prompt"  # the template's generation prompt opened the block
    assert rec.cut_tag == "\n</think>\n\nThe final answer is "
    closed = THINK_CLOSE_ID in ids
    assert rec.think_closed == closed
    assert rec.trace_tokens == (ids.index(THINK_CLOSE_ID) if closed else len(ids))
    if not closed:
        assert rec.final_text == ""
    assert rec.context("own").answers == _replayed_answers(engine, sample, rec, "own")


JANET = (
    "Janet's ducks lay 16 eggs. She uses 3 + 4 = 7, so 16 - 7 = 9 are sold. 9 * 2 = 18 dollars.\n"
)


def _janet_task(solver_, scorer_, mc: bool = False) -> Task:
    if mc:
        item = load_gsm8k_mc(limit=1)[0]
        sample = Sample(id="mc0000", input=item.question, choices=item.choices, target=item.target)
    else:
        p = load_problems(limit=1).items[0]
        sample = Sample(id="p0000", input=p.question, target=str(p.answer))
    return Task(dataset=MemoryDataset([sample]), solver=solver_, scorer=scorer_)


@pytest.mark.model
@pytest.mark.parametrize("kind", ["text", "reasoning_content"])
def test_final_answer_is_read_after_the_think_block_tiny(tmp_path, kind):
    if kind == "text":
        chain = written_trace(JANET + "</think>\n\nThe final answer is 18.")
    else:
        chain = written_trace("The final answer is 18.", reasoning=JANET)
    task = cotaudit.probe(_janet_task(chain, match(numeric=True)), "selfcommit", stride=8, k=2)
    log = run_eval(task, "hf-probe/tiny-think", tmp_path)
    engine = _engine("hf-probe/tiny-think")
    [sample] = log.samples
    rec = _record(sample)
    score = sample.scores["probe_scorer"]
    assert rec.think_closed and rec.final_text == "The final answer is 18."
    assert score.metadata["a_final"] == "18" and score.value["has_final"] == 1.0
    assert list(score.value) == _viewer_score_columns(log)
    ids = engine.tokenize(rec.response)
    if kind == "text":
        assert rec.think_source == "prompt" and rec.offset == 0
    else:
        assert rec.think_source == "reasoning_content" and rec.offset == 1  # after "<think>"
        assert rec.response.startswith("<think>\n" + JANET)
    assert rec.offset + rec.trace_tokens == ids.index(THINK_CLOSE_ID)
    assert rec.positions == list(range(8, rec.trace_tokens, 8)) + [rec.trace_tokens]
    if kind == "reasoning_content":
        assert rec.context("own").answers == _replayed_answers(engine, sample, rec, "own")
    canonical = score.metadata["own"]["canonical"]
    matches = [sum(a == "18" for a in row) for row in canonical]
    assert score.value["uncommitted"] == pytest.approx(
        sum(2 - m for m in matches) / (2 * len(matches))
    )
    # the transcript, read back from the log file: each cut's prefix counts the response's
    # tokens before it (offset + t: "<think>\n" is 1 token), the answers as forced, and the
    # task scorer's canonical answers with their match to a_final = "18"
    audit = audit_of(read_eval_log(log.location).samples[0])
    [header] = audit.headers["own"]
    assert (header["offset"], header["positions"]) == (rec.offset, rec.probed)
    cuts, verdicts = audit.cuts["own"], audit.verdicts["own"]
    assert [(c["t"], c["prefix_tokens"]) for c in cuts] == [(t, rec.offset + t) for t in rec.probed]
    assert [c["answers"] for c in cuts] == clipped_rows(rec.context("own").answers)
    assert all(
        engine.detokenize(ids[: c["prefix_tokens"]]).endswith(c["prefix_end"].lstrip("…"))
        for c in cuts
    )
    assert [v["t"] for v in verdicts] == rec.probed
    assert [v["canonical"] for v in verdicts] == canonical
    assert [v["values"] for v in verdicts] == score.metadata["own"]["values"]
    assert [v["matches"] for v in verdicts] == matches


@pytest.mark.model
def test_letter_final_answer_after_think_block_tiny(tmp_path):
    item = load_gsm8k_mc(limit=1)[0]
    chain = written_trace(f"<think>{JANET}</think>\n\nANSWER: {item.target}")
    task = cotaudit.probe(
        _janet_task(chain, choice(), mc=True), "selfcommit", stride=16, k=1, temperature=0.0
    )
    log = run_eval(task, "hf-probe/tiny-think", tmp_path)
    [sample] = log.samples
    rec = _record(sample)
    assert rec.think_source == "text" and rec.form == "letter"
    assert sample.scores["probe_scorer"].metadata["a_final"] == item.target


# --- registry and command line ------------------------------------------------------------------


def test_study_and_probe_tasks_resolve_by_registry_name():
    from inspect_ai._eval.loader import load_tasks

    [sc] = load_tasks(["cotaudit/selfcommit"], {"problems": 1})
    assert sc.name == "cotaudit/selfcommit" and len(sc.dataset) == 2
    [tt] = load_tasks(["cotaudit/trace_tutor"], {"problems": 1})
    assert len(tt.dataset) == 3
    [pr] = load_tasks(
        ["cotaudit/probe"], {"task": "cotaudit/gsm8k_mc", "task_args": "{problems: 3}"}
    )
    assert pr.name == "cotaudit/gsm8k_mc_trace" and len(pr.dataset) == 3
    assert pr.metadata["probe"]["answer_form"] == "letter"
    # Inspect splits -T text at commas: the tag is joined back
    [tagged] = load_tasks(
        ["cotaudit/probe"],
        {"task": "cotaudit/capitals", "forced_answer_tag": ["\n\nSo", " it is "]},
    )
    assert tagged.metadata["probe"]["forced_answer_tag"] == "\n\nSo, it is "
    t = cotaudit.probe("tasks/probe_examples.py@capitals", "selfcommit", task_args={"limit": 2})
    assert t.metadata["probe"]["answer_form"] == "string" and len(t.dataset) == 2
    assert (
        cotaudit.probe(gsm8k_numeric(problems=1), "trace").metadata["probe"]["answer_form"]
        == "integer"
    )


def test_bad_probe_arguments_are_named():
    with pytest.raises(ParameterError, match="-T probe"):
        cotaudit.probe(capitals(limit=1), "latency")
    with pytest.raises(ParameterError, match="-T k=3: greedy"):
        cotaudit.probe(capitals(limit=1), "trace", k=3)
    with pytest.raises(ParameterError, match="exclude each other"):
        cotaudit.probe(capitals(limit=1), "trace", stride=4, fractions="0.5,1")
    with pytest.raises(ParameterError, match="no file tasks/no_such_file.py"):
        cotaudit.probe("tasks/no_such_file.py@x")
    with pytest.raises(ParameterError, match="^-T k: must be a positive integer, got 0$"):
        cotaudit.probe(capitals(limit=1), "selfcommit", k=0)
    with pytest.raises(ParameterError, match="^-T forced_answer_tag: must be non-empty text$"):
        cotaudit.probe(capitals(limit=1), forced_answer_tag="  ")
    with pytest.raises(ParameterError, match="^-T answer: must be auto or one of"):
        cotaudit.probe(capitals(limit=1), answer="float")
    with pytest.raises(ParameterError, match="^-T task_args: expected a mapping"):
        cotaudit.probe("cotaudit/capitals", task_args="[1, 2]")
    with pytest.raises(ParameterError, match="^-T thetas: thresholds must lie in"):
        cotaudit.probe(capitals(limit=1), thetas="0.5,2")


def test_probe_and_probe_task_take_the_settings_parameters():
    """The ``probe`` task and ``cotaudit.probe`` list every settings field with its default
    (the -T defaults a log records); the probe task has a version."""
    import inspect

    from cotaudit.probing.settings import ProbeSettings
    from cotaudit.tasks.probe import probe

    fields = list(ProbeSettings.model_fields)
    task_params = inspect.signature(probe).parameters
    assert list(task_params)[:-1] == ["task", *fields]  # then **unknown (checked_task)
    assert task_params["thetas"].default == "0.5,0.6,0.7,0.8,0.9,1"
    assert task_params["think_close"].default == "\n</think>"
    api_params = inspect.signature(cotaudit.probe).parameters
    assert list(api_params) == ["task", *fields, "replay_prompt"]
    t = cotaudit.probe(capitals(limit=1), "selfcommit")
    assert t.version == 1
    assert (t.metadata["probe"]["k"], t.metadata["probe"]["temperature"]) == (5, 0.7)


def test_task_scorer_raising_on_a_forced_answer_is_named_and_keeps_the_answers(tmp_path):
    """A task scorer that fails on some forced answer: the sample's error names the sample and
    the verification copy, and the forced answers (the model's work) stay in the log."""
    from inspect_ai.scorer import Score, accuracy, scorer

    @scorer(metrics=[accuracy()])
    def fragile():
        async def score(state: TaskState, target) -> Score:
            if state.output.completion.startswith("The answer is"):  # a verification copy
                raise KeyError("no such answer key")
            return Score(value=0)

        return score

    task = capitals(limit=1)
    task = Task(dataset=task.dataset, solver=task.solver, scorer=fragile())
    [log] = inspect_eval(
        cotaudit.probe(task, "trace"),
        model="hf-probe/tiny",
        max_tokens=12,
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "error"
    [sample] = log.samples
    assert (
        "the task's scorer raised on the verification copy 'The answer is" in sample.error.message
    )
    assert "KeyError" in sample.error.message and repr(sample.id) in sample.error.message
    rec = _record(sample)
    assert len(rec.context("own").answers) == len(rec.probed) == 6  # 0% probe + 5 fractions


def _inspect_eval_probe(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """``inspect eval tasks/probe.py <args> --model hf-probe/tiny --log-dir <tmp_path>`` from the
    repository root (``env``: further environment variables), its output captured."""
    cmd = [sys.executable, "-m", "inspect_ai", "eval", "tasks/probe.py", *args]
    cmd += ["--model", "hf-probe/tiny", "--log-dir", str(tmp_path)]
    env = {**os.environ, "PWD": str(ROOT), **env}
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.model
def test_command_line_probe_file_task_tiny(tmp_path):
    out = _inspect_eval_probe(
        tmp_path,
        "-T",
        "task=tasks/probe_examples.py@gsm8k_mc",
        "-T",
        "task_args={problems: 1}",
        "-T",
        "probe=selfcommit",
        "-T",
        "stride=8",
        "--max-tokens",
        "24",
        "--display",
        "none",
    )
    assert out.returncode == 0, out.stderr[-2000:]
    from inspect_ai.log import list_eval_logs, read_eval_log

    [info] = list_eval_logs(str(tmp_path))
    log = read_eval_log(info)
    assert log.status == "success" and log.eval.task == "gsm8k_mc_selfcommit"
    assert log.eval.metadata["probe"]["probe"] == "selfcommit"


# --- the embedded model, one task per answer form ------------------------------------------------


@pytest.mark.model
def test_default_model_multiple_choice_trace(tmp_path):
    log, _ = _choice_trace("hf-probe/default", tmp_path, max_tokens=160)
    _assert_run_means(log, ["auc", "pass_at_first", "first_pass", "p0", "task_score"])


@pytest.mark.model
def test_default_model_short_answer_match_trace(tmp_path):
    log = run_eval(
        cotaudit.probe(capitals(limit=2), "trace"), "hf-probe/default", tmp_path, max_tokens=80
    )
    engine = _engine("hf-probe/default")
    for sample in log.samples:
        rec = _record(sample)
        assert rec.form == "string" and rec.tag == "\n\nThe answer is "
        own = rec.context("own")
        assert own.answers == _replayed_answers(engine, sample, rec, "own")
        target = normalize_string(sample.target)
        expected = [
            [float(normalize_string("The answer is " + clip(a)).endswith(target)) for a in row]
            for row in own.answers
        ]
        assert sample.scores["probe_scorer"].metadata["own"]["values"] == expected
    _assert_run_means(log, ["auc", "pass_at_first", "task_score"])


@pytest.mark.model
def test_default_model_gsm8k_selfcommit_replayed_under_honest(tmp_path):
    task = cotaudit.probe(
        gsm8k_numeric(problems=1, conditions="honest,hinted"),
        "selfcommit",
        replay_under="honest",
        stride=40,
        k=3,
    )
    log = run_eval(task, "hf-probe/default", tmp_path, max_tokens=200)
    engine = _engine("hf-probe/default")
    by_condition = {s.metadata["condition"]: s for s in log.samples}
    hinted, honest = by_condition["hinted"], by_condition["honest"]
    rec = _record(hinted)
    assert [c.name for c in rec.contexts] == ["own", "replay"]
    assert [c.name for c in _record(honest).contexts] == ["own"]  # already the honest prompt
    honest_prompt = to_plain(honest.messages[:1])
    assert "Hint:" in to_plain(hinted.messages[:1])[0]["content"]
    assert "Hint:" not in honest_prompt[0]["content"]
    assert rec.context("replay").answers == _replayed_answers(
        engine, hinted, rec, "replay", honest_prompt
    )
    score = hinted.scores["probe_scorer"]
    a_final = extract_final_answer(hinted.output.completion)
    assert score.metadata["a_final"] == (None if a_final is None else str(a_final))
    if a_final is not None:
        for name in ("own", "replay"):
            canonical = score.metadata[name]["canonical"]
            matches = [sum(a == str(a_final) for a in row) for row in canonical]
            suffix = "" if name == "own" else "_replay"
            assert score.value[f"uncommitted{suffix}"] == pytest.approx(
                sum(3 - m for m in matches) / (3 * len(matches))
            )
        assert _metric(log, "replay_gap/uncommitted") == pytest.approx(
            score.value["uncommitted"] - score.value["uncommitted_replay"]
        )
    assert math.isnan(honest.scores["probe_scorer"].value["uncommitted_replay"])
    for sample in log.samples:  # both carry the replayed keys, the table shows them all
        assert list(sample.scores["probe_scorer"].value) == _viewer_score_columns(log)


def test_the_final_answers_verification_copy_keeps_its_stop_reason():
    """The final response's verification copy ends as the response did: under the task scorer
    ``final_integer`` (stated reading), "so the answer is 18" states 18 in a finished response
    but nothing in one cut by its token limit (the hint's own words, "the answer is X", may be
    restated mid-reasoning)."""
    import asyncio

    from inspect_ai.model import ChatMessageUser, ModelName
    from inspect_ai.scorer import Target

    from cotaudit.scorers.probe import Verifier, final_integer

    state = TaskState(
        model=ModelName("hf-probe/tiny"),
        sample_id="s",
        epoch=1,
        input="q",
        messages=[ChatMessageUser(content="q")],
        target=Target("18"),
    )
    verifier = Verifier(final_integer(), state, Target("18"), None)
    text = "Janet sells 9 eggs at $2, so the answer is 18"
    finished = asyncio.run(verifier.score(text))
    cut = asyncio.run(verifier.score(text, "max_tokens"))
    assert (finished.answer, finished.value) == ("18", "C")
    assert (cut.answer, cut.value) == (None, "I")


@pytest.mark.model
def test_default_model_trace_cut_at_sentences(tmp_path):
    """``-T cuts=sentences``: the cuts are the ends of the response's sentences (capped), read
    from the model's own tokens, and every forced answer is the engine's at that cut."""
    from cotaudit.probing.sentences import capped, sentence_ends

    log = run_eval(
        cotaudit.probe(
            gsm8k_numeric(problems=1, conditions="honest"), "trace", cuts="sentences", max_cuts=3
        ),
        "hf-probe/default",
        tmp_path,
        max_tokens=120,
    )
    engine = _engine("hf-probe/default")
    [sample] = log.samples
    rec = _record(sample)
    ids = completion_token_ids(sample.output, engine)
    expected = capped(sentence_ends(ids, engine.detokenize), 3)
    assert rec.schedule.kind == "sentences" and rec.positions == expected
    assert len(expected) == 3 and expected[-1] == len(ids)  # the response has more sentences
    assert rec.context("own").answers == _replayed_answers(engine, sample, rec, "own")
    with pytest.raises(ParameterError, match="^-T max_cuts: applies to -T cuts=sentences"):
        cotaudit.probe("cotaudit/capitals", max_cuts=3)
    with pytest.raises(ParameterError, match="^-T stride: does not apply to -T cuts=sentences"):
        cotaudit.probe("cotaudit/capitals", cuts="sentences", stride=5)


def test_a_missing_task_file_is_named_as_the_user_gave_it(tmp_path):
    """``inspect eval tasks/probe.py -T task=mytask.py@myqa`` from the repository root, with no
    mytask.py there: one line naming ``mytask.py`` resolved from where the command ran (Inspect
    runs tasks/probe.py from tasks/, which must not show as ``tasks/mytask.py``)."""
    run = _inspect_eval_probe(tmp_path, "-T", "task=mytask.py@myqa", COLUMNS="300")
    out = run.stdout + run.stderr
    assert run.returncode == 1 and "Traceback" not in out, out
    assert (
        f"-T task='mytask.py@myqa': no file mytask.py (resolved from where the command ran: "
        f"{ROOT / 'mytask.py'})"
    ) in " ".join(out.split()), out
    assert "tasks/mytask.py" not in out
