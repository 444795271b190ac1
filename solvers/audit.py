"""The audit trail of a probe sweep in the sample's Inspect transcript.

One span (:func:`probe_span`, name ``probe sweep``, type ``probe``) holds a sample's sweep; in
it, per prompt swept, an info event with its header, then the model events of engines whose
requests go through Inspect's ``generate`` (the assistant-prefill path of
:class:`cotaudit.engine.inspect_prefill.InspectPrefillEngine`; the local engines and a server's
completions endpoint make none), then one info event per cut (the exact estimator's reading of
a prompt likewise: its header, then one event per cut); the records are made by
:mod:`cotaudit.probing.recorded_sweep` and written here (:func:`record_event`). The generic
probe's task scorer
adds, per prompt, a span ``probe verdicts`` (type ``probe``) with one info event per cut: its
verification of the answers. The records are :mod:`cotaudit.probing.audit`'s; each event's
``source`` is :func:`cotaudit.probing.audit.label` of its record (``probe own t=30: 2/5
match``), the event's title in ``inspect view``.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from inspect_ai.log import transcript
from inspect_ai.util import span

from cotaudit.probing.audit import label, verdict_record

SPAN_NAME = "probe sweep"
SPAN_TYPE = "probe"
VERDICT_SPAN_NAME = "probe verdicts"


def probe_span() -> AbstractAsyncContextManager[None]:
    """The span a sample's probe sweep is recorded in."""
    return span(SPAN_NAME, type=SPAN_TYPE)


def verdict_span() -> AbstractAsyncContextManager[None]:
    """The span a task scorer's verification of one prompt's forced answers is recorded in."""
    return span(VERDICT_SPAN_NAME, type=SPAN_TYPE)


def note(text: str) -> None:
    """A plain-text info event in the sweep (why nothing was probed)."""
    transcript().info(text, source="probe")


def record_verdicts(
    context: str,
    positions: Sequence[int],
    canonical: Sequence[Sequence[Any]],
    values: Sequence[Sequence[float]],
    reference: Any = None,
) -> None:
    """One info event per cut with a task scorer's verification of its answers (``reference``:
    what a match is, see :func:`cotaudit.probing.audit.verdict_record`)."""
    for t, row, vals in zip(positions, canonical, values, strict=True):
        record_event(
            verdict_record(context=context, t=t, canonical=row, values=vals, reference=reference)
        )


def record_event(record: dict[str, Any]) -> None:
    """One info event in the sample's transcript holding ``record``, titled with its label
    (:func:`cotaudit.probing.audit.label`)."""
    transcript().info(record, source=label(record))
