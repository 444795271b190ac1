"""A study's metric table, and the compact metric set: the keys the terminal and the viewer show.

A study declares each run metric once, in its ``METRICS`` table
(``cotaudit.studies.<study>.metrics``): a :class:`MetricSpec` names the metric, says what it
computes from the scored samples and which options it takes (with their defaults). The Inspect
``@metric`` functions (:func:`cotaudit.scorers.metric_table.inspect_metrics`), the report's
recomputation (:meth:`MetricTable.recompute`) and the compact set's sources
(:meth:`MetricTable.full_metrics_of`) are all generated from that table.

Every compact key is a key of a study's full metric tables, with the same name and the same
value (the compact metrics select from the tables the full set computes); ``-T metrics=all``
logs the full tables instead. Two rules:

- the headline keys of a study, and the cluster F1 with its n and interval, are always present
  (NaN when the run has nothing to compare, or the clustering is degenerate); each headline's
  keys come together in the order of :meth:`cotaudit.display.headline.HeadlineSpec.keys` (statistic,
  n, interval), so its n sits beside it in the viewer's title bar and the terminal summary;
- any other key whose value is NaN (an empty stratum, e.g. no both-correct problems or a
  condition not run) is left out, so the compact set shows no ``nan`` rows; the report says
  ``n = 0`` there instead;
- a run logs at most :data:`COMPACT_MAX_KEYS` compact keys per curve estimator it reads (the
  cluster F1's included): a screenful in the terminal. ``tests/test_compact_rules.py`` checks
  these rules on every study's key lists, in the fast tier.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cotaudit.display.headline import HeadlineSpec

# the table types are generic (the cluster and probe packages declare tables too)
from cotaudit.scores import MetricSpec as MetricSpec
from cotaudit.scores import MetricTable as MetricTable
from cotaudit.scores import Table as Table

COMPACT_MAX_KEYS = 30
"""The most compact keys a run logs per curve estimator it reads (sampled, exact)."""

METRIC_SETS = ("compact", "all")
"""Values of the tasks' ``-T metrics`` parameter."""


def parse_metric_set(value: str) -> str:
    """The ``-T metrics`` value, checked: ``compact`` (default) or ``all``."""
    text = str(value).strip().lower()
    if text not in METRIC_SETS:
        raise ValueError(f"-T metrics: must be one of {', '.join(METRIC_SETS)}, got {value!r}")
    return text


# --- cluster F1 -------------------------------------------------------------------------------


def cluster_headline_spec(
    prefix: str = "cluster", unit: str = "unit", units: str = "units"
) -> HeadlineSpec:
    """The cluster F1 of a cluster metric with key stem ``prefix``, over its ``n_units``
    independent units (``unit``: what one is), with its unit-bootstrap interval; an F1 lies
    in [0, 1]."""
    return HeadlineSpec(
        f"{prefix}_f1",
        f"{prefix}_n_units",
        unit,
        units,
        interval=(f"{prefix}_f1_ci_low", f"{prefix}_f1_ci_high"),
        bounds=(0.0, 1.0),
    )


def cluster_compact_keys(all_keys: Sequence[str]) -> list[str]:
    """Of a cluster metric's keys (``cotaudit.cluster_f1.metric_keys(prefix)``, whose first three
    are ``{prefix}_f1``, ``_precision``, ``_recall``), the F1, its n and its interval (the keys
    of :func:`cluster_headline_spec`)."""
    return cluster_headline_spec(all_keys[0].removesuffix("_f1")).keys()


# --- what a compact metric selects from ---------------------------------------------------------


def study_tables() -> dict[str, MetricTable]:
    """Each study's metric table, by study name: the ``METRICS`` of every
    ``cotaudit.studies.<study>.metrics`` module (found by name, so a new study's table is found
    without a list to edit)."""
    import importlib
    import pkgutil

    import cotaudit.studies

    out: dict[str, MetricTable] = {}
    for info in pkgutil.iter_modules(cotaudit.studies.__path__):
        if not info.ispkg:
            continue
        try:
            module = importlib.import_module(f"cotaudit.studies.{info.name}.metrics")
        except ModuleNotFoundError:
            continue
        table = getattr(module, "METRICS", None)
        if isinstance(table, MetricTable):
            out[info.name] = table
    return out


def full_metrics_of(name: str, options: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The full metrics ``(name, options)`` whose tables the compact metric ``name`` (logged
    with ``options``) selects from, as ``-T metrics=all`` attaches them, from the study table
    that declares it; [] for any other metric. ``cotaudit report`` recomputes these for a
    compact log, so it builds every table from the per-sample scores whichever set was
    logged."""
    for table in study_tables().values():
        if name in table:
            return table.full_metrics_of(name, options)
    return []
