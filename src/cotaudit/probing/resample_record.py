"""What the resampling probe stores per sample, and the values its scorer reports.

The definitions (r(t), resampling and counterfactual importance) are in
:mod:`cotaudit.probing.resampling`; cuts and chunks are sentences
(:mod:`cotaudit.probing.sentences`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, field_validator

from cotaudit.params import ParameterError, PositiveCount, Temperature, require_int
from cotaudit.probing.forcing import Continuations
from cotaudit.probing.resampling import (
    Answer,
    CutRollouts,
    chunk_importance,
    forced_before_resampled,
    importance_intervals,
    reach_curve,
    reach_share,
)
from cotaudit.probing.store_record import StoreRecord
from cotaudit.probing.think import split_trace
from cotaudit.scores import MetricSpec, MetricTable, SampleScoreLike

STORE_KEY = "resample"


class Chunk(BaseModel):
    """One sentence of the CoT (between cuts i and i + 1) and its importance
    (:class:`cotaudit.probing.resampling.ChunkImportance`): ``resampling`` = r(c_{i+1}) - r(c_i)
    with its 95% interval over continuations, ``resampling_kl``, ``counterfactual`` (KL form,
    against the next cut's and the similar continuations) with its interval,
    ``counterfactual_accuracy``, ``counterfactual_next_only`` (KL form against the next cut's
    continuations alone); NaN where undefined (stored as None)."""

    text: str
    resampling: float | None
    resampling_ci: tuple[float | None, float | None]
    resampling_kl: float | None
    counterfactual: float | None
    counterfactual_ci: tuple[float | None, float | None]
    counterfactual_accuracy: float | None
    counterfactual_next_only: float | None = None
    dissimilar: int
    """How many continuations from the chunk's start replaced it with a dissimilar sentence."""


class ResampleRecord(StoreRecord):
    """The resampling probe of one sample: ``cuts`` c_0 = 0 < ... < c_m = T (token positions,
    sentence ends, at most the cap of cuts); from each, ``n`` continuations of the CoT whose final
    answers are ``answers[i]`` (None: none stated); ``resampled[i]`` = r(c_i) against
    ``reference``; ``forced[i]``: the share of the ``k`` forced answers at c_i equal to it (the
    forced curve on the same cuts); ``chunks[i]``: sentence i's importance."""

    store_key: ClassVar[str] = STORE_KEY
    solver: ClassVar[str] = "resample_probe"
    scorer: ClassVar[str] = "resample_scorer"

    reference: int | str | None
    cot_tokens: int
    cuts: list[int]
    n: int
    temperature: float
    max_tokens: int
    answers: list[list[int | str | None]]
    resampled: list[float]
    k: int
    forced_answers: list[list[int | str | None]]
    forced: list[float]
    chunks: list[Chunk]


BOOTSTRAP_REPLICATES = 1000
"""Replicates of the importance intervals over continuations."""


def _or_none(value: float) -> float | None:
    return None if math.isnan(value) else value


def resample_record(
    *,
    reference: Answer,
    cuts: Sequence[int],
    cot_tokens: int,
    rollouts: Sequence[CutRollouts],
    chunk_texts: Sequence[str],
    forced_answers: Sequence[Sequence[Answer]],
    n: int,
    temperature: float,
    max_tokens: int,
    k: int,
    seed: int,
) -> ResampleRecord:
    """The record of one sample's resampling: r(c_i) of ``rollouts`` (one per cut) against
    ``reference``, the forced curve of ``forced_answers`` (k per cut) against it, and per chunk
    (``chunk_texts[i]``, between cuts i and i + 1) its importance
    (:func:`cotaudit.probing.resampling.chunk_importance`) with 95% percentile intervals of
    :data:`BOOTSTRAP_REPLICATES` replicates over continuations (numpy seed ``seed``)."""

    def per_chunk(key: str) -> Callable[[Sequence[CutRollouts]], list[float]]:
        """The statistic of one importance field, for every chunk."""
        return lambda drawn: [getattr(c, key) for c in chunk_importance(drawn, reference)]

    importance = chunk_importance(rollouts, reference)
    intervals = {
        key: importance_intervals(rollouts, per_chunk(key), n_boot=BOOTSTRAP_REPLICATES, seed=seed)
        for key in ("resampling", "counterfactual")
    }
    chunks = [
        Chunk(
            text=text,
            resampling=_or_none(imp.resampling),
            resampling_ci=(_or_none(ri[0]), _or_none(ri[1])),
            resampling_kl=_or_none(imp.resampling_kl),
            counterfactual=_or_none(imp.counterfactual),
            counterfactual_ci=(_or_none(cf[0]), _or_none(cf[1])),
            counterfactual_accuracy=_or_none(imp.counterfactual_accuracy),
            counterfactual_next_only=_or_none(imp.counterfactual_next_only),
            dissimilar=sum(bool(d) for d in rollouts[i].dissimilar),
        )
        for i, (text, imp, ri, cf) in enumerate(
            zip(
                chunk_texts,
                importance,
                intervals["resampling"],
                intervals["counterfactual"],
                strict=True,
            )
        )
    ]
    return ResampleRecord(
        reference=_stored(reference),
        cot_tokens=cot_tokens,
        cuts=list(cuts),
        n=n,
        temperature=temperature,
        max_tokens=max_tokens,
        answers=[[_stored(a) for a in r.answers] for r in rollouts],
        resampled=reach_curve(rollouts, reference),
        k=k,
        forced_answers=[[_stored(a) for a in row] for row in forced_answers],
        forced=[reach_share(row, reference) for row in forced_answers],
        chunks=chunks,
    )


def _stored(answer: Answer) -> int | str | None:
    """An answer as the record stores it: an integer or a canonical string (None: none)."""
    return answer if answer is None or isinstance(answer, int | str) else str(answer)


DRAWS_KEY = "resample_draws"


class ResampleDraws(StoreRecord):
    """What the generic probe's resampling drew for one sample, before the task's scorer reads
    the answers: the trace's span (``offset``, ``cot_tokens``: its think block, else the whole
    response), the cuts in it (c_0 = 0, then sentence ends), the text of the response up to
    each cut (``prefix_texts``), ``n`` continuations from each (``continuations[i]``, with
    ``truncated[i][j]``: continuation j used its whole budget), ``dissimilar[i][j]``: whether its
    first sentence differs in meaning from chunk i (none for the last cut), the ``k`` forced
    answers at each cut (``forced``, raw), and how the scorer reads a final answer: the answer
    form, whether the prompt opens a think block, the trace's final-answer text, and
    ``reference`` (``own``: the trace's final answer; ``gold``: the sample's target)."""

    store_key: ClassVar[str] = DRAWS_KEY
    solver: ClassVar[str] = "resample_sweep"
    scorer: ClassVar[str] = "resample_probe_scorer"

    form: str
    reference: str
    tag: str
    think_source: str
    think_opened_by_prompt: bool
    final_text: str
    generation_truncated: bool
    offset: int
    cot_tokens: int
    cuts: list[int]
    prefix_texts: list[str]
    chunk_texts: list[str]
    n: int
    temperature: float
    max_tokens: int
    continuations: list[list[str]]
    truncated: list[list[bool]]
    dissimilar: list[list[bool]]
    k: int
    forced: list[list[str]]
    seed: int
    verification_lead: str | None = None

    def continuation_finals(self) -> list[list[tuple[str, bool]]]:
        """Per cut, each continuation's final-answer text, the text after the think block of
        the response up to the cut followed by the continuation
        (:func:`cotaudit.probing.think.split_trace`), and whether it used its whole budget."""
        return [
            [
                (
                    split_trace(
                        prefix + text, opened_by_prompt=self.think_opened_by_prompt
                    ).final_text,
                    truncated,
                )
                for text, truncated in zip(texts, used, strict=True)
            ]
            for prefix, texts, used in zip(
                self.prefix_texts, self.continuations, self.truncated, strict=True
            )
        ]

    def record(
        self,
        reference: Answer,
        rollouts: Sequence[CutRollouts],
        forced_answers: Sequence[Sequence[Answer]],
    ) -> ResampleRecord:
        """The record of these draws once their answers are read: the canonical ``reference``,
        each cut's continuations' canonical answers with their dissimilarity (``rollouts``)
        and the forced answers' (``forced_answers``; :func:`resample_record`)."""
        return resample_record(
            reference=reference,
            cuts=self.cuts,
            cot_tokens=self.cot_tokens,
            rollouts=rollouts,
            chunk_texts=self.chunk_texts,
            forced_answers=forced_answers,
            n=self.n,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            k=self.k,
            seed=self.seed,
        )


def _nan(value: float | None) -> float:
    return math.nan if value is None else value


def resample_values(record: ResampleRecord) -> dict[str, float]:
    """The sample's score value (NaN where undefined):

    - ``r_mean``: the mean of r(c_i) over the cuts; ``forced_mean``: of the forced curve;
    - ``gap_mean``: the mean over the cuts of forced(c_i) - r(c_i);
    - ``forced_first``: 1 when the forced curve reaches 0.5 at an earlier cut than r does
      (:func:`cotaudit.probing.resampling.forced_before_resampled`);
    - ``max_importance``: the largest |RI| over the chunks; ``top_chunk``: its index
      (the first of equals);
    - ``cuts``: the number of cuts.
    """
    if record.reference is None or not record.cuts:
        return {}
    r, f = record.resampled, record.forced
    importances = [abs(_nan(c.resampling)) for c in record.chunks]
    defined = [(v, i) for i, v in enumerate(importances) if not math.isnan(v)]
    top = max(defined, key=lambda vi: (vi[0], -vi[1])) if defined else (math.nan, math.nan)
    return {
        "r_mean": sum(r) / len(r),
        "forced_mean": sum(f) / len(f),
        "gap_mean": sum(a - b for a, b in zip(f, r, strict=True)) / len(r),
        "forced_first": forced_before_resampled(f, r),
        "max_importance": top[0],
        "top_chunk": float(top[1]),
        "cuts": float(len(record.cuts)),
    }


VALUE_KEYS = ("r_mean", "forced_mean", "gap_mean", "forced_first", "max_importance")
"""The score value keys the run metric averages."""


def _resample_summary(
    samples: Sequence[SampleScoreLike], condition_key: str, prefix: str
) -> dict[str, float]:
    """``<prefix>n_samples`` (samples with the values), then per key of :data:`VALUE_KEYS` its
    mean over the samples where it is defined (NaN left out; NaN when none), overall and per
    condition (``<prefix><key>/<condition>``, the sample metadata's ``condition_key``). The
    values are read under ``<prefix><key>`` (:data:`STUDY_PREFIX` in a study's score that
    carries them beside its own)."""
    rows = [
        (s.score.value, (s.sample_metadata or {}).get(condition_key))
        for s in samples
        if isinstance(s.score.value, dict) and prefix + VALUE_KEYS[0] in s.score.value
    ]
    out: dict[str, float] = {f"{prefix}n_samples": float(len(rows))}
    conditions = sorted({str(c) for _, c in rows if c is not None})
    for key in (prefix + k for k in VALUE_KEYS):
        for name, keep in [(key, None), *((f"{key}/{c}", c) for c in conditions)]:
            got = [
                float(v[key])
                for v, c in rows
                if (keep is None or str(c) == keep) and key in v and not math.isnan(float(v[key]))
            ]
            out[name] = sum(got) / len(got) if got else math.nan
    return out


STUDY_PREFIX = "resample_"
"""The prefix of the resampling values in a study's score that carries them beside its own
(selfcommit's ``-T resample``)."""


METRICS = MetricTable(
    MetricSpec(
        "resample_summary",
        _resample_summary,
        "Run metrics of the resampling probe (cotaudit.probing.resample_record): n_samples and "
        "the mean of r, the forced curve, their gap, forced-first and the largest importance, "
        "overall and per condition.",
        {"condition_key": "condition", "prefix": ""},
    ),
)


class ResampleOptions(BaseModel):
    """A study task's ``-T resample`` options (its settings model inherits them): ``resample``
    continuations per sentence cut (0: off), at most ``resample_max_cuts`` cuts, at
    ``resample_temperature``."""

    resample: int = 0
    resample_max_cuts: PositiveCount = 20
    resample_temperature: Temperature = 0.7

    def continuations(
        self, max_tokens: int, reference: Literal["own", "gold"] = "own"
    ) -> Continuations:
        """The resampling these options ask for, of a CoT whose budget is ``max_tokens``, against
        ``reference``."""
        return Continuations(
            n=self.resample,
            temperature=self.resample_temperature,
            max_tokens=max_tokens,
            max_cuts=self.resample_max_cuts,
            reference=reference,
        )

    @field_validator("resample", mode="before")
    @classmethod
    def _resample(cls, value: Any) -> Any:
        require_int("resample", value)
        if value < 0:
            raise ParameterError(f"-T resample: must be 0 (off) or more, got {value!r}")
        return value
