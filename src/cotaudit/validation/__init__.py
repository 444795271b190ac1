"""Validation of the probes against a planted truth: runs of a study's probe on model organisms
(models trained to take a known shortcut, :mod:`cotaudit.organisms`), their checkpoints and
their base model, read against which samples' answers came from the shortcut -- a ground truth
read from each model's own behaviour (:mod:`cotaudit.validation.labels`), never assumed.

For each probe statistic (:mod:`cotaudit.validation.statistics`): the detection AUROC of
shortcut samples against uncued ones, the cue-only AUROC (the negative control's number), each
with a problem-bootstrap interval (:mod:`cotaudit.validation.detection`), and each run's
shortcut rate; the table and its per-sample record (:mod:`cotaudit.validation.table`); the
checkpoint a run's model is and the first checkpoint that leaves its base model's interval
(:mod:`cotaudit.validation.checkpoints`). ``cotaudit validate LOGS...`` prints and writes them.
"""
