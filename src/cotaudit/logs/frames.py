"""Read a log's per-sample scores through Inspect's own data frames (``inspect_ai.analysis``).

``samples_df(log, SampleSummary + SampleScores, full=True)`` gives one row per sample and epoch:
the sample id and metadata (``metadata_<key>``) and, per scorer, the score value, answer,
explanation and metadata (``score_<scorer>``, ``score_<scorer>_answer``, ...). Values a frame
cannot hold as scalars (dicts, lists) arrive as JSON text and are decoded here; a metadata key
some samples lack arrives as a float column, whose whole numbers are made integers again
(sample ids arrive as text). Scores are the samples' own, with any later edits (e.g. the
cluster contrast notes), where the whole-log walk reads the epoch reductions. The run-level
fields (task, model, status, task arguments, metric definitions and values) come from the log
header (``read_eval_log(header_only=True)``), which is small and exact.

:func:`cotaudit.logs.files.run_from_frames` puts the two together; logs with several epochs
are scored on their epoch reductions, which data frames do not carry, and are walked whole.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cotaudit.logs.data import ScoreData, ScoredSample

_DETAILS = ("answer", "explanation", "metadata")


def _missing(v: Any) -> bool:
    if v is None:
        return True
    try:
        import pandas as pd

        return bool(pd.isna(v)) if not isinstance(v, (list, dict, str)) else False
    except (TypeError, ValueError):
        return False


def _decode(v: Any) -> Any:
    """A frame cell as the Python value the log held: JSON text of a dict or list decoded
    (NaN included), numpy scalars as Python numbers, missing cells as None."""
    if _missing(v):
        return None
    if isinstance(v, str) and v[:1] in "{[":
        try:
            return json.loads(v)
        except ValueError:
            return v
    if hasattr(v, "item") and not isinstance(v, (list, dict, str)):
        return v.item()
    return v


def _integer_columns(df: Any, columns: list[str]) -> set[str]:
    """Float columns whose values are all whole numbers: integers the frame turned into floats
    because some sample lacks the key (a missing value forces a float column)."""
    out = set()
    for c in columns:
        if df[c].dtype.kind == "f":
            values = df[c].dropna()
            if len(values) and all(float(v).is_integer() for v in values):
                out.add(c)
    return out


def _sample_metadata(row: Any, columns: list[str], integers: set[str]) -> dict[str, Any]:
    out = {}
    for c in columns:
        value = _decode(row[c])
        if c in integers and isinstance(value, float):
            value = int(value)
        out[c.removeprefix("metadata_")] = value
    return out


def samples_by_scorer(
    path: str | Path, scorers: list[str], order: dict[str, list[str]] | None = None
) -> tuple[dict[str, list[ScoredSample]], int]:
    """Per scorer, the scores of every sample of the (single-epoch) log at ``path``, each with
    its sample's metadata; and the number of samples. ``order`` (per scorer, sample ids as text)
    puts a scorer's samples in the order its metrics received them (the log's epoch
    reductions), which interval bootstraps depend on; other samples follow in log order."""
    from inspect_ai.analysis import SampleScores, SampleSummary, samples_df

    df = samples_df(str(path), columns=SampleSummary + SampleScores, full=True, quiet=True)
    meta_cols = [c for c in df.columns if c.startswith("metadata_")]
    integers = _integer_columns(df, meta_cols)
    out: dict[str, list[ScoredSample]] = {name: [] for name in scorers}
    for _, row in df.iterrows():
        sample_meta = {
            k: v for k, v in _sample_metadata(row, meta_cols, integers).items() if v is not None
        }
        for name in scorers:
            col = f"score_{name}"
            if col not in df.columns or _missing(row[col]):
                continue
            details = {
                d: _decode(row[f"{col}_{d}"]) if f"{col}_{d}" in df.columns else None
                for d in _DETAILS
            }
            out[name].append(
                ScoredSample(
                    sample_id=row["id"],
                    score=ScoreData(
                        _decode(row[col]),
                        details["metadata"],
                        details["answer"],
                        details["explanation"],
                    ),
                    sample_metadata=sample_meta,
                )
            )
    for name, ids in (order or {}).items():
        rank = {sid: i for i, sid in enumerate(ids)}
        out[name] = sorted(out.get(name, []), key=lambda s: rank.get(str(s.sample_id), len(rank)))
    return out, int(df["id"].nunique()) if len(df) else 0
