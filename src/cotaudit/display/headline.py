"""A run's headline statistics, each beside its sample size, and what they can be said to show.

A headline is a statistic among the run's metrics (:class:`HeadlineSpec`: its key, the key of
its n, the number of independent units it rests on, and, where it has one, its 95% interval).
Each study logs its headlines in the task metadata (``metadata["headlines"]``, a list of
:meth:`HeadlineSpec.record`) and its metric sets list every headline's keys together, in the
order of :meth:`HeadlineSpec.keys` (statistic, n, interval), so the n sits beside the statistic
wherever the metrics are listed (the viewer's title bar, the terminal summary).

:func:`assess` reads a headline from a run's metric values and says, in one line, what it is
and whether it means anything:

- **not computed**: the statistic is NaN; the line says why (a reason the caller knows, such as
  a degenerate clustering; else, with n = 0, what was left out or the spec's
  ``undefined_why``; else the spec's ``undefined_why`` or "undefined on these data", with its
  n and what was left out);
- **too small**: ``n < MIN_UNITS`` ("too few to mean anything"), or its interval covers every
  value the statistic can take (``bounds``, e.g. [0, 1] for an AUROC or an F1: "says nothing"),
  or the interval has no width (low = high over n >= 2 units: every resample gives the same
  value, "degenerate", said with the bound it sits at, if it does);
- otherwise the statistic, its interval and its n.

An interval is printed only over at least ``MIN_INTERVAL_UNITS`` (2) units: over one unit every
bootstrap resample is that unit, so the logged bounds equal the estimate ("no interval").

Counts are printed as integers (``n = 1 problem``), values by
:func:`cotaudit.display.text.fmt_number` (at most 3 decimals, trailing zeros dropped).
:func:`ran_record` says how many of the task's samples (and problems) ran when ``--limit`` or
``--sample-id`` cut them (:func:`cut_text`); :func:`ran_line` in words.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cotaudit.display.text import fmt_number

MIN_UNITS = 10
"""A headline on fewer independent units than this is too small to mean anything."""

MIN_INTERVAL_UNITS = 2
"""An interval over fewer independent units than this is none: a bootstrap over one unit
draws that unit every time, so its "interval" is the estimate repeated, not a range of
uncertainty. It is not printed (headline lines, report tables)."""


def too_few(n: int) -> bool:
    """True when ``n`` units are too few to mean anything (``n < MIN_UNITS``)."""
    return n < MIN_UNITS


def has_interval(n: int | None) -> bool:
    """True when an interval over ``n`` units is printed (``n >= MIN_INTERVAL_UNITS``; n
    unknown: printed as logged)."""
    return n is None or n >= MIN_INTERVAL_UNITS


HEADLINES_KEY = "headlines"
"""Task metadata key of a run's headlines (a list of :meth:`HeadlineSpec.record`)."""

NOT_COMPUTED, TOO_SMALL, OK = "not computed", "too small", "ok"
"""The three verdicts of :func:`assess`."""


@dataclass(frozen=True)
class HeadlineSpec:
    """One headline statistic of a run: where it and its sample size sit among the metrics.

    - ``metric``: the statistic's metric key; ``n``: the key of the number of independent units
      it rests on; ``unit`` / ``units``: what one unit is, singular and plural;
    - ``interval``: the keys of its 95% interval (low, high), or None when it has none;
    - ``bounds``: the values the statistic can take (an AUROC or F1: (0, 1)), or None;
    - ``dropped`` / ``dropped_why``: the key counting what was left out, and why it was;
      ``dropped_unit`` / ``dropped_units``: what it counts, singular and plural (None: units);
    - ``undefined_why``: when the statistic is undefined (an AUROC with no value on one side, a
      TRACE AUC over one cut), said when it is NaN; empty: "undefined on these data";
    - ``degenerate_why``: what a run whose every resample gives one value means for this
      statistic (trace_tutor: no forced answer, or every one, matched the gold answer), said
      beside "degenerate".
    """

    metric: str
    n: str
    unit: str
    units: str
    interval: tuple[str, str] | None = None
    bounds: tuple[float, float] | None = None
    dropped: str | None = None
    dropped_why: str = ""
    dropped_unit: str | None = None
    dropped_units: str | None = None
    undefined_why: str = ""
    degenerate_why: str = ""

    def keys(self) -> list[str]:
        """The headline's metric keys in the order the metric sets list them: the statistic,
        its n, its interval."""
        return [self.metric, self.n, *(self.interval or ())]

    def record(self) -> dict[str, Any]:
        """The task metadata entry (one element of ``metadata["headlines"]``)."""
        return {
            "metric": self.metric,
            "n": self.n,
            "unit": self.unit,
            "units": self.units,
            "interval": list(self.interval) if self.interval else None,
            "bounds": list(self.bounds) if self.bounds else None,
            "dropped": self.dropped,
            "dropped_why": self.dropped_why,
            "dropped_unit": self.dropped_unit,
            "dropped_units": self.dropped_units,
            "undefined_why": self.undefined_why,
            "degenerate_why": self.degenerate_why,
            "min_units": MIN_UNITS,
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> HeadlineSpec:
        """The spec of a :meth:`record`."""
        interval, bounds = record.get("interval"), record.get("bounds")
        return cls(
            metric=str(record["metric"]),
            n=str(record["n"]),
            unit=str(record["unit"]),
            units=str(record["units"]),
            interval=(str(interval[0]), str(interval[1])) if interval else None,
            bounds=(float(bounds[0]), float(bounds[1])) if bounds else None,
            dropped=record.get("dropped"),
            dropped_why=str(record.get("dropped_why") or ""),
            dropped_unit=record.get("dropped_unit"),
            dropped_units=record.get("dropped_units"),
            undefined_why=str(record.get("undefined_why") or ""),
            degenerate_why=str(record.get("degenerate_why") or ""),
        )

    def count_text(self, n: int) -> str:
        """``"1 problem"``, ``"2 problems"``."""
        return f"{n} {self.unit if n == 1 else self.units}"

    def dropped_text(self, n: int) -> str:
        """``"1 problem"``, ``"2 samples"``: ``n`` of what ``dropped`` counts."""
        unit, units = self.dropped_unit or self.unit, self.dropped_units or self.units
        return f"{n} {unit if n == 1 else units}"


@dataclass(frozen=True)
class HeadlineNote:
    """What :func:`assess` found: the values read, the verdict and the line that says it."""

    spec: HeadlineSpec
    value: float
    n: int | None
    low: float
    high: float
    verdict: str
    line: str
    tag: str | None = None
    """The verdict in a few words for the log's tags (the viewer's title area shows them),
    e.g. ``"auroc/tau_0.8: too few (n = 1)"``; None for a headline that means something."""


def _get(metrics: Mapping[str, Any], key: str | None) -> float:
    if key is None or metrics.get(key) is None:
        return math.nan
    try:
        return float(metrics[key])
    except (TypeError, ValueError):
        return math.nan


def spans_bounds(low: float, high: float, bounds: tuple[float, float] | None) -> bool:
    """True when the interval [low, high] covers every value in ``bounds`` (to 1e-9)."""
    if bounds is None or math.isnan(low) or math.isnan(high):
        return False
    return low <= bounds[0] + 1e-9 and high >= bounds[1] - 1e-9


def assess(
    spec: HeadlineSpec,
    metrics: Mapping[str, Any],
    reason: str | None = None,
    min_units: int = MIN_UNITS,
) -> HeadlineNote:
    """The headline ``spec`` read from a run's metric values (see the module docstring).
    ``reason``: why the statistic is NaN, where the caller knows (e.g. the clustering's)."""
    value, n_raw = _get(metrics, spec.metric), _get(metrics, spec.n)
    n = None if math.isnan(n_raw) else int(round(n_raw))
    low, high = (_get(metrics, k) for k in (spec.interval or (None, None)))
    dropped = _get(metrics, spec.dropped)
    left_out = (
        f"{spec.dropped_text(int(round(dropped)))} left out for {spec.dropped_why}"
        if not math.isnan(dropped) and dropped > 0 and spec.dropped_why
        else ""
    )
    n_text = f"n = {spec.count_text(n)}" if n is not None else f"n unknown (no `{spec.n}`)"
    if math.isnan(value):
        if reason:
            why = f"{reason} ({n_text}{'; ' + left_out if left_out else ''})"
        elif n == 0 and not left_out and spec.undefined_why:
            why = f"{spec.undefined_why} (n = 0 {spec.units})"
        elif n == 0:
            why = f"no {spec.units} to compute it on (n = 0{'; ' + left_out if left_out else ''})"
        else:
            undefined = spec.undefined_why or "undefined on these data"
            why = f"{undefined} ({n_text}{'; ' + left_out if left_out else ''})"
        return HeadlineNote(
            spec,
            value,
            n,
            low,
            high,
            NOT_COMPUTED,
            f"{spec.metric} cannot be computed: {why}",
            f"{spec.metric}: not computed",
        )

    logged = not (math.isnan(low) or math.isnan(high))
    shown = logged and has_interval(n)
    interval = f" (95% CI {fmt_number(low)} to {fmt_number(high)})" if shown else ""
    few = n is not None and n < min_units
    spans = shown and spans_bounds(low, high, spec.bounds)
    flat = shown and n is not None and low == high
    said = []
    if few:
        said.append(f"too few to mean anything (fewer than {min_units} {spec.units})")
    if logged and not shown:
        said.append(f"no interval (one needs at least {MIN_INTERVAL_UNITS} {spec.units})")
    if spans:
        lo, hi = (fmt_number(b) for b in spec.bounds)  # type: ignore[union-attr]
        said.append(f"its interval spans every value it can take ([{lo}, {hi}]): it says nothing")
    if flat:
        at = at_bound(value, spec.bounds)
        said.append(
            f"degenerate: every resample of the {spec.units} gives {fmt_number(value)}"
            + (f", the {at} value it can take" if at else "")
            + (f" ({spec.degenerate_why})" if spec.degenerate_why else "")
        )
    if left_out:
        said.append(left_out)
    line = f"{spec.metric} = {fmt_number(value)}{interval}, {n_text}"
    if said:
        line += ": " + "; ".join(said)
    words = [
        *([f"too few (n = {n})"] if few else []),
        *(["interval spans its range"] if spans else []),
        *(["degenerate"] if flat else []),
    ]
    tag = f"{spec.metric}: {', '.join(words)}" if words else None
    verdict = TOO_SMALL if words else OK
    return HeadlineNote(spec, value, n, low, high, verdict, line, tag)


def at_bound(value: float, bounds: tuple[float, float] | None) -> str | None:
    """``"lowest"`` / ``"highest"`` when ``value`` is a bound of ``bounds`` (to 1e-9), else
    None."""
    if bounds is None or math.isnan(value):
        return None
    if abs(value - bounds[0]) <= 1e-9:
        return "lowest"
    return "highest" if abs(value - bounds[1]) <= 1e-9 else None


def cut_text(limit: Any, sample_id: Any) -> str | None:
    """How Inspect's options cut a task's samples, as its command line says it: ``--limit 4``,
    ``--limit 3-5`` (Inspect stores the range as the 0-based (start, end) ``(2, 5)``),
    ``--sample-id a,b``; None when they did not."""
    parts = []
    if isinstance(limit, (list, tuple)):
        parts.append(f"--limit {int(limit[0]) + 1}-{int(limit[1])}")
    elif limit is not None:
        parts.append(f"--limit {limit}")
    if sample_id is not None:
        ids = sample_id if isinstance(sample_id, (list, tuple)) else [sample_id]
        parts.append(f"--sample-id {','.join(map(str, ids))}")
    return " ".join(parts) or None


RAN_KEY = "ran"
"""Log metadata key of :func:`ran_record`."""


def ran_record(
    samples_run: int,
    task_samples: int,
    cut: str | None,
    problems_run: int | None = None,
    problems_given: int | None = None,
) -> dict[str, Any] | None:
    """What ran when ``cut`` (:func:`cut_text`) left out samples of the task: the samples run,
    of the task's, the cut, and where the task takes ``-T problems`` the problems run (distinct
    ``pair_id`` of the samples run) of those asked; None when every sample ran."""
    if cut is None or samples_run >= task_samples:
        return None
    record: dict[str, Any] = {"samples": samples_run, "of_samples": task_samples, "cut": cut}
    if problems_run is not None and problems_given is not None:
        record |= {"problems": problems_run, "of_problems": problems_given}
    return record


def ran_line(record: Mapping[str, Any]) -> str:
    """A :func:`ran_record` in words: ``"ran 4 of the task's 100 samples (--limit 4): 2 of the
    50 problems"``."""
    line = f"ran {record['samples']} of the task's {record['of_samples']} samples ({record['cut']})"
    if "problems" in record:
        line += f": {record['problems']} of the {record['of_problems']} problems"
    return line


def specs_of(metadata: Mapping[str, Any] | None) -> list[HeadlineSpec]:
    """The headlines a log's task metadata records (``metadata["headlines"]``; [] for none)."""
    return [HeadlineSpec.from_record(r) for r in (metadata or {}).get(HEADLINES_KEY) or []]


__all__ = [
    "HEADLINES_KEY",
    "MIN_INTERVAL_UNITS",
    "MIN_UNITS",
    "NOT_COMPUTED",
    "OK",
    "TOO_SMALL",
    "HeadlineNote",
    "HeadlineSpec",
    "assess",
    "at_bound",
    "has_interval",
    "too_few",
    "RAN_KEY",
    "cut_text",
    "ran_line",
    "ran_record",
    "spans_bounds",
    "specs_of",
]
