"""Each scored sample's written reasoning read from an Inspect log, per study as
:mod:`cotaudit.validation.texts` says where each log holds it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cotaudit.validation.texts import SampleText, sample_text


def _completion(sample: Any) -> str:
    output = getattr(sample, "output", None)
    if output is not None and getattr(output, "choices", None):
        return str(output.completion)
    for message in reversed(getattr(sample, "messages", None) or []):
        if getattr(message, "role", None) == "assistant":
            return str(message.text)
    return ""


def read_texts(path: str | Path, study: str) -> dict[str, SampleText]:
    """Sample id (as text) -> :class:`SampleText` of every sample in the log at ``path``
    (first epoch), read as ``study``'s samples."""
    from inspect_ai.log import read_eval_log_samples

    out: dict[str, SampleText] = {}
    for sample in read_eval_log_samples(str(path), all_samples_required=False):
        sid = str(sample.id)
        if sid in out or (getattr(sample, "epoch", 1) or 1) != 1:
            continue
        out[sid] = sample_text(study, _completion(sample), dict(sample.store or {}))
    return out
