"""Context-masked TRACE tutor: prompts, the probe record and the run statistics.

``prompts`` (tutor prompts per condition, the answer key, the forced-answer tag), ``record``
(what the solver stores per sample and the scorer reads), ``stats`` (TRACE AUC, first pass,
Tables II-V, Delta_context, paired bootstrap statistics, wrong-key anchoring).
"""
