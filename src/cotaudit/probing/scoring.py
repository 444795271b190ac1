"""The generic probe's score of one sample, from its record
(:class:`cotaudit.probing.record.ProbeRecord`) and what the wrapped task's scorer read of each
prompt's forced answers: the value (the summaries of each prompt's curve, sampled and exact),
the metadata and the explanation. The scorer (``cotaudit.scorers.probe``, whose module
docstring gives the definitions) reads the answers; everything here is arithmetic and text.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cotaudit.display.text import fmt_number, md_text
from cotaudit.probing.display import exact_markdown, probe_chart, probe_curve_text
from cotaudit.probing.exact import reads_exact, samples
from cotaudit.probing.pass_curves import AUC_UNDEFINED_WHY
from cotaudit.probing.record import ContextAnswers, ProbeRecord
from cotaudit.probing.summaries import (
    EXACT_CURVE_KEYS,
    GAP_VALUE_KEYS,
    REPLAY_SUFFIX,
    SAMPLED_CURVE_KEYS,
    exact_gaps,
    exact_selfcommit_summaries,
    exact_trace_summaries,
    pass_rates,
    selfcommit_summaries,
    trace_summaries,
)
from cotaudit.probing.trajectory import steps_done
from cotaudit.scores import ScoreParts

FINAL_KEYS = ("task_score", "has_final", "has_final_exact")
"""The value's keys that are no prompt's summary (no ``_replay`` twin)."""


@dataclass(frozen=True)
class Verdicts:
    """What the task's scorer read of one prompt's forced answers: per probed cut, each
    answer's score value (CORRECT = 1) and canonical answer."""

    values: list[list[float]]
    answers: list[list[str | None]]


@dataclass(frozen=True)
class VerifiedAgainst:
    """The target one prompt's answers were verified against, as the task's ``Target`` holds
    it, and its letters in the order that prompt shows the choices (None without choices)."""

    target: str | list[str]
    shown: str | None


def steps_markdown(rec: ProbeRecord) -> str:
    """A recorded trajectory's steps as a list: each step's number, kind, tool and the token
    position where it ends, marked where the probe cut after it."""
    probed = set(rec.probed)
    lines = ["**Recorded steps** (a cut at t keeps the steps ending at or before t):"]
    for i, step in enumerate(rec.steps or [], start=1):
        tool = f" {md_text(step.name)}" if step.name else ""
        cut = " (cut here)" if step.end in probed else ""
        lines.append(f"{i}. {md_text(step.kind)}{tool}, ends at t = {step.end}{cut}")
    return "\n".join(lines)


def curves_markdown(
    rec: ProbeRecord, curves: dict[str, list[float]], label: str, theta: float | None
) -> str:
    """The curves as a chart (a PNG image against t, the zero probe apart), then an aligned
    monospace block of every cut and a sparkline per context
    (:func:`cotaudit.probing.display.probe_chart`,
    :func:`cotaudit.probing.display.probe_curve_text`)."""
    zero = rec.schedule.zero_probe
    return (
        probe_chart(rec.positions, rec.trace_tokens, curves, label, zero, theta)
        + "\n\n"
        + probe_curve_text(rec.positions, rec.curve_fractions, curves, label, zero)
    )


def exact_estimator_markdown(
    rec: ProbeRecord,
    value: dict[str, float],
    sampled: dict[str, list[float]],
    label: str,
    theta: float | None,
) -> str:
    """The exact estimator's part of the explanation: what it read against and at which
    temperature, with both estimators the per-sample differences, then its curves
    (:func:`cotaudit.probing.display.exact_markdown`; with both estimators the sampled curves
    are drawn beside the exact ones there, the only curve block of the explanation)."""
    greedy = " (the forced answers decode greedily: the model's distribution at T = 1)"
    lines = [
        f"**Exact estimator**: P(a forced answer's canonical form is the reference), read "
        f"by teacher forcing at T = {fmt_number(rec.exact_temperature)}"
        + (greedy if rec.temperature == 0 else "")
        + "; a lower bound, `covered` = the mass of answers in an enumerated form."
    ]
    for ctx in rec.contexts:
        suffix = "" if ctx.name == "own" else REPLAY_SUFFIX
        ref = "none" if ctx.reference_exact is None else md_text(ctx.reference_exact)
        line = f"{ctx.name}: reference {ref}"
        if samples(rec.estimator) and ctx.p_exact is not None:
            gap, gap_abs = (value.get(f"{k}{suffix}", math.nan) for k in GAP_VALUE_KEYS)
            line += (
                f"; exact − sampled: mean {fmt_number(gap)}, mean |exact − sampled| "
                f"{fmt_number(gap_abs)} over {len(ctx.p_exact)} cuts"
            )
        if samples(rec.estimator) and ctx.name not in sampled:
            line += "; no sampled curve (no final answer to compare with)"
        lines.append(line)
    body = exact_markdown(
        rec.positions,
        rec.curve_fractions,
        rec.trace_tokens,
        label,
        rec.schedule.zero_probe,
        {c.name: c.p_exact for c in rec.contexts},
        {c.name: c.covered_exact for c in rec.contexts},
        {c.name: c.letters_exact for c in rec.contexts},
        sampled if samples(rec.estimator) else None,
        theta,
    )
    return "\n\n".join([*lines, body])


@dataclass(frozen=True)
class ProbeScoring:
    """The score of one probed sample (``rec``) under the run's self-commitment ``thetas``
    (``guide``: the threshold of its primary summary tau_<theta>, None for another primary).

    Value keys: ``task_score``, then (self-commitment) ``has_final`` and ``has_final_exact``,
    then each prompt's summaries (``_replay`` for the replayed prompt's; NaN for every one when
    the sample's record has no replayed prompt though the run replays)."""

    rec: ProbeRecord
    thetas: Sequence[float]
    guide: float | None = None
    """The threshold the self-commitment chart draws a line at (the primary summary's)."""

    @property
    def zero(self) -> int:
        """1 when the first probed cut is the t = 0 probe, else 0."""
        return 1 if self.rec.schedule.zero_probe else 0

    @property
    def theta(self) -> float | None:
        """The chart's guide: :attr:`guide` for self-commitment, none for a pass curve."""
        return self.guide if self.rec.probe == "selfcommit" else None

    def record_metadata(self) -> dict[str, Any]:
        """The metadata of the record itself: the form, tags, think block, T, k, the cuts,
        and a recorded trajectory's steps with the steps done at each probed cut."""
        rec = self.rec
        metadata: dict[str, Any] = {
            "form": rec.form,
            "tag": rec.tag,
            "cut_tag": rec.cut_tag,
            "think": rec.think_source,
            "think_closed": rec.think_closed,
            "T": rec.trace_tokens,
            "k": rec.k,
            "positions": rec.positions,
            "fractions": rec.curve_fractions,
            "probed": rec.probed,
            "context_truncated": rec.context_truncated,
        }
        if rec.steps:
            ends = [step.end for step in rec.steps]
            metadata["steps"] = [step.model_dump() for step in rec.steps]
            metadata["steps_done"] = [steps_done(ends, t) for t in rec.probed]
        if rec.think_cuts:
            metadata["think_cuts"] = rec.think_cuts
        return metadata

    def sampled_curve(
        self, verdicts: Verdicts, a_final: str | None
    ) -> tuple[dict[str, float], list[float] | None]:
        """A prompt's summaries of its sampled curve, and the curve over the probed cuts: the
        pass rates p(t) (trace), the share of answers matching ``a_final`` c(t)
        (self-commitment; no curve without a final answer)."""
        rec, zero = self.rec, self.zero
        if rec.probe == "trace":
            sampled = pass_rates(verdicts.values)
            summaries = trace_summaries(sampled[zero:], rec.curve_fractions)
            summaries["p0"] = sampled[0] if zero else math.nan
            return summaries, sampled
        matches = (
            None
            if a_final is None
            else [sum(a == a_final for a in row) for row in verdicts.answers]
        )
        summaries = selfcommit_summaries(
            rec.positions, rec.trace_tokens, matches[zero:] if matches else None, rec.k, self.thetas
        )
        summaries["c0"] = matches[0] / rec.k if (zero and matches) else math.nan
        return summaries, None if matches is None else [m / rec.k for m in matches]

    def exact_curve(
        self, ctx: ContextAnswers, sampled: list[float] | None
    ) -> tuple[dict[str, float], dict[str, Any]]:
        """A prompt's summaries of its exact curve (with both estimators, the exact − sampled
        gaps too) and what its metadata holds of it."""
        rec, exact = self.rec, ctx.p_exact
        if rec.probe == "trace":
            summaries = exact_trace_summaries(exact, rec.curve_fractions, self.zero == 1)
        else:
            summaries = exact_selfcommit_summaries(
                exact, rec.positions, rec.trace_tokens, self.zero == 1, self.thetas
            )
        meta: dict[str, Any] = {}
        if samples(rec.estimator):
            summaries |= exact_gaps(exact, sampled)
            meta[SAMPLED_CURVE_KEYS[rec.probe]] = sampled
        meta |= {
            "reference_exact": ctx.reference_exact,
            EXACT_CURVE_KEYS[rec.probe]: exact,
            "covered_exact": ctx.covered_exact,
            "letters_exact": ctx.letters_exact,
        }
        return summaries, meta

    def context_part(
        self,
        ctx: ContextAnswers,
        verdicts: Verdicts | None,
        against: VerifiedAgainst,
        a_final: str | None,
    ) -> tuple[dict[str, float], dict[str, Any], list[float] | None]:
        """One prompt's summaries, its metadata and its sampled curve (None where it has
        none); ``verdicts`` None where no answers were sampled under it."""
        summaries: dict[str, float] = {}
        meta: dict[str, Any] = {
            "condition": ctx.condition,
            "sample_id": ctx.sample_id,
            "target": against.target,
            "target_shown": against.shown,
        }
        sampled: list[float] | None = None
        if verdicts is not None:
            summaries, sampled = self.sampled_curve(verdicts, a_final)
            meta |= {
                "answers": ctx.answers,
                "canonical": verdicts.answers,
                "values": verdicts.values,
            }
        if reads_exact(self.rec.estimator):
            exact_summaries, exact_meta = self.exact_curve(ctx, sampled)
            summaries |= exact_summaries
            meta |= exact_meta
        return summaries, meta, sampled

    def explanation(
        self, value: dict[str, float], curves: dict[str, list[float]], a_final: str | None
    ) -> str:
        """A head line (probe, form, T, k, think block, steps, a_final), the recorded steps,
        then the sampled curves or the exact estimator's part."""
        rec, theta = self.rec, self.theta
        label = "p(t)" if rec.probe == "trace" else "c(t)"
        head = f"{rec.probe} probe, form {rec.form}, T = {rec.trace_tokens} tokens"
        head += f", k = {rec.k}" if samples(rec.estimator) else ""
        if rec.think_source != "none":
            closed = "closed" if rec.think_closed else "unclosed"
            head += f", think block ({rec.think_source}, {closed})"
        if rec.steps:
            head += f", {len(rec.steps)} recorded steps"
        if rec.probe == "selfcommit":
            head += f"; a_final = {'none' if a_final is None else md_text(a_final)}"
        parts = [head, *([steps_markdown(rec)] if rec.steps else [])]
        if rec.probe == "trace" and len(rec.curve_fractions) < 2:
            parts.append(f"AUC not computed: {AUC_UNDEFINED_WHY}; this curve has one.")
        if rec.estimator == "sampled":
            parts.append(
                curves_markdown(rec, curves, label, theta)
                if curves
                else "No final answer: no c(t)."
            )
        if reads_exact(rec.estimator):
            parts.append(exact_estimator_markdown(rec, value, curves, label, theta))
        return "\n\n".join(parts)

    def score(
        self,
        task_score: float,
        task_answer: str | None,
        a_final: str | None,
        verdicts: Mapping[str, Verdicts],
        against: Mapping[str, VerifiedAgainst],
    ) -> ScoreParts:
        """The sample's score: ``task_score`` and ``task_answer`` are the task scorer's value
        and answer of the unmodified state, ``a_final`` the canonical final answer
        (self-commitment), ``verdicts`` and ``against`` per prompt name."""
        rec = self.rec
        value: dict[str, float] = {"task_score": task_score}
        metadata = self.record_metadata()
        if rec.probe == "selfcommit":
            value["has_final"] = float(a_final is not None)
            metadata["a_final"] = a_final
        if rec.probe == "selfcommit" and reads_exact(rec.estimator):
            value["has_final_exact"] = float(rec.contexts[0].p_exact is not None)
        curves: dict[str, list[float]] = {}
        for ctx in rec.contexts:
            suffix = "" if ctx.name == "own" else REPLAY_SUFFIX
            summaries, metadata[ctx.name], sampled = self.context_part(
                ctx, verdicts.get(ctx.name), against[ctx.name], a_final
            )
            if sampled is not None:
                curves[ctx.name] = sampled
            value |= {f"{key}{suffix}": v for key, v in summaries.items()}
        if rec.replay_under is not None and rec.context("replay") is None:
            keys = [k for k in value if k not in FINAL_KEYS]
            value |= {f"{k}{REPLAY_SUFFIX}": math.nan for k in keys}
        return ScoreParts(
            value=value,
            answer=a_final if rec.probe == "selfcommit" else task_answer,
            explanation=self.explanation(value, curves, a_final),
            metadata=metadata,
        )
