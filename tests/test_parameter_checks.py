"""Bad input in one line of our words, before any model loads: the range checks every task's
settings declare (``cotaudit.params``: PositiveCount, Temperature, Seed), pydantic's errors
turned into one line without its documentation URL, and a file that is not UTF-8 named with
the byte offset where it stops decoding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from cotaudit.datasets.gsm8k import DatasetError, load_problems
from cotaudit.datasets.shipped import load_capitals
from cotaudit.params import ParameterError, error_line, validation_line
from cotaudit.prerequisite import as_report
from cotaudit.probing.log_settings import probe_log_settings
from cotaudit.probing.settings import probe_settings
from cotaudit.studies.report_ll.fixtures.schema import FixtureFileError, load_fixtures
from cotaudit.studies.report_ll.recorded import PairsFileError, load_pairs
from cotaudit.tasks.report_ll import report_ll
from cotaudit.tasks.report_ll_recorded import report_ll_recorded
from cotaudit.tasks.resample import resample
from cotaudit.tasks.selfcommit import selfcommit
from cotaudit.tasks.trace_tutor import trace_tutor


def _one_line(error: BaseException) -> str:
    text = str(error)
    assert "\n" not in text and "pydantic" not in text and "https://" not in text, text
    return text


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"k": True}, "-T k: must be a positive integer, got True"),
        ({"k": 0}, "-T k: must be a positive integer, got 0"),
        ({"answer_max_tokens": 0}, "-T answer_max_tokens: must be a positive integer, got 0"),
        ({"answer_max_tokens": 2.5}, "-T answer_max_tokens: must be a positive integer, got 2.5"),
        ({"temperature": -1}, "-T temperature: must be >= 0.0, got -1"),
        ({"temperature": True}, "-T temperature: must be a finite number, got True"),
        ({"temperature": float("nan")}, "-T temperature: must be a finite number, got nan"),
        ({"seed": True}, "-T seed: must be an integer, got True"),
        ({"stride": 0}, "-T stride: must be a positive integer, got 0"),
        ({"stride": "abc"}, "-T stride: must be a positive integer, got 'abc'"),
        ({"fractions": ""}, "-T fractions must lie in (0, 1], got []"),
        ({"fractions": "0.5,0.2"}, "-T fractions must be strictly increasing, got [0.5, 0.2]"),
        ({"fractions": "a,b"}, "-T fractions: expected numbers in (0, 1], got 'a,b'"),
        ({"max_cuts": 0, "cuts": "sentences"}, "-T max_cuts: must be a positive integer, got 0"),
    ],
)
def test_the_probes_refuse_out_of_range_values_in_one_line(tmp_path, params, message):
    log = tmp_path / "run.eval"
    log.write_bytes(b"")
    for settings in (
        lambda: probe_settings("selfcommit", **params),
        lambda: probe_log_settings(str(log), probe="selfcommit", **params),
    ):
        with pytest.raises(ParameterError) as e:
            settings()
        assert _one_line(e.value) == message


def test_a_single_number_is_one_item_of_a_list_parameter():
    s = probe_settings("selfcommit", thetas=0.8)
    assert s.thetas == (0.8,)
    assert probe_settings("trace", fractions=1).schedule().fractions == (1.0,)


@pytest.mark.parametrize(
    ("task", "params", "message"),
    [
        (selfcommit, {"answer_max_tokens": 0}, "-T answer_max_tokens: must be a positive integer"),
        (selfcommit, {"k": True}, "-T k: must be a positive integer, got True"),
        (selfcommit, {"temperature": -1}, "-T temperature: must be >= 0.0, got -1"),
        (selfcommit, {"thetas": "x"}, "-T thetas: expected numbers in [0, 1], got 'x'"),
        (trace_tutor, {"answer_max_tokens": 0}, "-T answer_max_tokens: must be a positive"),
        (trace_tutor, {"temperature": -0.5}, "-T temperature: must be >= 0.0, got -0.5"),
        (report_ll, {"n_resamples": True}, "-T n_resamples: must be a positive integer"),
        (report_ll, {"scenarios": True}, "-T scenarios:"),
        (resample, {"forced_temperature": -1}, "-T forced_temperature: must be >= 0.0, got -1"),
        (resample, {"seed": 1.5}, "-T seed: must be an integer, got 1.5"),
        (resample, {"k": True}, "-T k: must be a positive integer, got True"),
        (report_ll_recorded, {"pairs": "p.jsonl", "n_resamples": True}, "-T n_resamples: must"),
        (report_ll_recorded, {"pairs": "p.jsonl", "seed": "x"}, "-T seed: must be an integer"),
    ],
)
def test_every_study_task_refuses_out_of_range_values_in_one_line(task, params, message):
    with pytest.raises(ParameterError) as e:
        task(**params)
    assert message in _one_line(e.value)


class _Row(BaseModel):
    name: str
    count: int


def test_validation_line_is_one_line_in_our_words():
    with pytest.raises(ValidationError) as e:
        _Row.model_validate({"name": "a", "count": "many", "extra": 1})
    assert validation_line(e.value, prefix="-T ") == (
        "-T count: Input should be a valid integer, unable to parse string as an integer, "
        "got 'many'"
    )
    with pytest.raises(ValidationError) as e:
        _Row.model_validate({})
    assert validation_line(e.value) == "name: Field required, got {}; and 1 more"
    assert error_line(e.value) == "_Row not valid: name: Field required, got {}; and 1 more"
    assert error_line(OSError("disk\nfull")) == "OSError: disk"
    assert error_line(ValueError("id \x1b[2J")) == "ValueError: id \\x1b[2J"


LATIN1 = "café".encode("latin-1")
"""``é`` as the one byte 0xe9: not UTF-8 (a continuation byte must follow it)."""


def _not_utf8(path: Path, good_lines: list[str]) -> Path:
    """``good_lines`` then a line holding :data:`LATIN1`; the bad byte's offset is the length
    of the good lines (with their newlines) plus 3 (``caf``)."""
    path.write_bytes(
        "".join(f"{line}\n" for line in good_lines).encode() + b'{"q": "' + LATIN1 + b'"}\n'
    )
    return path


def _offset(good_lines: list[str]) -> int:
    return len("".join(f"{line}\n" for line in good_lines).encode()) + len(b'{"q": "caf')


def test_a_dataset_that_is_not_utf8_is_named_with_the_byte_offset(tmp_path):
    good = [json.dumps({"question": "1 + 2?", "answer": "#### 3"})]
    path = _not_utf8(tmp_path / "problems.jsonl", good)
    with pytest.raises(DatasetError) as e:
        load_problems(path)
    assert _one_line(e.value) == (
        f"{path}: not UTF-8 text: byte 0xe9 at offset {_offset(good)} (line 2) invalid "
        "continuation byte; save the file as UTF-8"
    )
    with pytest.raises(DatasetError, match=rf"at offset {_offset(good)} \(line 2\)"):
        load_capitals(path)


def test_a_fixtures_or_pairs_file_that_is_not_utf8_is_named_with_the_byte_offset(tmp_path):
    for load, error in ((load_fixtures, FixtureFileError), (load_pairs, PairsFileError)):
        path = _not_utf8(tmp_path / f"{load.__name__}.jsonl", [])
        with pytest.raises(error) as e:
            load(path)
        assert _one_line(e.value).startswith(
            f"{path}: not UTF-8 text: byte 0xe9 at offset 10 (line 1) "
        )


def test_an_input_error_prints_control_characters_visibly():
    report = as_report(
        ParameterError("-T samples: no sample 'id \x1b[2J\x1b]0;title\x07' in l.eval")
    )
    assert str(report) == "-T samples: no sample 'id \\x1b[2J\\x1b]0;title\\x07' in l.eval"
    assert isinstance(report, ParameterError)
    lines = as_report(FixtureFileError("invalid fixture file:\na.jsonl:1: \x1b[31m"))
    assert str(lines) == "invalid fixture file:\na.jsonl:1: \\x1b[31m"  # its own lines kept
