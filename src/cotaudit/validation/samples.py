"""A validation's samples read from a study's scored samples (Inspect's ``SampleScore`` during a
run, the report's ``ScoredSample`` from a log: :class:`cotaudit.scores.SampleScoreLike`).

The problem is ``sample_metadata["pair_id"]``, its gold answer ``sample_metadata["gold"]``;
where the cue, the final answer and the probe curve's cuts are is the study's own
(:class:`cotaudit.studies.study.Study`: ``cue``, ``answer_key``, ``curve_positions``), and so is
each statistic's value (:meth:`~cotaudit.studies.study.Study.statistic_value`: the score
value's, by name, or one the study recomputes from the score metadata, as trace_tutor's TRACE
AUCs before the final cut).

**Cuts per curve** (``n_cuts``): the number of distinct cut positions t of the sample's curve
(None when the study's reading gives no curve). ``n_resample_cuts``: the cuts of
``score.metadata["resample"]["cuts"]`` (c_0 = 0 included), None without ``-T resample``.

A sample without the gold answer, or with a cue or answer that is not an integer, is
:class:`SampleError` naming the sample; so is a sample of a study no validation reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from cotaudit.params import InputError
from cotaudit.scores import SampleScoreLike
from cotaudit.studies.probe_statistic import ProbeStatistic
from cotaudit.studies.registry import study_named
from cotaudit.validation.labels import ValidationSample


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


def _distinct(positions: Any) -> int | None:
    """How many distinct integer positions a logged list holds (None: not a list)."""
    if not isinstance(positions, list | tuple):
        return None
    return len({p for p in positions if isinstance(p, int) and not isinstance(p, bool)})


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
    reading = study_named(study)
    if reading is None:
        raise SampleError(f"sample {sample!r}: study {study!r} has no validation reading")
    meta = scored.sample_metadata or {}
    unit = meta.get("pair_id")
    if not isinstance(unit, str):
        raise SampleError(f"sample {sample!r}: no sample_metadata.pair_id (its problem)")
    gold = _integer(meta.get("gold"), sample, "sample_metadata.gold")
    if gold is None:
        raise SampleError(f"sample {sample!r}: no sample_metadata.gold (the dataset answer)")
    score_meta = scored.score.metadata or {}
    answer_key = reading.answer_key
    answer = _integer(score_meta.get(answer_key), sample, f"score.metadata.{answer_key}")
    cue, cue_field = reading.cue(meta, gold)
    value = scored.score.value if isinstance(scored.score.value, Mapping) else {}
    names = {n for s in statistics for n in (s.name, s.uncued_name)}
    return ValidationSample(
        unit=unit,
        cue=_integer(cue, sample, cue_field),
        gold=gold,
        answer=answer,
        values={n: reading.statistic_value(n, value, score_meta) for n in sorted(names)},
        sample_id=str(sample),
        n_cuts=_distinct(reading.curve_positions(score_meta)),
        n_resample_cuts=resample_cuts(score_meta),
    )
