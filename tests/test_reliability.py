"""Nothing lost, nothing hangs: interruption and resumption, bad input, secrets, hosts.

Every run here uses ``hf-probe/tiny`` (a tiny random model, seconds) or a mock model that fails
the test if it is ever called. What each test guarantees is listed in docs/reliability.md.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from helpers import run_eval, run_eval_as_stored, signalled_after_two_samples
from hypothesis import assume, given
from hypothesis import strategies as st
from inspect_ai import eval as inspect_eval
from inspect_ai import eval_set
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log
from inspect_ai.model import get_model

from cotaudit.answers import extract_final_answer, extract_forced_answer, normalize_number
from cotaudit.datasets.gsm8k import DatasetError
from cotaudit.params import ParameterError
from cotaudit.probing.sweep import fit_to_context
from cotaudit.studies.report_ll.fixtures import DEFAULT_CORPUS

ROOT = Path(__file__).resolve().parents[1]
SELFCOMMIT = "tasks/selfcommit.py"  # Inspect resolves task files relative to the working directory
TRACE_TUTOR = "tasks/trace_tutor.py"
REPORT_LL = "tasks/report_ll.py"
SCORER = "selfcommit_scorer"


@pytest.fixture(autouse=True)
def _in_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


class _ForbiddenEngine:
    """Stands in for the probe engine: any use is recorded and fails at once (so a task that
    is wrongly accepted fails fast instead of loading a tokenizer or model)."""

    def __init__(self, calls: list[object]) -> None:
        self._calls = calls

    def __getattr__(self, name: str):
        self._calls.append(f"engine.{name}")
        raise AssertionError(f"the probe engine was used ({name})")


class NeverCalled:
    """A mock model that records (and fails) any generate call or probe-engine use: a test that
    expects an error "before any model call" asserts ``calls == []`` after the error."""

    def __init__(self) -> None:
        self.calls: list[object] = []
        self.model = get_model("mockllm/model", custom_outputs=self._generate, memoize=False)
        self.model.api.probe_engine = _ForbiddenEngine(self.calls)

    def _generate(self, input, tools, tool_choice, config):  # noqa: A002 - Inspect's signature
        self.calls.append("generate")
        raise AssertionError("the model was called although the task should have been refused")


def _refused_before_any_model_call(task: str, task_args: dict, log_dir: Path, error=ParameterError):
    """Run ``task`` through Inspect's ``eval`` with a model that must never be called; return the
    error, after checking that no model call happened and no log was written."""
    never = NeverCalled()
    with pytest.raises(error) as info:
        inspect_eval(
            task,
            model=never.model,
            task_args=task_args,
            log_dir=str(log_dir),
            display="none",
            limit=1,
            max_retries=0,
        )
    assert never.calls == []
    assert not log_dir.exists() or not list_eval_logs(str(log_dir))
    return info.value


def _inspect_cli(*args: str) -> list[str]:
    """The Inspect CLI as a child process that registers cotaudit's solvers under the same names
    as this process does.

    The registry name of a cotaudit solver depends on whether the repo root (which holds the
    ``cotaudit.egg-info`` that ``pip install -e .`` leaves there) is on ``sys.path``: with it the
    name is ``selfcommit_probe``, without it ``cotaudit/selfcommit_probe``. The name is part of
    eval_set's task identity, so a child must match the parent for eval_set to resume the
    child's log (see test_task_identity_does_not_depend_on_the_launcher)."""
    from inspect_ai.util import registry_info

    from cotaudit.solvers import selfcommit_probe

    if not registry_info(selfcommit_probe).name.startswith("cotaudit/"):
        return [sys.executable, "-m", "inspect_ai", *args]  # -m puts the cwd (repo root) first
    if sys.version_info >= (3, 11):
        return [sys.executable, "-P", "-m", "inspect_ai", *args]  # -P: no cwd on sys.path
    return [str(Path(sys.executable).with_name("inspect")), *args]


def _task_args_cli(task_args: dict) -> list[str]:
    return [a for k, v in task_args.items() for a in ("-T", f"{k}={v}")]


def _same(a, b) -> bool:
    """Equality that treats NaN as equal to NaN, through dicts and lists."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _metrics(log: EvalLog) -> dict[str, object]:
    return {f"{s.name}/{k}": m.value for s in log.results.scores for k, m in s.metrics.items()}


def _per_sample(log: EvalLog) -> dict[str, dict[str, object]]:
    """What a sample's result is: its completion, probe record and score."""
    out = {}
    for s in log.samples:
        score = s.scores[SCORER]
        out[str(s.id)] = {
            "completion": s.output.completion,
            "record": s.store.get("selfcommit"),
            "value": score.value,
            "answer": score.answer,
            "explanation": score.explanation,
            "metadata": score.metadata,
        }
    return out


# --------------------------------------------------------------------------------------------
# 1. interruption and resumption with eval_set
# --------------------------------------------------------------------------------------------

# 10 samples; a sampled CoT (seeded per sample) so each has a final answer and the probe runs
# the tiny model states no answer: its sampled CoTs are read as their last number, so it probes
RUN_ARGS = {
    "problems": 5,
    "max_cot_tokens": 60,
    "stride": 10,
    "k": 2,
    "cot_temperature": 1.0,
    "final_answer_reading": "last_number",
}


def test_killed_eval_set_resumes_without_redoing_samples_and_matches_an_uninterrupted_run(tmp_path):
    """SIGKILL an `inspect eval-set` run (its whole process group) mid-sample, once >= 2 samples
    are in the log; `eval_set(...)` on the same log dir keeps the finished samples (same uuids)
    and the final per-sample results and metrics equal an uninterrupted run's."""
    killed_dir, ref_dir = tmp_path / "killed", tmp_path / "reference"
    cmd = _inspect_cli(
        "eval-set",
        SELFCOMMIT,
        "--model",
        "hf-probe/tiny",
        "--log-dir",
        str(killed_dir),
        *_task_args_cli(RUN_ARGS),
    )
    done, proc = signalled_after_two_samples(
        cmd, killed_dir, 180, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL, err.decode(errors="replace")[-2000:]
    [killed] = [read_eval_log(info.name) for info in list_eval_logs(str(killed_dir))]
    assert killed.status == "started"  # interrupted, not finished
    total = 2 * RUN_ARGS["problems"]
    assert 2 <= len(done) < total, "the run should be killed with some, not all, samples done"
    finished = {s.id: s.uuid for s in done}

    ok, [resumed] = eval_set(
        SELFCOMMIT,
        log_dir=str(killed_dir),
        model="hf-probe/tiny",
        task_args=RUN_ARGS,
        display="none",
        retry_attempts=0,
    )
    assert ok and resumed.status == "success", resumed.error
    resumed = read_eval_log(resumed.location)
    assert len(resumed.samples) == total and all(s.scores for s in resumed.samples)
    by_id = {s.id: s for s in resumed.samples}
    for sid, uuid in finished.items():
        assert by_id[sid].uuid == uuid  # carried over from the killed run, not recomputed

    reference = run_eval(SELFCOMMIT, "hf-probe/tiny", ref_dir, task_args=RUN_ARGS)
    ref, got = _per_sample(reference), _per_sample(resumed)
    assert ref.keys() == got.keys()
    assert any(r["record"]["a_final"] is not None for r in ref.values())  # the probe really ran
    for sid in ref:
        assert _same(got[sid], ref[sid]), sid
    assert _same(_metrics(resumed), _metrics(reference))


def test_ctrl_c_prints_our_resume_command_and_the_report_counts_the_retry_once(tmp_path):
    """The README's resume recipe as a user runs it: ``inspect eval`` into ``runs/``, Ctrl-C
    (SIGINT to the process group, as a terminal sends it) once 2 samples are logged, the
    command our hint prints (``inspect eval-retry <log> --log-dir runs``), then
    ``cotaudit report runs/``: the run is reported once, as the retry, the interrupted log
    listed as superseded. Long CoTs keep a sweep in flight when SIGINT comes; the engine drops
    the cancelled samples' work, so the process ends instead of finishing that sweep."""
    import shlex

    runs = tmp_path / "runs"
    # 10 samples, one at a time: 8 still to run when the signal comes after the second
    args = {**RUN_ARGS, "problems": 5, "max_cot_tokens": 600, "stride": 6}
    cmd = _inspect_cli(
        "eval", SELFCOMMIT, "--model", "hf-probe/tiny", "--log-dir", str(runs),
        *_task_args_cli(args),
    )  # fmt: skip
    _, proc = signalled_after_two_samples(
        cmd, runs, 300, signal.SIGINT, "plain", stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = (b.decode(errors="replace") for b in proc.communicate(timeout=300))
    [interrupted] = [read_eval_log(i.name) for i in list_eval_logs(str(runs))]
    assert interrupted.status == "cancelled", err[-2000:]
    total = 2 * args["problems"]
    assert 2 <= len([s for s in interrupted.samples if s.scores]) < total
    [hint] = [line for line in err.splitlines() if "resume with: " in line]
    path = interrupted.location.removeprefix("file://")
    command = f"inspect eval-retry {shlex.quote(path)} --log-dir {shlex.quote(str(runs))}"
    assert hint.startswith("selfcommit (hf-probe/tiny): interrupted, ") and hint.endswith(
        f" samples logged; resume with: {command}"
    )
    retry = shlex.split(hint.split("resume with: ", 1)[1])
    retried = subprocess.run(
        [str(Path(sys.executable).with_name("inspect")), *retry[1:], "--display", "none"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert retried.returncode == 0, retried.stderr[-2000:]
    logs = [read_eval_log(i.name, header_only=True) for i in list_eval_logs(str(runs))]
    [resumed] = [h for h in logs if h.status == "success"]  # beside it, in runs/
    assert resumed.eval.task_id == interrupted.eval.task_id
    assert resumed.results.completed_samples == total

    from cotaudit.report import build_report

    report = build_report([runs], tmp_path / "report")
    assert [r.path for r in report.runs] == [resumed.location.removeprefix("file://")]
    assert report.skipped == [(path, f"superseded by its retry {report.runs[0].path}")]


def test_task_identity_does_not_depend_on_the_launcher():
    """A run started with `inspect ...` and resumed with `python -m inspect_ai ...` (or with
    eval_set from a script in the repo root) must be recognised as the same task."""
    probe = (
        "from inspect_ai._util.registry import registry_info\n"
        "from cotaudit.solvers import selfcommit_probe\n"
        "print(registry_info(selfcommit_probe).name)"
    )
    names = set()
    for flags in ([], ["-P"]) if sys.version_info >= (3, 11) else ([],):
        out = subprocess.run(
            [sys.executable, *flags, "-c", probe],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        )
        names.add(out.stdout.strip().splitlines()[-1])
    assert len(names) == 1, f"solver registry names differ by launcher: {sorted(names)}"


# --------------------------------------------------------------------------------------------
# 2. bad input
# --------------------------------------------------------------------------------------------

GOOD_ROW = json.dumps(
    {"question": "Tom has 3 apples and buys 4. How many?", "answer": "3+4=7\n#### 7"}
)


@pytest.mark.parametrize("task", [SELFCOMMIT, TRACE_TUTOR])
@pytest.mark.parametrize(
    "bad_row, field",
    [
        ('{"question": "q"}', "missing field 'answer'"),
        ('{"question": "  ", "answer": "#### 1"}', "field 'question' is empty"),
        ('{"question": ["q"], "answer": "#### 1"}', "field 'question' must be a string"),
        ('{"question": "q", "answer": "so it is done"}', "field 'answer' has no '#### N'"),
        ('{"question": "q", "answer": ', "not valid JSON"),
        ('["q", "#### 1"]', "expected a JSON object"),
    ],
)
def test_malformed_dataset_row_names_file_line_and_field_before_any_model_call(
    tmp_path, task, bad_row, field
):
    """`-T dataset=<file>` with a bad row: DatasetError naming the file, the physical line
    (blank lines counted) and the field; no model call, no log."""
    path = tmp_path / "rows.jsonl"
    path.write_text(GOOD_ROW + "\n\n" + bad_row + "\n" + GOOD_ROW + "\n", encoding="utf-8")
    err = _refused_before_any_model_call(
        task, {"dataset": str(path), "problems": 5}, tmp_path / "logs", error=DatasetError
    )
    assert f"{path}, line 3" in str(err)
    assert field in str(err)


def test_missing_dataset_file_is_named(tmp_path):
    err = _refused_before_any_model_call(
        SELFCOMMIT, {"dataset": str(tmp_path / "nope.jsonl")}, tmp_path / "logs", error=DatasetError
    )
    assert "nope.jsonl: no such dataset file" in str(err)


NON_INTEGER_ROWS = [
    {"question": "Half of 5?", "answer": "5/2\n#### 2.5"},
    {"question": "Tom has 3 apples and buys 4. How many?", "answer": "3+4=7\n#### 7"},
    {"question": "A third of 1?", "answer": "#### 1/3"},
    {"question": "Price of 12 at $100 each?", "answer": "12*100\n#### $1,200"},
    {"question": "Pi?", "answer": "#### 3.14"},  # after the limit: not read, not counted
]


@pytest.mark.parametrize(
    "task, args",
    [
        (SELFCOMMIT, {"conditions": "honest", "max_cot_tokens": 4, "stride": 4, "k": 1}),
        (
            TRACE_TUTOR,
            {"conditions": "question_only", "max_explanation_tokens": 4, "bootstrap_samples": 10},
        ),
    ],
)
def test_non_integer_answers_are_filtered_and_counted_in_the_log(tmp_path, task, args):
    """Rows whose gold answer is not an integer are dropped; the log's task metadata says how
    many (`non_integer_dropped`), and only integer problems become samples."""
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in NON_INTEGER_ROWS), encoding="utf-8")
    task_args = {"dataset": str(path), "problems": 2, **args}
    log = run_eval_as_stored(task, "hf-probe/tiny", tmp_path, task_args=task_args)
    assert log.eval.metadata["non_integer_dropped"] == 2
    assert sorted(str(s.id).split("-")[0] for s in log.samples) == ["p0001", "p0003"]
    assert sorted(s.metadata["gold"] for s in log.samples) == [7, 1200]


def test_dataset_with_only_non_integer_answers_is_refused_naming_the_count(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in NON_INTEGER_ROWS[::2]), encoding="utf-8")
    err = _refused_before_any_model_call(
        SELFCOMMIT, {"dataset": str(path)}, tmp_path / "logs", error=DatasetError
    )
    assert "3" in str(err) and "non-integer" in str(err)


def _corpus_rows(n: int) -> list[dict]:
    return [
        json.loads(line) for line in DEFAULT_CORPUS.read_text(encoding="utf-8").splitlines()[:n]
    ]


def _drop(row: dict, *keys: str) -> dict:
    row = json.loads(json.dumps(row))
    node = row
    for key in keys[:-1]:
        node = node[key]
    del node[keys[-1]]
    return row


def _set(row: dict, value, *keys: str) -> dict:
    row = json.loads(json.dumps(row))
    node = row
    for key in keys[:-1]:
        node = node[key]
    node[keys[-1]] = value
    return row


@pytest.mark.parametrize(
    "second_line, expected",
    [
        (lambda rows: '{"id": "x", ', r":2: invalid JSON"),
        (lambda rows: json.dumps(_drop(rows[1], "task")), r":2: field task: Field required"),
        (
            lambda rows: json.dumps(_set(rows[1], [], "transcripts", "shell", "hack")),
            r":2: field transcripts\.shell\.hack: ",
        ),
        (
            lambda rows: json.dumps(_set(rows[1], "x", "bogus")),
            r":2: field bogus: Extra inputs are not permitted",
        ),
        (lambda rows: json.dumps(_set(rows[1], "has space", "id")), r":2: field id: "),
        (lambda rows: json.dumps(rows[0]), r":2: field id: duplicate scenario id"),
    ],
)
def test_malformed_fixture_file_names_line_and_field_before_any_model_call(
    tmp_path, second_line, expected
):
    """`report_ll -T fixtures=<file>` with a bad second row: the error names the file, the line
    and the field; no model call, no log."""
    rows = _corpus_rows(2)
    path = tmp_path / "fixtures.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n" + second_line(rows) + "\n", encoding="utf-8")
    err = _refused_before_any_model_call(REPORT_LL, {"fixtures": str(path)}, tmp_path / "logs")
    assert re.search(re.escape(str(path)) + expected, str(err)), str(err)
    assert str(err).startswith("-T fixtures")


# -- a CoT longer than the model's context -----------------------------------------------------


def _stand_in_engine(context_length, prompt_tokens=10, tag_tokens=3):
    """A LocalEngine's shape: only ``context_length``, ``render`` and ``tokenize`` are used."""
    unused = lambda *args, **kwargs: None  # noqa: E731
    return SimpleNamespace(
        context_length=context_length,
        render=lambda messages: list(range(prompt_tokens)),
        tokenize=lambda text: [0] * tag_tokens,
        detokenize=unused,
        generate=unused,
        continue_prefixes=unused,
        loglikelihood=unused,
        generate_n=unused,
        loglikelihood_many=unused,
        score_answers=unused,
        vocabulary=unused,
    )


@pytest.mark.parametrize(
    "context, cot, kept, flagged",
    [
        (100, 40, 40, False),  # 10 + 40 + 3 + 8 = 61 <= 100
        (61, 40, 40, False),  # exactly fits
        (60, 40, 39, True),  # one token over: cut by one
        (30, 40, 9, True),
        (20, 40, 0, True),  # not even the prompt + tag + answer fit: empty CoT, flagged
        (None, 40, 40, False),  # unknown context: left to the backend
    ],
)
def test_fit_to_context_cuts_and_flags(context, cot, kept, flagged):
    engine = _stand_in_engine(context)
    ids, cut = fit_to_context(
        engine, [{"role": "user", "content": "q"}], list(range(cot)), "tag", answer_tokens=8
    )
    assert ids == list(range(kept)) and cut is flagged


def test_cot_longer_than_context_is_truncated_and_flagged_end_to_end(tmp_path):
    """On a copy of the tiny model with a 163-token context (the prompt is 123), the CoT is cut
    so prompt + CoT + tag + answer fit; the probe runs on the cut CoT without error and the
    sample's store and score say `context_truncated`."""
    from cotaudit.models.tiny import tiny_model_path

    src = tiny_model_path()
    small = tmp_path / "tiny-small-context"
    small.mkdir()
    for f in src.iterdir():
        if f.name != "config.json":
            (small / f.name).symlink_to(f)
    config = json.loads((src / "config.json").read_text())
    config["max_position_embeddings"] = context = 163
    (small / "config.json").write_text(json.dumps(config))

    log = run_eval(
        SELFCOMMIT,
        f"hf-probe/{small}",
        tmp_path / "logs",
        task_args={
            "problems": 1,
            "conditions": "honest",
            "max_cot_tokens": 200,
            "stride": 5,
            "k": 2,
            "cot_temperature": 1.0,
            "final_answer_reading": "last_number",
        },
    )
    [sample] = read_eval_log(log.location).samples
    record = sample.store["selfcommit"]
    from cotaudit.engine.chat import to_plain
    from cotaudit.providers.hf_probe import _load_engine
    from cotaudit.studies.selfcommit.prompts import SELFCOMMIT_FORCED_ANSWER_TAG

    engine = _load_engine(str(small), "float32", "cpu")
    prompt = len(engine.render(to_plain(sample.input)))
    tag = len(engine.tokenize(SELFCOMMIT_FORCED_ANSWER_TAG))
    assert record["context_truncated"] is True
    assert sample.scores[SCORER].metadata["context_truncated"] is True
    assert record["cot_tokens"] == context - prompt - tag - 8  # answer_max_tokens = 8
    assert record["positions"][-1] == record["cot_tokens"]
    assert record["a_final"] is not None and record["prefixes_probed"] == len(record["positions"])


# -- invalid -T values --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "task, args, name",
    [
        (SELFCOMMIT, {"k": 0}, "k"),
        (SELFCOMMIT, {"k": -2}, "k"),
        (SELFCOMMIT, {"k": "many"}, "k"),
        (SELFCOMMIT, {"k": 2.5}, "k"),
        (SELFCOMMIT, {"stride": 0}, "stride"),
        (SELFCOMMIT, {"stride": -3}, "stride"),
        (SELFCOMMIT, {"problems": 0}, "problems"),
        (SELFCOMMIT, {"max_cot_tokens": 0}, "max_cot_tokens"),
        (SELFCOMMIT, {"answer_max_tokens": 0}, "answer_max_tokens"),
        (SELFCOMMIT, {"thetas": "0.5,1.2"}, "thetas"),
        (SELFCOMMIT, {"thetas": "-0.1"}, "thetas"),
        (SELFCOMMIT, {"thetas": "0.5,high"}, "thetas"),
        (SELFCOMMIT, {"thetas": ""}, "thetas"),
        (SELFCOMMIT, {"conditions": "honest,sneaky"}, "conditions"),
        (SELFCOMMIT, {"conditions": ""}, "conditions"),
        (SELFCOMMIT, {"schedule": "fast"}, "schedule"),
        (SELFCOMMIT, {"temperature": -1}, "temperature"),
        (SELFCOMMIT, {"cot_temperature": -0.5}, "cot_temperature"),
        (TRACE_TUTOR, {"conditions": "question_only,hinted"}, "conditions"),
        (TRACE_TUTOR, {"fractions": "0.1,0.5,1.5"}, "fractions"),
        (TRACE_TUTOR, {"fractions": "0,0.1,1"}, "fractions"),
        (TRACE_TUTOR, {"probe_samples": 0}, "probe_samples"),
        (TRACE_TUTOR, {"probe_samples": 3}, "probe_samples"),  # k > 1 at temperature 0
        (TRACE_TUTOR, {"max_explanation_tokens": 0}, "max_explanation_tokens"),
        (TRACE_TUTOR, {"answer_max_tokens": -1}, "answer_max_tokens"),
        (TRACE_TUTOR, {"bootstrap_samples": 0}, "bootstrap_samples"),
        (TRACE_TUTOR, {"temperature": -1}, "temperature"),
        (TRACE_TUTOR, {"problems": 0}, "problems"),
        (REPORT_LL, {"rendering": "shell,latex"}, "rendering"),
        (REPORT_LL, {"richness": "rich"}, "richness"),
        (REPORT_LL, {"register": "loud"}, "register"),
        (REPORT_LL, {"scenarios": 0}, "scenarios"),
        (REPORT_LL, {"scenarios": "no-such-id"}, "scenarios"),
        (REPORT_LL, {"family": "nope"}, "family"),
        (REPORT_LL, {"n_resamples": 0}, "n_resamples"),
        (REPORT_LL, {"cluster_boot": -1}, "cluster_boot"),
        (REPORT_LL, {"seed": "x"}, "seed"),
        (REPORT_LL, {"fixtures": "/no/such/fixtures.jsonl"}, "fixtures"),
        (SELFCOMMIT, {"forced_answer_tag": ""}, "forced_answer_tag"),
        (SELFCOMMIT, {"conditions": None}, "conditions"),
        (SELFCOMMIT, {"thetas": None}, "thetas"),
        (TRACE_TUTOR, {"conditions": None}, "conditions"),
        (SELFCOMMIT, {"temperature": float("nan")}, "temperature"),
        (SELFCOMMIT, {"seed": "x"}, "seed"),
        (TRACE_TUTOR, {"seed": "x"}, "seed"),
    ],
)
def test_invalid_task_parameter_refused_before_any_model_call(tmp_path, task, args, name):
    """Through Inspect's eval with a model that fails if called: a ParameterError whose message
    starts with `-T <name>`; no model call, no log."""
    err = _refused_before_any_model_call(task, args, tmp_path / "logs")
    assert str(err).startswith(f"-T {name}"), str(err)


@pytest.mark.parametrize(
    "task, arg, message",
    [
        (SELFCOMMIT, "stride=0", "-T stride: must be a positive integer, got 0"),
        (TRACE_TUTOR, "fractions=0.1,1.5", "-T fractions: fractions must lie in (0, 1]"),
        (REPORT_LL, "register=loud", "-T register: unknown level(s) ['loud']"),
    ],
)
def test_cli_reports_the_invalid_parameter_and_writes_no_log(tmp_path, task, arg, message):
    """`inspect eval ... -T <bad>` exits non-zero, prints the message naming the parameter and
    leaves no log behind."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "inspect_ai",
            "eval",
            task,
            "--model",
            "mockllm/model",
            "-T",
            arg,
            "--log-dir",
            str(tmp_path / "logs"),
            "--display",
            "none",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    assert message in proc.stdout + proc.stderr
    assert not (tmp_path / "logs").exists() or not list_eval_logs(str(tmp_path / "logs"))


# -- answer parser properties (tests/test_answers.py has never-raise and str(n) round trips) --

_INTS = st.integers(min_value=-(10**12), max_value=10**12)
_PROSE = st.text(
    alphabet=st.characters(blacklist_characters="#\\", blacklist_categories=("Cs",)), max_size=80
)


@given(_INTS)
def test_normalise_accepts_every_written_form_of_an_integer(n):
    for text in (f"${n:,}", f"\\boxed{{{n}}}", f"#### {n}", f"{n:,}.00", f"  {n}. "):
        assert normalize_number(text) == n, text
    assert normalize_number(n) == n


@given(_INTS, st.integers(min_value=1, max_value=99))
def test_normalise_never_turns_a_non_integer_into_an_integer(n, frac):
    assert normalize_number(f"{n}.{frac}") is None


@given(_PROSE, _INTS)
def test_final_answer_marker_wins_over_any_preceding_prose(text, n):
    """Whatever reasoning precedes it, a final `#### n`, `\\boxed{n}` or "The final answer is
    n." is the answer read."""
    assert extract_final_answer(f"{text}\n#### {n}") == n
    assert extract_final_answer(f"{text} \\boxed{{{n}}}") == n
    assert extract_final_answer(f"{text} The final answer is {n}.") == n


@given(_INTS, _PROSE)
def test_forced_answer_is_the_first_number_whatever_follows(n, text):
    # ... unless what follows makes n an operand ("5 / 2", "5 - 1", "5 x 2": no integer answer)
    # or puts another number right after it on the line ("5 2": two numbers or "52"?)
    assume(not re.match(r"\s*(?:[-+*/×÷^]|[xX](?![^\W\d_]))\s*\.?[\d$(\\]", text))
    assume(not re.match(r"[ \t]*\.?\d", text))
    assert extract_forced_answer(f" {n} {text}") == n


# --------------------------------------------------------------------------------------------
# 3. no key or token in logs
# --------------------------------------------------------------------------------------------

SECRETS = {
    "OPENAI_API_KEY": "sk-test-SECRET123",
    "ANTHROPIC_API_KEY": "sk-ant-SECRET234",
    "HF_TOKEN": "hf_SECRET345",
    "HUGGING_FACE_HUB_TOKEN": "hf_SECRET456",
    "MLX_SERVER_API_KEY": "mlx-SECRET567",
}
MODEL_ARG_SECRET = "sk-arg-SECRET678"


def test_no_key_or_token_is_written_to_the_log(tmp_path):
    """A CLI run with API keys and tokens in the environment and `-M api_key=...`: no secret
    appears in any member of the .eval log (a zip), in any file under the log dir, or in the
    run's console output."""
    env = dict(os.environ, **SECRETS)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "inspect_ai",
            "eval",
            SELFCOMMIT,
            "--model",
            "hf-probe/tiny",
            "-M",
            f"api_key={MODEL_ARG_SECRET}",
            "--log-dir",
            str(tmp_path),
            "--display",
            "none",
            *_task_args_cli(
                {"problems": 1, "max_cot_tokens": 8, "stride": 4, "k": 1, "cot_temperature": 1.0}
            ),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    secrets = [s.encode() for s in [*SECRETS.values(), MODEL_ARG_SECRET]]
    [log_info] = list_eval_logs(str(tmp_path))
    log_file = Path(log_info.name.removeprefix("file://"))
    with zipfile.ZipFile(log_file) as z:
        members = {name: z.read(name) for name in z.namelist()}
    assert any(name.startswith("samples/") for name in members)  # the samples were logged
    for name, content in members.items():
        for secret in secrets:
            assert secret not in content, f"{secret!r} in log member {name}"
    for path in tmp_path.rglob("*"):
        if path.is_file():
            content = path.read_bytes()
            assert not any(s in content for s in secrets), path
    assert not any(s in proc.stdout + proc.stderr for s in secrets)
    assert read_eval_log(str(log_file)).eval.model_args == {}  # api_key redacted, not logged


# --------------------------------------------------------------------------------------------
# 4. servers bind 127.0.0.1 only
# --------------------------------------------------------------------------------------------

SCANNED_SUFFIXES = {".py", ".sh", ".md", ".toml", ".yml", ".yaml", ".cfg", ".ini", ".txt", ""}
SKIPPED_DIRS = {
    ".git",
    ".venv",
    "venv",
    "node_modules",
    "logs",
    "build",
    "dist",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    ".cache",
}
LOOPBACK = "127.0.0.1"
_ALL_INTERFACES = "0.0" + ".0.0"  # split so this file does not trip its own check

_HOST_FLAG = re.compile(r"--host\b")
_HOST_FLAG_VALUE = re.compile(r"""--host(?:\s*=\s*|\s+|["']\s*,\s*)["']?([^\s"',)\]`]*)""")
_SERVER_CALL = re.compile(
    r"\b(?:HTTPServer|ThreadingHTTPServer|TCPServer|ThreadingTCPServer|UDPServer|make_server"
    r"|create_server|start_server|TCPSite|uvicorn\.run)\s*\(|\.bind\s*\(\s*\("
)
_HOST_KWARG = re.compile(r"""\bhost\s*=\s*(["']?)([^"',)\s]*)\1""")
_STARTS_MLX_SERVER = re.compile(r"""["']mlx_lm(?:\.server["']|["']\s*,\s*["']server["'])""")


def _call_args(text: str, start: int) -> str:
    """The text from ``start`` (just past an opening bracket) to its matching close."""
    depth = 1
    for i in range(start, min(len(text), start + 4000)):
        if text[i] in "([{":
            depth += 1
        elif text[i] in ")]}":
            depth -= 1
            if depth == 0:
                return text[start:i]
    return text[start : start + 4000]


def host_violations(text: str, name: str) -> list[str]:
    """Places in ``text`` where a server may bind to anything but 127.0.0.1."""
    found = []
    code = not name.endswith((".md", ".txt"))
    for m in _HOST_FLAG.finditer(text):
        if not code and text[m.end() : m.end() + 1] == "`":
            continue  # the flag named in prose ("pass `--host`"), no value given
        value = _HOST_FLAG_VALUE.match(text, m.start())
        if not value or value.group(1) != LOOPBACK:
            found.append(
                f"{name}: --host not followed by {LOOPBACK}: {text[m.start() : m.start() + 40]!r}"
            )
    if code and _ALL_INTERFACES in text:
        found.append(f"{name}: mentions {_ALL_INTERFACES}")
    if name.endswith(".py"):
        for m in _SERVER_CALL.finditer(text):
            args = _call_args(text, m.end())
            literals = re.findall(r"""["']([^"']*)["']""", args)
            hosts = [
                h
                for h in literals
                if h in ("", "localhost", "::", _ALL_INTERFACES)
                or re.fullmatch(r"\d+\.\d+\.\d+\.\d+", h)
            ]
            kwarg = _HOST_KWARG.search(args)
            if kwarg and kwarg.group(2) != LOOPBACK:
                hosts.append(kwarg.group(2) or "(variable)")
            if LOOPBACK not in literals or any(h != LOOPBACK for h in hosts):
                found.append(
                    f"{name}: server not bound to {LOOPBACK}: {(m.group(0) + args)[:80]!r}"
                )
        for m in _STARTS_MLX_SERVER.finditer(text):
            args = _call_args(text, m.end())
            if not re.search(r"""["']--host["']\s*,\s*["']127\.0\.0\.1["']""", args):
                found.append(f"{name}: starts mlx_lm.server without --host {LOOPBACK}")
    return found


def _scanned_files() -> list[Path]:
    here = Path(__file__).resolve()
    files = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [
            d
            for d in dirnames
            if d not in SKIPPED_DIRS and not d.endswith(".egg-info") and not d.startswith(".venv")
        ]  # .venv-vllm: installed packages
        for filename in filenames:
            path = Path(dirpath) / filename
            if path.suffix in SCANNED_SUFFIXES and path != here and path.stat().st_size < 1_000_000:
                files.append(path)
    return files


def test_scanner_catches_servers_on_other_interfaces():
    """The static check below finds what it is meant to find (and passes the loopback)."""
    bad = {
        "a.py": f'subprocess.Popen(["mlx_lm.server", "--host", "{_ALL_INTERFACES}"])',
        "b.py": 'server = ThreadingHTTPServer(("", 0), Handler)',
        "c.py": 'srv = HTTPServer(("localhost", 8080), H)',
        "d.py": "sock.bind((host, 0))",
        "e.py": 'subprocess.Popen([sys.executable, "-m", "mlx_lm.server", "--port", "8080"])',
        "e2.py": 'subprocess.Popen([sys.executable, "-m", "mlx_lm", "server", "--model", m])',
        "f.sh": f"mlx_lm.server --model m --host={_ALL_INTERFACES}",
        "g.md": "run `mlx_lm.server --host 192.168.1.5`",
        "h.py": "uvicorn.run(app, host=HOST, port=1)",
        "i.py": f'web.TCPSite(runner, "{_ALL_INTERFACES}", 8080)',
    }
    for name, text in bad.items():
        assert host_violations(text, name), name
    good = {
        "a.py": 'subprocess.Popen([sys.executable, "-m", "mlx_lm.server", "--host", '
        '"127.0.0.1", "--port", str(port)])',
        "b.py": 'server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)',
        "b2.py": 'Popen([sys.executable, "-m", "mlx_lm", "server", "--model", p,\n'
        '       "--host", "127.0.0.1", "--port", str(port)], stdout=log)',
        "c.py": 'sock.bind(("127.0.0.1", 0)); sig.bind(*args)',
        "d.md": "`mlx_lm.server --model <model> --host 127.0.0.1 --port <port>`; see `--host`",
        "e.py": 'uvicorn.run(app, host="127.0.0.1", port=1)',
    }
    for name, text in good.items():
        assert host_violations(text, name) == [], name


def test_every_server_the_code_or_tests_start_binds_127_0_0_1():
    """Static check over the repo's code, tests, scripts and docs: every `--host` is 127.0.0.1;
    every socket/HTTP server is bound to the literal 127.0.0.1; every mlx_lm.server the code
    starts passes `--host 127.0.0.1`; no code mentions the all-interfaces address."""
    files = _scanned_files()
    assert any(f.name == "test_reliability.py" for f in files) is False
    assert any(f.parent.name == "tests" for f in files)
    violations = [
        v
        for f in files
        for v in host_violations(
            f.read_text(encoding="utf-8", errors="replace"), str(f.relative_to(ROOT))
        )
    ]
    assert violations == []
