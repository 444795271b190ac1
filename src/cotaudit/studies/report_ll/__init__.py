"""Report log-likelihood: a frozen model scores fixed honest and concealing reports.

``fixtures`` (the scenario generator: schema with the prompts, generator, audits; the committed
corpus is ``data/fixtures.jsonl``), ``record`` (what the solver stores per sample: the four
scorings), ``stats`` (differences D_h, D_c, DiD per cell, bootstrap over the independent unit,
register effects, the factorial's main effects, control verdicts, discrimination check),
``paper`` (the study's configuration and published numbers), ``scores`` (the ledger records
rebuilt from scores, metric key sets, the report clustering), ``metrics`` (the metric table:
every run metric with its options, and the compact set), ``settings`` (the task's parameters,
checked), ``versions`` (the task's version, and how the report reads the logs of each),
``recorded`` (the study over pairs of recorded transcripts: the pairs file, the context rule,
the run statistics; task ``tasks/report_ll_recorded.py``).
``cotaudit ledger`` is :mod:`cotaudit.report.ledger`; the report section is
:mod:`cotaudit.report.report_ll`.
"""
