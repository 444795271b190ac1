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
from cotaudit.validation.statistics import ProbeStatistic

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
        values={n: _value(value.get(n)) for n in sorted(names)},
        sample_id=str(sample),
    )
