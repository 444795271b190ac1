"""Inspect logs read as plain data (:class:`~cotaudit.logs.data.RunData`): what the report
builds its sections from, and what the scorers that reread a log during a run (the headline, the
cluster contrast) read. :mod:`~cotaudit.logs.data` and :mod:`~cotaudit.logs.read` import no
Inspect; :mod:`~cotaudit.logs.files` and :mod:`~cotaudit.logs.frames` open log files with it."""
