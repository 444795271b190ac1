"""GSM8K problems: the vendored test split (default), a local JSONL/JSON file, or the hub.

Each row has ``question`` and ``answer`` (a worked solution ending ``#### N``). Only problems
whose gold answer is an integer are kept, as in the source papers; the number dropped is
reported in :class:`Problems`. A malformed row raises :class:`DatasetError` naming file, line
and field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from cotaudit.answers import normalize_number
from cotaudit.datasets.jsonl import json_lines
from cotaudit.params import InputError, read_utf8

VENDORED = "vendored"
HUB_ID = "openai/gsm8k"


class DatasetError(InputError):
    """A missing dataset file or a malformed row: the message names the file, line and field."""


@dataclass(frozen=True)
class Problem:
    """One GSM8K problem with its integer gold answer; ``index`` is its row in the source."""

    index: int
    question: str
    answer: int
    solution: str


@dataclass(frozen=True)
class Problems:
    """Loaded problems plus how many rows were dropped for a non-integer gold answer."""

    items: list[Problem]
    source: str
    non_integer_dropped: int


def vendored_path() -> Path:
    """The GSM8K test split shipped in the package (MIT licence beside it)."""
    return Path(str(resources.files("cotaudit") / "data" / "gsm8k" / "test.jsonl"))


def load_problems(source: str | Path = VENDORED, *, limit: int | None = None) -> Problems:
    """Load problems from ``"vendored"``, a ``.jsonl``/``.json`` path, or ``"openai/gsm8k"``."""
    if str(source) == VENDORED:
        path = vendored_path()
        rows = _read_jsonl(path)
        name = str(path)
    elif str(source) == HUB_ID:
        rows = _read_hub()
        name = HUB_ID
    else:
        path = Path(source)
        if not path.is_file():
            raise DatasetError(f"{path}: no such dataset file")
        rows = _read_json(path) if path.suffix == ".json" else _read_jsonl(path)
        name = str(path)
    items: list[Problem] = []
    dropped = 0
    for line, row in rows:
        problem = _parse_row(name, line, row)
        if problem is None:
            dropped += 1
            continue
        items.append(problem)
        if limit is not None and len(items) >= limit:
            break
    if not items:
        raise DatasetError(
            f"{name}: no problem with an integer answer ({dropped} non-integer rows dropped)"
        )
    return Problems(items=items, source=name, non_integer_dropped=dropped)


def _read_jsonl(path: Path) -> Iterable[tuple[int, Any]]:
    for line_no, row in json_lines(path, DatasetError):
        if isinstance(row, json.JSONDecodeError):
            raise DatasetError(f"{path}, line {line_no}: not valid JSON ({row.msg})") from row
        yield line_no, row


def _read_json(path: Path) -> Iterable[tuple[int, Any]]:
    try:
        data = json.loads(read_utf8(path, DatasetError))
    except json.JSONDecodeError as e:
        raise DatasetError(f"{path}, line {e.lineno}: not valid JSON ({e.msg})") from e
    if not isinstance(data, list):
        raise DatasetError(f"{path}: expected a JSON list of rows, got {type(data).__name__}")
    return ((i, row) for i, row in enumerate(data, start=1))


def _read_hub() -> Iterable[tuple[int, Any]]:
    from datasets import load_dataset  # needs the internet

    split = load_dataset(HUB_ID, "main", split="test")
    return ((i, dict(row)) for i, row in enumerate(split, start=1))


def _parse_row(source: str, line: int, row: Any) -> Problem | None:
    """A Problem, None for a non-integer gold answer, or a DatasetError naming the bad field."""
    where = f"{source}, line {line}"
    if not isinstance(row, dict):
        raise DatasetError(f"{where}: expected a JSON object, got {type(row).__name__}")
    for field in ("question", "answer"):
        if field not in row:
            raise DatasetError(f"{where}: missing field '{field}'")
        if not isinstance(row[field], (str, int)) or isinstance(row[field], bool):
            raise DatasetError(f"{where}: field '{field}' must be a string")
    question = str(row["question"]).strip()
    if not question:
        raise DatasetError(f"{where}: field 'question' is empty")
    solution = str(row["answer"])
    if isinstance(row["answer"], str) and "####" not in solution and not _looks_numeric(solution):
        raise DatasetError(f"{where}: field 'answer' has no '#### N' final answer")
    gold = (
        normalize_number(solution.split("####")[-1])
        if "####" in solution
        else (normalize_number(solution))
    )
    if gold is None:
        return None
    return Problem(index=line - 1, question=question, answer=gold, solution=solution)


def _looks_numeric(text: str) -> bool:
    return any(ch.isdigit() for ch in text) and len(text.split()) <= 2
