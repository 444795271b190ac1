"""A validation's samples read from a study's scored samples (Inspect's ``SampleScore`` during a
run, the report's ``ScoredSample`` from a log: :class:`cotaudit.scores.SampleScoreLike`).

Per study, where the problem, the cue and the final answer are:

- selfcommit, and the generic probe's self-commitment on ``gsm8k_numeric``
  (``probe_selfcommit``): the problem is ``sample_metadata["pair_id"]``; the cue is
  ``sample_metadata["hint"]`` for a hinted sample (a log written before hints could be wrong
  names none: its hint is the gold answer, the study's), none for an honest one; the final
  answer is ``score.metadata["a_final"]``.
- trace_tutor: the problem is ``pair_id``; the cue is ``sample_metadata["key"]`` (None for
  question_only); the final answer is ``score.metadata["final_answer"]``.

Statistic values are the score value's, by name; the TRACE AUCs before the final cut are
recomputed from the trace_tutor score metadata's pass curves
(:func:`cotaudit.validation.statistics.before_final_value`).

**Cuts per curve** (``n_cuts``, the number of distinct cut positions t of the sample's curve):
selfcommit and the generic probe's self-commitment: ``score.metadata["positions"]`` (the
curve's positions, t = 0 excluded), None when the sample has no final answer (no curve);
trace_tutor: ``score.metadata["positions"]`` without its first entry (the 0% probe, no point
of the curve). ``n_resample_cuts``: the cuts of ``score.metadata["resample"]["cuts"]`` (c_0 = 0
included), None without ``-T resample``.

A sample without the gold answer, or with a cue or answer that is not an integer, is
:class:`SampleError` naming the sample.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from cotaudit.params import InputError
from cotaudit.scores import SampleScoreLike
from cotaudit.validation.labels import ValidationSample
from cotaudit.validation.statistics import BEFORE_FINAL_CURVES, ProbeStatistic, before_final_value

SELFCOMMIT_FAMILY = ("selfcommit", "probe_selfcommit")
"""Studies whose samples are selfcommit prompts (honest / hinted)."""


class SampleError(InputError):
    """A scored sample a validation cannot read; the message names the sample and field."""


def _integer(value: Any, sample: Any, field: str) -> int | None:
    """``value`` as an integer (None for none); a float that is an integer is one."""
    if value is None or value == "none":
        return None
    if isinstance(value, bool):
        raise SampleError(f"sample {sample!r}: {field} must be an integer, got {value!r}")
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    raise SampleError(f"sample {sample!r}: {field} must be an integer, got {value!r}")


def _cue(study: str, meta: Mapping[str, Any], gold: int, sample: Any) -> int | None:
    if study in SELFCOMMIT_FAMILY:
        if meta.get("condition") != "hinted":
            return None
        return _integer(meta.get("hint", gold), sample, "sample_metadata.hint")
    return _integer(meta.get("key"), sample, "sample_metadata.key")


def _value(raw: Any) -> float:
    try:
        value = float(raw)
    except (TypeError, ValueError):
        return math.nan
    return value


def _distinct(positions: Any) -> int | None:
    """How many distinct integer positions a logged list holds (None: not a list)."""
    if not isinstance(positions, list | tuple):
        return None
    return len({p for p in positions if isinstance(p, int) and not isinstance(p, bool)})


def curve_cuts(study: str, score_metadata: Mapping[str, Any]) -> int | None:
    """``n_cuts`` of a scored sample of ``study`` (module docstring)."""
    positions = score_metadata.get("positions")
    if study == "trace_tutor":
        return _distinct(positions[1:]) if isinstance(positions, list | tuple) else None
    if score_metadata.get("a_final") is None:
        return None
    return _distinct(positions)


def resample_cuts(score_metadata: Mapping[str, Any]) -> int | None:
    """``n_resample_cuts`` of a scored sample (module docstring)."""
    record = score_metadata.get("resample")
    return _distinct(record.get("cuts")) if isinstance(record, Mapping) else None


def validation_sample(
    study: str, scored: SampleScoreLike, statistics: Iterable[ProbeStatistic]
) -> ValidationSample:
    """One scored sample of ``study`` as a :class:`ValidationSample` with ``statistics``' values
    (NaN where the score holds none)."""
    sample = scored.sample_id
    meta = scored.sample_metadata or {}
    unit = meta.get("pair_id")
    if not isinstance(unit, str):
        raise SampleError(f"sample {sample!r}: no sample_metadata.pair_id (its problem)")
    gold = _integer(meta.get("gold"), sample, "sample_metadata.gold")
    if gold is None:
        raise SampleError(f"sample {sample!r}: no sample_metadata.gold (the dataset answer)")
    score_meta = scored.score.metadata or {}
    answer_key = "a_final" if study in SELFCOMMIT_FAMILY else "final_answer"
    answer = _integer(score_meta.get(answer_key), sample, f"score.metadata.{answer_key}")
    value = scored.score.value if isinstance(scored.score.value, Mapping) else {}
    names = {n for s in statistics for n in (s.name, s.uncued_name)}
    return ValidationSample(
        unit=unit,
        cue=_cue(study, meta, gold, sample),
        gold=gold,
        answer=answer,
        values={
            n: before_final_value(n, score_meta)
            if n in BEFORE_FINAL_CURVES
            else _value(value.get(n))
            for n in sorted(names)
        },
        sample_id=str(sample),
        n_cuts=curve_cuts(study, score_meta),
        n_resample_cuts=resample_cuts(score_meta),
    )
