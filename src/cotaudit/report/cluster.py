"""Contrastive cluster F1 tables of any study, recomputed from the scores with the metric's own
functions (:mod:`cotaudit.cluster`); a study's section passes its metric options in."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from cotaudit.cluster.f1 import metric_keys
from cotaudit.cluster.metrics import METRICS, options_of
from cotaudit.cluster.scores import ClusterHypothesis, cluster_contrast_from_scores
from cotaudit.display.text import md_code, report_text
from cotaudit.report.tables import Cell, Table, count_cell, fmt, fmt_ci
from cotaudit.stats import or_nan


def contrast_and_metrics(
    samples: Sequence[Any], options: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, float]]:
    """The contrast (``cluster_contrast_from_scores``) and the metrics of the cluster metric
    (:data:`cotaudit.cluster.metrics.METRICS`) with the logged ``options`` on ``samples``, from a
    single clustering; every key of ``metric_keys(prefix)`` (the check compares the logged
    ones)."""
    o = options_of(options)
    contrast = cluster_contrast_from_scores(
        samples, ClusterHypothesis.of(o), n_boot=o["n_boot"], seed=o["seed"]
    )
    # contrast["metrics"] holds result.metrics() under the default prefix, NaN written as None
    values = [or_nan(v) for v in contrast["metrics"].values()]
    metrics = dict(zip(metric_keys(o["prefix"]), values, strict=True))
    return contrast, metrics


def recompute(
    samples: Sequence[Any], metric_defs: Iterable[Any]
) -> tuple[dict[str, float], list[tuple[dict[str, Any], dict[str, Any]]]]:
    """Every cluster metric among ``metric_defs`` (``.name``, ``.options``: what a log
    records) recomputed on ``samples`` (:func:`contrast_and_metrics`): the metrics of all, and
    each one's (options, contrast) in log order; other metrics skipped."""
    out: dict[str, float] = {}
    contrasts: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for d in metric_defs:
        if d.name in METRICS:
            contrast, metrics = contrast_and_metrics(samples, d.options)
            out.update(metrics)
            contrasts.append((dict(d.options), contrast))
    return out, contrasts


def cluster_tables(
    title: str, contrast: Mapping[str, Any], metrics: Mapping[str, float], prefix: str
) -> list[Table]:
    """Metrics table, the two clusters (nearest samples, feature means), the feature ranking."""
    keys = metric_keys(prefix)
    m = dict(
        zip(
            [k.removeprefix(prefix + "_") for k in keys[:10]],
            (metrics[k] for k in keys[:10]),
            strict=True,
        )
    )
    thr = [metrics[k] for k in keys[10:13]]
    n_raw = float(metrics.get(f"{prefix}_n_units", math.nan))
    n_units = None if math.isnan(n_raw) else int(round(n_raw))
    neg = contrast.get("negative_class", "rest")
    summary = Table(
        f"{title}: contrastive cluster F1 ({contrast['positive_class']} vs {neg})",
        ["rule", "F1", "precision", "recall", "optimistic F1", "chance F1", "ARI"],
    )
    summary.add(
        Cell("2-means, declared direction", "2-means, positive cluster by declared direction"),
        Cell(m["f1"], fmt_ci(m["f1"], m["f1_ci_low"], m["f1_ci_high"], n=n_units)),
        m["precision"],
        m["recall"],
        m["f1_optimistic"],
        m["f1_chance"],
        m["ari"],
    )
    rule = contrast["threshold_rule"]
    summary.add(
        Cell(
            "threshold",
            f"threshold on {report_text(rule['feature'])} (direction {rule['direction']:+d})",
        ),
        thr[0],
        thr[1],
        thr[2],
        math.nan,
        math.nan,
        math.nan,
    )
    boot = contrast["bootstrap"]
    summary.note = (
        f"{int(m['n_positive'])} {report_text(contrast['positive_class'])} and "
        f"{int(m['n_negative'])} {report_text(neg)} samples; features "
        f"{report_text(', '.join(contrast['features']))}; F1 interval: "
        f"{boot['confidence']:.0%} bootstrap {resampling_text(boot)}, {boot['n_valid']} of "
        f"{boot['n_boot']} resamples valid."
        + (
            f" Degenerate: {report_text(contrast['degenerate'])}."
            if contrast.get("degenerate")
            else ""
        )
    )
    tables = [summary]
    clusters = contrast.get("clusters")
    if clusters:
        features = list(contrast["features"])
        t = Table(
            "Clusters: nearest samples to each centroid and feature means",
            ["cluster", "size", contrast["positive_class"], neg, "nearest samples", *features],
            align=["---", "---:", "---:", "---:", "---", *["---:"] * len(features)],
        )
        for name in ("positive", "negative"):
            c = clusters[name]
            t.add(
                name,
                count_cell(c["size"]),
                count_cell(c["n_positive_class"]),
                count_cell(c["n_negative_class"]),
                Cell(c["nearest_ids"], ", ".join(report_text(i) for i in c["nearest_ids"])),
                *(or_nan(c["feature_means"][f]) for f in features),
            )
        tables.append(t)
        r = Table(
            "Distinguishing features (standardised centroid difference, positive minus "
            "negative cluster)",
            ["feature", "std. difference", "declared direction", "agrees"],
        )
        for row in contrast["feature_ranking"] or []:
            r.add(
                row["feature"],
                row["std_diff"],
                Cell(row["declared_direction"], f"{row['declared_direction']:+d}"),
                row["agrees_with_direction"],
            )
        tables.append(r)
    return tables


def resampling_text(boot: Mapping[str, Any]) -> str:
    """What the interval resampled: units (with duplicates collapsed) or, where the metric
    declared no unit, single samples."""
    unit = boot.get("unit", "sample")
    if unit == "sample":
        return (
            "resampling single samples within each class (row level: too narrow when samples "
            "share a problem)"
        )
    collapsed = boot.get("n_collapsed", 0)
    dup = f"; {collapsed} duplicate sample(s) collapsed" if collapsed else ""
    return f"resampling {boot.get('n_units')} units ({md_code(unit)}){dup}"


def add_cluster_tables(
    sec: Any, options: Mapping[str, Any], contrast: Mapping[str, Any], title: str = "Cluster"
) -> None:
    """Append the cluster tables of one metric to a section (keys ``<prefix>``,
    ``<prefix>_clusters``, ``<prefix>_features``)."""
    prefix = options_of(options)["prefix"]
    keys = (prefix, f"{prefix}_clusters", f"{prefix}_features")
    # a degenerate or tied clustering has the metrics table alone
    tables = cluster_tables(title, contrast, sec.recomputed, prefix)
    for key, table in zip(keys, tables, strict=False):
        sec.table(key, table)
    logged = (sec.run.log_metadata.get("cluster_contrast") or {}).get(prefix) if sec.run else None
    described = (logged or {}).get("contrast_model")
    if described:
        sec.text(contrast_model_text(described))


def contrast_model_text(described: Mapping[str, Any]) -> str:
    """The contrast model's description of the two clusters (as written into the log by
    ``cotaudit.scorers.cluster_contrast``), quoted; or why there is none."""
    head = (
        f"**Contrast model** {md_code(described['model'])} on what distinguishes the clusters' "
        "texts"
    )
    if "description" not in described:
        return f"{head}: no description ({report_text(described.get('error', 'unknown error'))})."
    quoted = "\n".join(
        f"> {report_text(line)}" for line in str(described["description"]).strip().splitlines()
    )
    return f"{head} (cluster A = positive, B = negative):\n\n{quoted or '> (empty)'}"


__all__ = [
    "cluster_tables",
    "contrast_and_metrics",
    "contrast_model_text",
    "recompute",
    "fmt",
]
