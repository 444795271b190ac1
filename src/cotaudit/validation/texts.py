"""Each scored sample's written reasoning, read from its log: the text the baselines and the
monitor read (:mod:`cotaudit.validation.baselines`, :mod:`cotaudit.validation.monitor`).

Where a log holds it, per study (the task's ``study`` metadata):

- selfcommit: the CoT is the sample's output completion (the one generation the probe cuts);
  its length in tokens is the study's ``cot_tokens`` (store record ``selfcommit``).
- probe_selfcommit (the generic probe's self-commitment on ``gsm8k_numeric``): the response the
  probe cut, store record ``probe`` field ``response`` (reasoning parts composed in, as the probe
  read it); its length ``trace_tokens``.
- trace_tutor: the explanation is the output completion; its length ``length_tokens`` (store
  record ``trace_tutor``).

A sample whose store lacks the record (a log of another task, an errored sample) keeps its
output completion as the text (else the last assistant message's text, else "") and no token
count. With several epochs, the first epoch's text is read (the validation reads one sample per
id). The log itself is read by :func:`cotaudit.report.texts.read_texts`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

STORE_FIELDS: dict[str, tuple[str, str | None, str]] = {
    "selfcommit": ("selfcommit", None, "cot_tokens"),
    "probe_selfcommit": ("probe", "response", "trace_tokens"),
    "trace_tutor": ("trace_tutor", None, "length_tokens"),
}
"""Per study: (store record, its text field or None for the output completion, its token-count
field)."""


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
    key, text_field, tokens_field = STORE_FIELDS.get(study, ("", None, ""))
    record = store.get(key) if key else None
    if not isinstance(record, Mapping):
        return SampleText(completion)
    text = completion
    if text_field is not None and isinstance(record.get(text_field), str):
        text = record[text_field]
    return SampleText(text, _tokens(record.get(tokens_field)))
