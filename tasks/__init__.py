"""The cotaudit tasks, one file per study (installed as ``cotaudit.tasks``; each file also runs
as ``inspect eval tasks/<file>.py``). Registered with Inspect as ``cotaudit/<task>`` through
the ``inspect_ai`` entry point (:mod:`cotaudit._registry`)."""
