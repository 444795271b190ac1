"""What every study's report section says first: its headline statistics in words
(:func:`cotaudit.display.headline.assess`), how much of the task ran, and "no data" where nothing
can be shown."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from cotaudit.cluster.f1 import DEFAULT_PREFIX, why_f1_undefined
from cotaudit.display.headline import MIN_UNITS, assess, ran_line, ran_record, specs_of
from cotaudit.logs.data import RunData
from cotaudit.stats import or_nan


def f1_reasons(contrasts: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> dict[str, str]:
    """Why each NaN cluster F1 is NaN, by its metric key (``<prefix>_f1``), from the
    (options, contrast) of each cluster metric (:func:`cotaudit.cluster.f1.why_f1_undefined`;
    ``contrast["metrics"]`` holds the default-prefix keys)."""
    out = {}
    for options, contrast in contrasts:
        f1 = or_nan((contrast.get("metrics") or {}).get(f"{DEFAULT_PREFIX}_f1"))
        why = why_f1_undefined(f1, contrast.get("degenerate"))
        if why:
            out[f"{options.get('prefix', DEFAULT_PREFIX)}_f1"] = why
    return out


def headline_text(
    run: RunData, values: Mapping[str, float], reasons: Mapping[str, str] | None = None
) -> str | None:
    """The section's headline block: one line per headline the log's task metadata lists, read
    from ``values`` (the recomputed metrics); None for a log that lists none."""
    specs = specs_of(run.task_metadata)
    if not specs:
        return None
    lines = [f"- {assess(s, values, (reasons or {}).get(s.metric)).line}" for s in specs]
    return (
        f"**Headline statistics**, each with its n (independent units; fewer than {MIN_UNITS}, "
        "or an interval spanning every value the statistic can take, is too small to mean "
        "anything):\n\n" + "\n".join(lines)
    )


def ran_text(run: RunData) -> str:
    """How much of the task ran: ``""`` when every sample did, else e.g. ``"This run: ran 4 of
    the task's 100 samples (--limit 4)."``."""
    record = ran_record(run.n_samples, int(run.task_samples or run.n_samples), run.cut)
    return f"This run: {ran_line(record)}." if record else ""


def problems_setting(given: Any, problems_run: int, cut: str | None) -> Any:
    """The ``problems`` value of a settings line: ``given`` (the task argument Inspect logs, or
    the paper configuration's), or, when ``cut`` (``--limit`` / ``--sample-id``) ran fewer,
    what ran beside it: ``"2 (of 50 asked; --limit 4)"``."""
    if cut is None or not isinstance(given, int) or problems_run >= given:
        return given
    return f"{problems_run} (of {given} asked; {cut})"


def no_data_text(what: str) -> str:
    """The line a section writes in place of tables and figures with nothing to show."""
    return f"**No data**: {what}; no tables or figures of it."


__all__ = ["f1_reasons", "headline_text", "no_data_text", "problems_setting", "ran_text"]
