"""Self-commitment latency: prompts, the probe record, c(t) schedule and run statistics.

``prompts`` (the honest and hinted chat prompts, the forced-answer tag), ``record`` (what the
solver stores per sample and what the scorer logs as score metadata), ``schedule`` (adaptive
prefix schedule), ``stats`` (honest-vs-hinted statistics from per-sample scores). The c(t)
curve and its summaries are :mod:`cotaudit.probing.curves`, shared with the generic probe core.
"""
