"""Bad input to a task: one short message without a traceback (Inspect's PrerequisiteError),
given before any model loads; a misspelt ``-T`` name stops the run and names the nearest
parameter."""

from __future__ import annotations

import logging
import pickle
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from inspect_ai._util.error import PrerequisiteError
from inspect_ai.log import list_eval_logs
from inspect_ai.model import get_model

from cotaudit.datasets.gsm8k import DatasetError
from cotaudit.params import ParameterError, nearest_name, unknown_parameters_message
from cotaudit.prerequisite import InputErrorReport
from cotaudit.tasks.probe_examples import capitals
from cotaudit.tasks.selfcommit import selfcommit

ROOT = Path(__file__).resolve().parents[1]
LOADING = "hf-probe/tiny: loading the model"  # the provider's log line on loading the weights


# -- the suggestion (pure) --


@pytest.mark.parametrize(
    "name, nearest",
    [
        ("strid", "stride"),  # ratio 2 * 5 matching / (5 + 6) characters = 0.91 >= 0.6
        ("problms", "problems"),  # 2 * 7 / (7 + 8) = 0.93
        ("tempreature", "temperature"),  # a transposition: 2 * 10 / 22 = 0.91
        ("temp", None),  # 2 * 4 / (4 + 11) = 0.53 < 0.6 for temperature; 2 * 2 / 9 < 0.6 for k=
        ("xyz", None),
    ],
)
def test_nearest_name(name, nearest):
    assert nearest_name(name, ["problems", "stride", "k", "temperature", "seed"]) == nearest


def test_the_message_names_the_task_its_parameters_and_the_nearest():
    known = ["problems", "stride", "k"]
    assert unknown_parameters_message("selfcommit", ["strid"], known) == (
        "-T strid: not a parameter of task selfcommit (did you mean -T stride?); its "
        "parameters: problems, stride, k"
    )
    assert unknown_parameters_message("selfcommit", ["xyz"], known) == (
        "-T xyz: not a parameter of task selfcommit; its parameters: problems, stride, k"
    )
    assert unknown_parameters_message("selfcommit", ["strid", "xyz", "problms"], known) == (
        "-T strid, -T xyz, -T problms: not parameters of task selfcommit (did you mean -T stride "
        "for -T strid, -T problems for -T problms?); its parameters: problems, stride, k"
    )


# -- the task wrapper, called from Python --


def test_an_unknown_keyword_is_a_parameter_error_that_inspect_prints_alone():
    with pytest.raises(ParameterError) as err:
        selfcommit(strid=30)
    assert isinstance(err.value, PrerequisiteError)
    assert str(err.value).startswith(
        "-T strid: not a parameter of task selfcommit (did you mean -T stride?); its parameters: "
        "problems, dataset, conditions, stride, k,"
    )


def test_keyword_callers_get_their_task():
    task = selfcommit(problems=1, stride=30, conditions="honest")
    assert [s.id for s in task.dataset] == ["p0000-honest"]


def test_a_sibling_tasks_parameter_is_dropped_with_a_warning(caplog):
    """``inspect eval tasks/probe_examples.py -T problems=2`` passes problems to each of the
    file's tasks; capitals takes none and runs, as Inspect runs it, with a warning."""
    with caplog.at_level(logging.WARNING):
        task = capitals(limit=2, problems=2)
    assert len(task.dataset) == 2
    assert "param 'problems' not used by task 'capitals'" in caplog.text
    with pytest.raises(ParameterError, match=r"^-T problms: not a parameter of task capitals; "):
        capitals(problms=2)


def test_a_dataset_error_keeps_its_type_and_is_printed_alone(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q"}\n')
    with pytest.raises(DatasetError, match=r"bad.jsonl, line 1: missing field 'answer'$") as err:
        selfcommit(dataset=str(bad), problems=1)
    assert isinstance(err.value, InputErrorReport)
    assert type(err.value).__name__ == "DatasetError"
    copy = pickle.loads(pickle.dumps(err.value))  # as a worker process would send it back
    assert type(copy) is type(err.value) and str(copy) == str(err.value)


# -- the providers load weights on first use --


def test_the_provider_loads_its_weights_on_first_use(caplog):
    with caplog.at_level(logging.INFO, logger="cotaudit.providers._local"):
        api = get_model("hf-probe/tiny", memoize=False).api
        assert LOADING not in caplog.text and api._engine is None
        engine = api.probe_engine
    assert LOADING in caplog.text
    assert api.probe_engine is engine and engine.tokenizer is not None


@pytest.mark.parametrize(
    "model_args, message",
    [
        (
            {"dtype": "float33"},
            "hf-probe: -M dtype must be one of float32, bfloat16, float16, auto, got 'float33'",
        ),
        ({"max_batch_rows": 0}, "max_batch_rows must be a positive integer, got 0"),
        ({"pad_rows": "sometimes"}, "pad_rows must be true or false, got 'sometimes'"),
        (
            {"dtyp": "float32"},
            "hf-probe: unknown model args ['dtyp']; known: dtype, device, max_batch_rows, pad_rows",
        ),
    ],
)
def test_a_bad_model_arg_is_printed_alone_when_the_provider_starts(model_args, message):
    with pytest.raises(ValueError) as err:
        get_model("hf-probe/tiny", memoize=False, **model_args)
    assert isinstance(err.value, PrerequisiteError) and str(err.value) == message


def test_an_unknown_mlx_server_model_arg_is_printed_alone():
    """mlx-server/ refuses an unknown ``-M`` arg in one line before it reads any tokenizer or
    reaches a server."""
    with pytest.raises(ValueError) as err:
        get_model("mlx-server/tiny", memoize=False, temprature=0.5)
    assert isinstance(err.value, PrerequisiteError)
    assert str(err.value).startswith("mlx-server: unknown model args ['temprature']; known: url")


def test_concurrent_first_uses_load_once():
    """Four threads ask a fresh provider for its engine while a (stand-in, slow) load runs: one
    load, one engine."""
    api = get_model("hf-probe/tiny", memoize=False).api
    loads: list[object] = []

    def load() -> object:
        time.sleep(0.2)
        loads.append(object())
        return loads[-1]

    api.load_engine = load
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(api.probe_engine)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(loads) == 1 and got == loads * 4


# -- the command line --


def _inspect_eval(tmp_path: Path, arg: str) -> tuple[int, str]:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "inspect_ai",
            "eval",
            "tasks/selfcommit.py",
            "--model",
            "hf-probe/tiny",
            "-T",
            arg,
            "--log-level",
            "info",
            "--log-dir",
            str(tmp_path / "logs"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert not (tmp_path / "logs").exists() or not list_eval_logs(str(tmp_path / "logs"))
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.parametrize(
    "arg, message",
    [
        ("stride=-1", "-T stride: must be a positive integer, got -1"),
        (
            "strid=30",
            "-T strid: not a parameter of task selfcommit (did you mean -T stride?); its "
            "parameters: problems, dataset, conditions, stride, k, temperature,",
        ),
    ],
)
def test_the_command_line_prints_the_one_message_before_any_model_loads(tmp_path, arg, message):
    code, out = _inspect_eval(tmp_path, arg)
    assert code == 1, out
    assert message in " ".join(out.split()), out  # rich wraps long lines at the terminal width
    assert "Traceback" not in out and len(out.strip().splitlines()) < 15, out
    assert LOADING not in out and "Loading weights" not in out, out


# -- the default model of a run that names none --


def test_a_run_naming_no_model_gets_the_default_model_and_a_named_one_wins():
    """Inside an eval that names no model, Inspect's ``none`` model is active while the task is
    created: the checked task takes ``hf-probe/default`` (weights load on first use, so nothing
    loads here). A named model stays active and the task keeps no model of its own (a task's
    model would override ``--model a,b``); a task created outside an eval is left as is."""
    from inspect_ai.model import GenerateConfig
    from inspect_ai.model._model import init_active_model

    from cotaudit.prerequisite import DEFAULT_EVAL_MODEL

    assert selfcommit(problems=1).model is None  # outside an eval
    init_active_model(get_model("none"), GenerateConfig())
    try:
        task = selfcommit(problems=1)
        assert task.model is not None and str(task.model) == DEFAULT_EVAL_MODEL
        init_active_model(get_model("hf-probe/tiny"), GenerateConfig())
        assert selfcommit(problems=1).model is None
    finally:
        from inspect_ai.model._model import active_model_context_var

        active_model_context_var.set(None)  # no model active, as before the test
