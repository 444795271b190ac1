"""One package per study: its prompts, its typed per-sample record, its statistics.

Pure library (no Inspect): ``tasks/``, ``solvers/`` and ``scorers/`` are the Inspect glue that
runs a study, ``cotaudit.report.<study>`` its report section (kept in the report package: it
builds the report's tables and figures, and the report names its sections, so a section here
would close a package loop report <-> studies).
"""
