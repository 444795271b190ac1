"""The lines of a JSONL file (a dataset, fixtures or pairs file), each parsed as JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cotaudit.params import InputError, read_utf8


def json_lines(path: str | Path, error: type[InputError]) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for each non-blank line of the UTF-8 file at ``path`` (numbered
    from 1; a file that is not UTF-8 raises ``error``, :func:`~cotaudit.params.read_utf8`):
    the line's JSON value, or the :class:`json.JSONDecodeError` of a line that is not JSON, for
    the caller to word."""
    for line_no, line in enumerate(read_utf8(path, error).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value: Any = json.loads(line)
        except json.JSONDecodeError as e:
            value = e
        yield line_no, value
