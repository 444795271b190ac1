"""Each scored sample's written reasoning, read from its log: the text the baselines and the
monitor read (:mod:`cotaudit.validation.baselines`, :mod:`cotaudit.validation.monitor`).

Where a log holds it is its study's (the task's ``study`` metadata):
:attr:`cotaudit.studies.study.Study.text`, the store record, its text field (none: the output
completion is the text) and its token-count field (selfcommit: the output completion,
``cot_tokens``; the generic probe's self-commitment: the response it cut, ``trace_tokens``;
trace_tutor: the explanation, ``length_tokens``).

A sample whose store lacks the record (a log of another task, an errored sample, a study no
validation reads) keeps its output completion as the text (else the last assistant message's
text, else "") and no token count. With several epochs, the first epoch's text is read (the
validation reads one sample per id). The log itself is read by
:func:`cotaudit.report.texts.read_texts`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cotaudit.studies.registry import study_named


@dataclass(frozen=True)
class SampleText:
    """One sample's written reasoning and its length in tokens as the study recorded it (None
    where the log holds none)."""

    text: str
    tokens: int | None = None


def _tokens(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if float(value).is_integer() and value >= 0 else None


def sample_text(study: str, completion: str, store: Mapping[str, Any]) -> SampleText:
    """The text and token count of one sample of ``study`` from its output ``completion`` and
    its ``store`` (module docstring)."""
    found = study_named(study)
    record = None if found is None else store.get(found.text.key)
    if found is None or not isinstance(record, Mapping):
        return SampleText(completion)
    text = completion
    text_field = found.text.text_field
    if text_field is not None and isinstance(record.get(text_field), str):
        text = record[text_field]
    return SampleText(text, _tokens(record.get(found.text.tokens_field)))
