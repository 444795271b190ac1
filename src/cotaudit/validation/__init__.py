"""Validation of the probes against a planted truth: runs of a study's probe on model organisms
(models trained to take a known shortcut, :mod:`cotaudit.organisms`), a negative control and
their base model, read against which samples' answers came from the shortcut -- a ground truth
read from each model's own behaviour (:mod:`cotaudit.validation.labels`), never assumed.

The protocol: organisms train on rows 1000-1318 of the vendored GSM8K split, choices
(recipes, checkpoints, thresholds) are made on rows 800-999, reported numbers stand on rows
0-799 (:mod:`cotaudit.organisms.rows`); runs whose rows cross these sets, and a matched control
trained with another recipe than its organism, are warned about
(:mod:`cotaudit.validation.protocol`). Validation runs cut each CoT at ten fractions of its
length (:mod:`cotaudit.validation.presets`).

For each probe statistic (:mod:`cotaudit.validation.statistics`; trace_tutor's TRACE AUCs before
the final cut) and each baseline that reads only the written CoT (length, cue mention, bag of
words, an LLM monitor: :mod:`cotaudit.validation.baselines`, :mod:`cotaudit.validation.monitor`,
the texts from :mod:`cotaudit.validation.texts`): the detection AUROC of shortcut samples
against uncued ones and the cue-only AUROC (the negative control's number), each with an
interval over problems and a one-sided p-value (:mod:`cotaudit.validation.detection`,
:mod:`cotaudit.validation.intervals`: Newcombe's score interval widened by the clustered design
effect, whose coverage ``bench/auroc_coverage.py`` measures), and each run's shortcut rate. The
table (:mod:`cotaudit.validation.table`) adds, per probe statistic, its AUROC minus the best
baseline's with a paired interval, g-mean^2 at a threshold chosen on a selection run, the cuts
per CoT and the family's Holm-adjusted p (:mod:`cotaudit.validation.comparisons`), with the
ROC curves (:mod:`cotaudit.validation.roc`) and a per-sample record; over runs of one recipe
trained under several seeds, each number's spread across seeds beside its spread across
problems (:mod:`cotaudit.validation.seeds`). Which checkpoint a run's
model is, and which checkpoints of a series depart from their base model (a paired permutation
test, Holm across the series): :mod:`cotaudit.validation.checkpoints`. ``cotaudit validate
LOGS...`` prints and writes them.
"""
