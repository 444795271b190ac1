"""A probe's audit trail as a reader of the log finds it: the info events in a sample's
transcript (``sample.events``), inside the ``probe sweep`` and ``probe verdicts`` spans."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cotaudit.probing.audit import ANSWER_CHARS, clipped, label
from cotaudit.solvers.audit import SPAN_NAME, VERDICT_SPAN_NAME


@dataclass
class Audit:
    """The sweep's events by prompt (context): its header, its cut records and its verdict
    records in transcript order; plain-text notes; the number of sweep spans."""

    headers: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    cuts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    verdicts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    sweep_spans: int = 0


def audit_of(sample: Any) -> Audit:
    """Read the audit events of one logged sample."""
    spans = {e.id: e.name for e in sample.events if e.event == "span_begin"}
    audit = Audit(sweep_spans=sum(name == SPAN_NAME for name in spans.values()))
    for e in sample.events:
        if e.event != "info" or spans.get(e.span_id) not in (SPAN_NAME, VERDICT_SPAN_NAME):
            continue
        data = e.data
        if isinstance(data, str):
            audit.notes.append(data)
            continue
        kind = (
            audit.verdicts
            if "canonical" in data
            else audit.headers
            if "positions" in data
            else audit.cuts
        )
        kind.setdefault(data["context"], []).append(data)
        assert e.source == label(data)  # the event's title in the viewer
    return audit


def clipped_rows(rows: list[list[str]]) -> list[list[str]]:
    """Forced answers as a cut record shows them."""
    return [[clipped(a, ANSWER_CHARS) for a in row] for row in rows]
