"""Small datasets shipped for the probe's answer forms (pure: rows, no Inspect).

- ``gsm8k_mc.jsonl``: multiple choice built from the vendored GSM8K test split by
  :func:`build_gsm8k_mc` (four integer choices, one of them the gold answer).
- ``capitals.jsonl``: short exact-string answers (capital cities), written by hand.

A malformed row raises :class:`cotaudit.datasets.gsm8k.DatasetError` naming file, line and field.

:func:`problems_from_row` reads GSM8K problems from a given first row (the studies'
``-T first_row``), so a run can be made on another row set of the split
(:mod:`cotaudit.organisms.rows`).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, TypeVar

from cotaudit.datasets.gsm8k import VENDORED, DatasetError, Problems, load_problems
from cotaudit.datasets.jsonl import json_lines
from cotaudit.params import ParameterError, checked, require_int

V = TypeVar("V")

LETTERS = "ABCD"
MC_SEED = 20_261_130


def data_path(name: str) -> Path:
    """A file under the package's ``data/probe/``."""
    return Path(str(resources.files("cotaudit") / "data" / "probe" / name))


@dataclass(frozen=True)
class MCItem:
    """A multiple-choice question; ``target`` is the letter of the correct choice."""

    id: str
    question: str
    choices: list[str]
    target: str
    gold: int


@dataclass(frozen=True)
class ShortItem:
    """A question with a short exact answer."""

    id: str
    question: str
    answer: str


def require_first_row(name: str, value: Any) -> None:
    """A first dataset row: an integer >= 0 (0-based), else the one-line error naming ``-T``
    ``name``."""
    require_int(name, value)
    if value < 0:
        raise ParameterError(f"-T {name}: must be a dataset row >= 0 (0-based), got {value!r}")


FirstRow = Annotated[int, checked(require_first_row)]
"""``-T first_row``: the first dataset row (0-based) a study reads (:func:`problems_from_row`)."""


def problems_from_row(
    source: str | Path = VENDORED, *, limit: int | None = None, first_row: int = 0
) -> Problems:
    """The first ``limit`` (default all) problems with an integer gold answer whose row
    (``Problem.index``, 0-based) is ``first_row`` or later: with ``first_row`` 0, exactly
    :func:`cotaudit.datasets.gsm8k.load_problems`; else ``non_integer_dropped`` counts the rows
    dropped from ``first_row`` to the last problem kept. A ``first_row`` past every problem is
    :class:`DatasetError`."""
    if first_row == 0:
        return load_problems(source, limit=limit)
    loaded = load_problems(source)
    items = [p for p in loaded.items if p.index >= first_row]
    if limit is not None:
        items = items[:limit]
    if not items:
        raise DatasetError(f"{loaded.source}: no problem from row {first_row} on")
    dropped = items[-1].index - first_row + 1 - len(items)
    return Problems(items=items, source=loaded.source, non_integer_dropped=dropped)


def distractors(gold: int, rng: random.Random) -> list[int]:
    """Three wrong integer choices: three of {g-1, g+1, g+2, 2g, g//2, g+10, g-10, 10g} that are
    non-negative, differ from g and from each other, drawn with ``rng``."""
    pool = [gold - 1, gold + 1, gold + 2, 2 * gold, gold // 2, gold + 10, gold - 10, 10 * gold]
    unique = sorted({x for x in pool if x >= 0 and x != gold})
    return rng.sample(unique, 3)


def build_gsm8k_mc(n: int = 50, seed: int = MC_SEED) -> list[MCItem]:
    """The first ``n`` vendored GSM8K test problems as 4-way multiple choice: the gold answer
    at a position drawn per problem, three :func:`distractors` elsewhere (one RNG per problem,
    seeded with seed + row index)."""
    items = []
    for p in load_problems(limit=n).items:
        rng = random.Random(seed + p.index)
        values = distractors(p.answer, rng)
        position = rng.randrange(4)
        values.insert(position, p.answer)
        items.append(
            MCItem(
                f"mc{p.index:04d}",
                p.question,
                [str(v) for v in values],
                LETTERS[position],
                p.answer,
            )
        )
    return items


def _rows(path: Path) -> list[tuple[int, dict]]:
    out = []
    for line_no, row in json_lines(path, DatasetError):
        if isinstance(row, json.JSONDecodeError):
            raise DatasetError(f"{path}:{line_no}: not JSON ({row.msg})") from row
        if not isinstance(row, dict):
            raise DatasetError(f"{path}:{line_no}: expected an object, got {type(row).__name__}")
        out.append((line_no, row))
    return out


def _field(path: Path, line_no: int, row: dict[str, Any], name: str, kind: type[V]) -> V:
    if name not in row:
        raise DatasetError(f"{path}:{line_no}: missing field {name!r}")
    if not isinstance(row[name], kind):
        raise DatasetError(f"{path}:{line_no}: field {name!r} must be {kind.__name__}")
    return row[name]


def load_gsm8k_mc(path: Path | None = None, limit: int | None = None) -> list[MCItem]:
    """The multiple-choice rows (``id``, ``question``, ``choices``, ``target``, ``gold``)."""
    path = path or data_path("gsm8k_mc.jsonl")
    items = []
    for line_no, row in _rows(path)[:limit]:
        choices = _field(path, line_no, row, "choices", list)
        target = _field(path, line_no, row, "target", str)
        if target not in LETTERS[: len(choices)]:
            raise DatasetError(f"{path}:{line_no}: field 'target' {target!r} names no choice")
        items.append(
            MCItem(
                str(_field(path, line_no, row, "id", str)),
                str(_field(path, line_no, row, "question", str)),
                [str(c) for c in choices],
                str(target),
                int(_field(path, line_no, row, "gold", int)),
            )
        )
    return items


def load_capitals(path: Path | None = None, limit: int | None = None) -> list[ShortItem]:
    """The short-answer rows (``id``, ``question``, ``answer``)."""
    path = path or data_path("capitals.jsonl")
    return [
        ShortItem(
            str(_field(path, n, row, "id", str)),
            str(_field(path, n, row, "question", str)),
            str(_field(path, n, row, "answer", str)),
        )
        for n, row in _rows(path)[:limit]
    ]


def write_gsm8k_mc(path: Path, n: int = 50) -> None:
    """Write :func:`build_gsm8k_mc` as JSON lines (how the shipped file was made)."""
    with path.open("w", encoding="utf-8") as f:
        for item in build_gsm8k_mc(n):
            f.write(json.dumps(item.__dict__) + "\n")
