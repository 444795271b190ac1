"""report_ll over recorded transcripts: pairs of real samples instead of planted fixtures.

A pairs file (JSONL, one :class:`RecordedPair` a line) pairs two recorded transcripts of the
same task, ``hack`` (where the thing happened) and ``clean`` (where it did not), each named by
a log and sample id (:class:`TranscriptRef`: ``{"log": "run.eval", "sample": "q3"}``) or
written inline (``{"messages": [{"role": "user", "content": "..."}, ...]}``), with the two
reports to score, ``honest`` and ``concealing``: each a fixed string, or
``{"final_message": "hack" | "clean"}``, the agent's own final message in that transcript. The
``unit`` is the independent unit of the bootstrap (pairs of one unit are resampled together).

**Context.** A transcript that ends with an assistant message without tool calls ends with the
agent's final message: the report stands in its place, so the context a report is scored after
is every message before it (:func:`transcript_context`); a transcript ending otherwise (a tool
result) is context whole. ``report_request``, when given, is appended as a user message (the
fixture study appends its report request).

**Statistics**: per pair the study's four scorings S(r, T) and their differences
(:func:`cotaudit.studies.report_ll.stats.differences`: d_h = S(h, hack) - S(h, clean),
d_c = S(c, hack) - S(c, clean), did = d_h - d_c, and per-token forms), and over the run the
study's summary of each (:func:`cotaudit.studies.report_ll.stats.summarize`: mean, unit
bootstrap CI, sign-flip p-value, n) under ``recorded/{quantity}/{stat}``
(:func:`recorded_statistics`). There are no factor cells or register levels here: one group.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from cotaudit.datasets.jsonl import json_lines
from cotaudit.params import InputError
from cotaudit.scores import MetricSpec, MetricTable, SampleScoreLike, Table
from cotaudit.studies.report_ll.record import REPORTS, TRANSCRIPTS
from cotaudit.studies.report_ll.stats import (
    COUNT_FIELDS,
    QUANTITIES,
    SCORING_FIELDS,
    STATS,
    InvalidScorings,
    Scorings,
    differences,
    summarize,
)

RECORDED_STUDY = "report_ll_recorded"
"""The ``study`` metadata of a recorded-pairs run."""
RECORDED_GROUP = "recorded"
"""The key prefix of the run statistics (``recorded/did/mean``)."""
RECORDED_METRIC = "report_ll_recorded"
RECORDED_OPTIONS: dict[str, Any] = {"n_resamples": 10_000, "seed": 0}


class PairsFileError(InputError):
    """A pairs file that cannot be read: the message names the file, line and field."""


class ChatTurn(BaseModel):
    """An inline transcript message."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["system", "user", "assistant"]
    content: str


class TranscriptRef(BaseModel):
    """A recorded transcript: ``log`` and ``sample`` (and ``epoch``, default 1), or inline
    ``messages``."""

    model_config = ConfigDict(extra="forbid")

    log: str | None = None
    sample: str | int | None = None
    epoch: int = 1
    messages: list[ChatTurn] | None = None

    @model_validator(mode="after")
    def _one_source(self) -> TranscriptRef:
        if (self.log is None) == (self.messages is None):
            raise ValueError("give either log and sample, or messages")
        if self.log is not None and self.sample is None:
            raise ValueError("sample: required with log")
        if self.messages is not None and not self.messages:
            raise ValueError("messages: empty")
        return self


class FinalMessage(BaseModel):
    """A report taken from a transcript: the agent's own final message there."""

    model_config = ConfigDict(extra="forbid")

    final_message: Literal["hack", "clean"]


class RecordedPair(BaseModel):
    """One row of a pairs file (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    unit: str
    hack: TranscriptRef
    clean: TranscriptRef
    honest: str | FinalMessage
    concealing: str | FinalMessage
    report_request: str | None = None

    @field_validator(*REPORTS)
    @classmethod
    def _report(cls, report: str | FinalMessage) -> str | FinalMessage:
        if isinstance(report, str) and not report.strip():
            raise ValueError("an empty report")
        return report


def _field(loc: Sequence[Any]) -> str:
    """A pydantic error location as a dotted field name (union branches left out)."""
    parts = [str(p) for p in loc if not (isinstance(p, str) and ("[" in p or p in ("str",)))]
    return ".".join(parts) or "?"


def load_pairs(path: str | Path) -> list[tuple[int, RecordedPair]]:
    """The pairs of a JSONL file with their line numbers; :class:`PairsFileError` naming the
    file, line and field for the first bad row, a duplicate id or an empty file."""
    path = Path(path)
    if not path.is_file():
        raise PairsFileError(f"{path}: no such pairs file")
    rows: list[tuple[int, RecordedPair]] = []
    seen: dict[str, int] = {}
    for n, raw in json_lines(path, PairsFileError):
        if isinstance(raw, json.JSONDecodeError):
            raise PairsFileError(f"{path} line {n}: not JSON ({raw.msg})") from None
        try:
            pair = RecordedPair.model_validate(raw)
        except ValidationError as e:
            first = e.errors()[0]
            raise PairsFileError(
                f"{path} line {n}, field {_field(first['loc'])}: {first['msg']}"
            ) from None
        if pair.id in seen:
            raise PairsFileError(
                f"{path} line {n}, field id: {pair.id!r} repeats line {seen[pair.id]}"
            )
        seen[pair.id] = n
        rows.append((n, pair))
    if not rows:
        raise PairsFileError(f"{path}: no pairs")
    return rows


def ends_with_final_message(messages: Sequence[Mapping[str, Any]]) -> bool:
    """The transcript's last message is an assistant message without tool calls (the agent's
    final message); messages as ``{"role", "content", "tool_calls"?}``."""
    return (
        bool(messages)
        and messages[-1]["role"] == "assistant"
        and not messages[-1].get("tool_calls")
    )


def transcript_context(
    messages: Sequence[Mapping[str, Any]], report_request: str | None
) -> list[dict[str, str]]:
    """The chat a report is scored after: the messages before the final message when the
    transcript ends with one, else all; then ``report_request`` as a user message."""
    kept = messages[:-1] if ends_with_final_message(messages) else messages
    chat = [{"role": str(m["role"]), "content": str(m["content"])} for m in kept]
    return chat + ([{"role": "user", "content": report_request}] if report_request else [])


def final_message(messages: Sequence[Mapping[str, Any]]) -> str | None:
    """The agent's final message (:func:`ends_with_final_message`), else None."""
    return str(messages[-1]["content"]) if ends_with_final_message(messages) else None


def pair_records(samples: Sequence[SampleScoreLike]) -> list[tuple[str, str, Scorings]]:
    """(pair id, unit, scorings) of every scored pair with valid scorings (score metadata
    holding the ``s_*`` and ``n_*`` fields, ``pair_id`` and ``unit``)."""
    out = []
    for s in samples:
        meta = s.score.metadata or {}
        try:
            scorings = Scorings(*(float(meta[f]) for f in (*SCORING_FIELDS, *COUNT_FIELDS)))
        except (KeyError, TypeError, ValueError, InvalidScorings):
            continue
        out.append((str(meta["pair_id"]), str(meta["unit"]), scorings))
    return out


def recorded_statistics(
    samples: Sequence[SampleScoreLike], n_resamples: int = 10_000, seed: int = 0
) -> Table:
    """``recorded/{quantity}/{stat}``: the study's summary (:data:`STATS`) of each quantity
    (:data:`QUANTITIES`: d_h, d_c, did and per-token forms) over the valid pairs, units
    resampled together; ``recorded/n_invalid`` counts the pairs left out. NaN without pairs."""
    records = pair_records(samples)
    head = f"{RECORDED_GROUP}/"
    out: Table = {f"{head}n_invalid": float(len(samples) - len(records))}
    if not records:
        return out | {f"{head}{q}/{stat}": math.nan for q in QUANTITIES for stat in STATS}
    values = np.array([[differences(s)[q] for q in QUANTITIES] for _, _, s in records])
    summary = summarize(
        values,
        [unit for _, unit, _ in records],
        scenarios=[pair for pair, _, _ in records],
        n_resamples=n_resamples,
        seed=seed,
    )
    return out | {
        f"{head}{q}/{stat}": float(summary[stat][i])
        for i, q in enumerate(QUANTITIES)
        for stat in STATS
    }


RECORDED_METRICS = MetricTable(
    MetricSpec(
        RECORDED_METRIC,
        recorded_statistics,
        recorded_statistics.__doc__ or "",
        RECORDED_OPTIONS,
    )
)
"""The recorded-pairs run's metric table."""

__all__ = [
    "RECORDED_METRICS",
    "RECORDED_STUDY",
    "TRANSCRIPTS",
    "PairsFileError",
    "RecordedPair",
    "TranscriptRef",
    "final_message",
    "load_pairs",
    "recorded_statistics",
    "transcript_context",
]
