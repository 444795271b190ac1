"""Contrastive cluster F1 and its contrast, for any study: pure logic, no Inspect, no study.

- :mod:`cotaudit.cluster.f1`: the metric's definition on a feature matrix (2-means, positive
  cluster fixed by the declared direction, unit-level bootstrap interval, threshold baseline).
- :mod:`cotaudit.cluster.scores`: the same on scored samples (features from the scores, class
  and unit from the sample metadata), for a :class:`~cotaudit.cluster.scores.ClusterHypothesis`.
- :mod:`cotaudit.cluster.metrics`: the run metric, declared once in a metric table.
- :mod:`cotaudit.cluster.contrast`: per-point notes, the run summary, the contrast model's
  prompt, and the registry through which a study makes its own cluster metric known.

A study passes in everything specific to it: class names, features and their declared
directions, the key prefix, and (for points that are parts of a sample) the point kinds. The
Inspect glue is :mod:`cotaudit.scorers.cluster_f1` (the metric, generated from the table) and
:mod:`cotaudit.scorers.cluster_contrast` (writing the contrast into a log); the report section
is :mod:`cotaudit.report.cluster`.
"""
